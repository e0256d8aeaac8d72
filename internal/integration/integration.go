// Package integration marks tests that need real servers, Docker or
// sysbench. `go test -short ./...` skips them (the fast tier: no server, no
// engine reachable); CI runs without -short, where nothing is skipped and a
// missing server, engine or image fails.
package integration

import "testing"

// Require skips tb under -short, naming what it needs.
func Require(tb testing.TB, needs string) {
	tb.Helper()
	if testing.Short() {
		tb.Skipf("integration test (needs %s): runs without -short", needs)
	}
}
