// Package leakcheck fails a test binary that leaves goroutines of dbduel's
// own code running after its tests (a worker, a reader, a watchdog that
// outlived its run): an equivalent of goleak for the few packages that
// start goroutines, without another dependency.
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ownCode marks a goroutine running dbduel's code.
const ownCode = "github.com/dbduel/dbduel/"

// Main runs the tests, then waits up to grace for dbduel's goroutines to
// end, and exits non-zero listing the ones that did not.
func Main(m *testing.M, grace time.Duration) {
	code := m.Run()
	if code == 0 {
		if left := wait(grace); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "leakcheck: %d goroutine(s) of dbduel's code still running after the tests:\n\n%s\n", len(left), strings.Join(left, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// wait returns the stacks of dbduel's goroutines still running after grace.
func wait(grace time.Duration) []string {
	deadline := time.Now().Add(grace)
	for {
		left := own()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// own are the stacks of the goroutines running dbduel's code, this
// package's own excepted.
func own() []string {
	buf := make([]byte, 1<<20)
	return ownIn(string(buf[:runtime.Stack(buf, true)]))
}

// ownIn are the goroutines of a stack dump that run dbduel's code.
func ownIn(dump string) []string {
	var out []string
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, ownCode) && !strings.Contains(g, ownCode+"internal/leakcheck") {
			out = append(out, g)
		}
	}
	return out
}
