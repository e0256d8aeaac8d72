package explain

import (
	"strings"
	"testing"
)

// The statement's split never shows a negative time between client and
// server: a client beside the server can have its result before the
// server's timer stops.
func TestStatementSplitNeverNegative(t *testing.T) {
	if got := summary(map[string]any{"server_us_per_statement": 40.0, "client_us_per_statement": 100.0}); !strings.Contains(got, "statement 100 µs = server 40 + between 60") {
		t.Fatalf("%q", got)
	}
	got := summary(map[string]any{"server_us_per_statement": 121.1, "client_us_per_statement": 112.8})
	if !strings.Contains(got, "statement 113 µs, server 121: nothing measurable between") || strings.Contains(got, "-") {
		t.Fatalf("%q", got)
	}
}

// A pod's evidence names Kubernetes, its path, its emptyDir (no filesystem
// read back: no dangling "/") and the agent client's CPU.
func TestSummaryOfAPod(t *testing.T) {
	got := summary(map[string]any{"engine": "kubernetes", "network_path": "cluster-ip", "datadir_kind": "emptydir",
		"server_cpu_us_per_txn": 30.0, "client_cpu_us_per_txn": 14.0})
	if got != "kubernetes, cluster-ip, emptydir, server 30 µs CPU/txn, agent client 14 µs CPU/txn" {
		t.Fatalf("%q", got)
	}
	if got := summary(map[string]any{"datadir_kind": "volume", "datadir_fstype": "ext4"}); got != "volume/ext4" {
		t.Fatalf("%q", got)
	}
}
