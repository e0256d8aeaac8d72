package cli

import (
	"strings"
	"testing"
)

// The demo's header wraps at words within 80 columns ("4 t" / "hreads" before).
func TestDemoHeaderWrapsAtWords(t *testing.T) {
	lines := demoHeader("dbduel-test/mariadb:10.11.19", &runOptions{commonOptions: commonOptions{threads: "4", timeS: 5}, runsFlag: "3"})
	joined := strings.Join(lines, " ")
	if len(lines) < 2 || !strings.Contains(joined, " 4 threads, 5s per run, 3 interleaved blocks,") {
		t.Fatalf("header %q", lines)
	}
	for _, l := range lines {
		if len([]rune(l)) > 80 || strings.HasPrefix(l, " ") {
			t.Errorf("line %q", l)
		}
	}
}
