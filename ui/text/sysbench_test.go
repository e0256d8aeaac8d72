package text

import (
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
)

// A stalled second: no event completed, 40 queries ran, 8 errors. Rates come
// from the interval's span (1 s), not from events/TPS (0/0).
func TestSysbenchLineRatesFromSpan(t *testing.T) {
	iv := result.Interval{TS: 5, SpanS: 1, Reads: 40, Errors: 8, QPS: 40}
	line := SysbenchIntervalLine(iv, 4, 95)
	if !strings.Contains(line, "(r/w/o: 40.00/0.00/0.00)") || !strings.Contains(line, "err/s: 8.00") {
		t.Fatalf("stalled interval: %s", line)
	}
	half := result.Interval{TS: 1, SpanS: 0.5, Events: 10, Reads: 10, Errors: 2, Reconnects: 1, TPS: 20, QPS: 20}
	if line := SysbenchIntervalLine(half, 1, 95); !strings.Contains(line, "err/s: 4.00 reconn/s: 2.00") {
		t.Fatalf("half-second interval: %s", line)
	}
	var b strings.Builder
	(&PlainPrinter{W: &b}).Event(engine.Event{Kind: engine.EventInterval, Target: "a", Interval: iv})
	if !strings.Contains(b.String(), "err/s 8.00") {
		t.Fatalf("plain: %s", b.String())
	}
}

// Warm-up runs are marked in the block header, so run=1 never appears twice
// unmarked.
func TestSysbenchHeaderMarksWarmupRuns(t *testing.T) {
	var b strings.Builder
	p := &SysbenchPrinter{W: &b}
	p.Event(engine.Event{Kind: engine.EventPhase, Target: "n", Block: 1, Index: 1, Warmup: true, Phase: "warm-up run 1 of 1"})
	p.Event(engine.Event{Kind: engine.EventPhase, Target: "n", Block: 2, Index: 1, Phase: "run 1 of 1"})
	out := b.String()
	if !strings.Contains(out, "# dbduel target=n block=1 run=1 warmup=1\n") || !strings.Contains(out, "# dbduel target=n block=2 run=1\n") {
		t.Fatalf("headers:\n%s", out)
	}
}
