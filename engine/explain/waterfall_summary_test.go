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
