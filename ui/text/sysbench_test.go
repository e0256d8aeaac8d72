package text

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// A stalled second: no event completed, 40 queries ran, 8 errors. Rates come
// from the interval's span (1 s), not from events/TPS (0/0).
func TestSysbenchLineRatesFromSpan(t *testing.T) {
	iv := result.Interval{Figures: result.Figures{Reads: 40, Errors: 8, QPS: 40}, TS: 5, SpanS: 1}
	line := SysbenchIntervalLine(iv, 4, 95)
	if !strings.Contains(line, "(r/w/o: 40.00/0.00/0.00)") || !strings.Contains(line, "err/s: 8.00") {
		t.Fatalf("stalled interval: %s", line)
	}
	half := result.Interval{Figures: result.Figures{Events: 10, Reads: 10, Errors: 2, Reconnects: 1, TPS: 20, QPS: 20}, TS: 1, SpanS: 0.5}
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

// The table's Δ% row is the comparison's estimator (geometric mean of
// per-block ratios), the one its CI and the verdict use: here the ratio of
// arithmetic means is +1.00% while the paired estimate is -5.6%.
func TestRunTableDeltaIsTheVerdictsEstimator(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "a"}, {Name: "b"}}, Plan: result.Plan{Points: []result.Point{{Threads: 1}}}}
	for i, v := range [][2]float64{{300, 330}, {100, 90}, {100, 85}} {
		r.Runs = append(r.Runs,
			result.Run{Target: "a", Block: i + 1, Index: i + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[0], QPS: v[0], P95US: 1000, P99US: 1000}, AvgUS: 1000}},
			result.Run{Target: "b", Block: i + 1, Index: i + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[1], QPS: v[1], P95US: 1000, P99US: 1000}, AvgUS: 1000}})
	}
	stats.Analyze(r)
	var tps result.Comparison
	for _, c := range r.Comparisons {
		if c.Metric == "tps" {
			tps = c
		}
	}
	if tps.DeltaPct >= 0 {
		t.Fatalf("fixture: paired estimate %+.2f%% should be negative", tps.DeltaPct)
	}
	table := RunTable(r)
	want := fmt.Sprintf("%+.2f%%", tps.DeltaPct)
	var deltaRow string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "b ") && strings.Contains(l, "Δ%") {
			deltaRow = l
		}
	}
	if !strings.Contains(deltaRow, want) || strings.Contains(table, "+1.00%") {
		t.Fatalf("Δ%% row %q, want the paired estimate %s\n%s", deltaRow, want, table)
	}
	r.Plan.Points = append(r.Plan.Points, result.Point{Threads: 2})
	if curve := CurveTable(r); !strings.Contains(curve, fmt.Sprintf("(%.2fx [", tps.Ratio)) {
		t.Fatalf("curve table ratio is not the comparison's:\n%s", curve)
	}
}

// A run cut short is shown, marked, and left out of the mean.
func TestRunTableMarksPartialRuns(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "a"}}, Plan: result.Plan{Points: []result.Point{{Threads: 1}}}}
	r.Runs = []result.Run{
		{Target: "a", Block: 1, Index: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 100}, Queries: 1000}},
		{Target: "a", Block: 2, Index: 2, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 200}, Queries: 2000}},
		{Target: "a", Block: 3, Index: 3, Complete: false, Summary: result.Summary{Figures: result.Figures{TPS: 10}, Queries: 10}},
	}
	table := RunTable(r)
	if !strings.Contains(table, "    3*") || !strings.Contains(table, "gmean         1414        0.00     141.42") || !strings.Contains(table, "* cut short") {
		t.Fatalf("table:\n%s", table)
	}
}

// The rows above the Δ% say what they are and agree with it: geometric
// means over the blocks every target completed (the old "mean" rows were
// arithmetic means with unpaired runs: −16.7% above a −29.3% Δ%).
func TestMeanRowsAgreeWithTheDelta(t *testing.T) {
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "c"}}, Plan: result.Plan{Runs: 3, Points: []result.Point{{Threads: 1}}}}
	for b, v := range [][2]float64{{100, 50}, {200, 180}, {150, 90}} {
		r.Runs = append(r.Runs,
			result.Run{Target: "n", Block: b + 1, Index: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[0], QPS: v[0]}, AvgUS: 1}},
			result.Run{Target: "c", Block: b + 1, Index: b + 1, Complete: b < 2, Summary: result.Summary{Figures: result.Figures{TPS: v[1], QPS: v[1]}, AvgUS: 1}})
	}
	stats.Analyze(r)
	table := RunTable(r)
	gn, gc := math.Sqrt(100*200), math.Sqrt(50*180)
	c := r.Comparison("c", "tps", 0)
	if c == nil || math.Abs((gc/gn-1)*100-c.DeltaPct) > 1e-9 {
		t.Fatalf("gmean ratio %.4f%% vs Δ%% %+v", (gc/gn-1)*100, c)
	}
	words := strings.Join(strings.Fields(table), " ")
	for _, want := range []string{fmt.Sprintf("n gmean 0 %.2f %.2f", gn, gn), fmt.Sprintf("c gmean 0 %.2f %.2f", gc, gc), "n 3*", "c 3*",
		"gmean: geometric mean over the 2 block(s) every target completed"} {
		if !strings.Contains(words, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// Every row ends where the header does, the wide CI cells included
	// ([-98.4,+2707.9] once pushed its row past the columns above it).
	var width int
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || (f[0] != "target" && f[0] != "n" && f[0] != "c") {
			continue
		}
		if f[0] == "target" {
			width = utf8.RuneCountInString(line)
		} else if n := utf8.RuneCountInString(strings.TrimRight(line, " ")); n > width || (f[1] != "CI95" && f[1] != "Δ%" && n != width) {
			t.Errorf("row out of line (%d columns, the header %d): %q\n%s", n, width, line, table)
		}
	}
}

// A plan cut short says so first, with why and which blocks never started
// (it said "the others were cut short" of a block that never began).
func TestStopLineNamesTheCauseAndTheBlocksNeverStarted(t *testing.T) {
	r := &result.Result{Plan: result.Plan{Runs: 3, Blocks: [][]string{{"n", "c"}, {"c", "n"}, {"n", "c"}}},
		Error: "target c, run 2 of 3: the container exited with code 137 (killed by SIGKILL)"}
	r.Runs = []result.Run{
		{Target: "n", Block: 1, Index: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 100}}},
		{Target: "c", Block: 1, Index: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 50}}},
		{Target: "c", Block: 2, Index: 2, Complete: false, Summary: result.Summary{Figures: result.Figures{TPS: 5}}},
	}
	want := "stopped before the plan finished: target c, run 2 of 3: the container exited with code 137 (killed by SIGKILL); block 3 of 3 never started"
	if got := StopLine(r); got != want {
		t.Fatalf("stop line %q", got)
	}
	if table := RunTable(r); !strings.HasPrefix(table, want+"\n") {
		t.Fatalf("the table's first line:\n%s", table)
	}
	r.Error = "stopped by a signal during run 2 of 3 of target c; that run is partial and left out of the verdict"
	if got := StopLine(r); !strings.HasPrefix(got, "stopped before the plan finished, by a signal during run 2 of 3") {
		t.Fatalf("stop line %q", got)
	}
	r.Complete, r.Error = true, ""
	if StopLine(r) != "" {
		t.Fatal("a complete plan has no stop line")
	}
}

// The system workloads' table has their own columns: events, events/s and
// MiB/s, not "queries 0 / qps 0.00".
func TestSystemWorkloadTableColumns(t *testing.T) {
	r := &result.Result{Complete: true, Workload: result.Workload{Name: "fileio"}, Targets: []result.Target{{Name: "host"}}, Plan: result.Plan{Points: []result.Point{{Threads: 1}}}}
	r.Runs = []result.Run{{Target: "host", Block: 1, Index: 1, Complete: true,
		Summary: result.Summary{Figures: result.Figures{Events: 5000, TPS: 500}, ReadMiBPerS: 3, WrittenMiBPerS: 4.5, AvgUS: 2000, DurationS: 10}}}
	table := RunTable(r)
	if !strings.Contains(table, "events    events/s      MiB/s") || !strings.Contains(table, "5000      500.00       7.50") || strings.Contains(table, "queries") {
		t.Fatalf("table:\n%s", table)
	}
}

// TPC-C's verdicts lead with NOPM, then TPM; TPS is not a verdict line.
func TestTPCCVerdictsLeadWithNOPM(t *testing.T) {
	r := &result.Result{Complete: true, Workload: result.Workload{Name: "tpcc"}, Targets: []result.Target{{Name: "n"}, {Name: "c"}}, Plan: result.Plan{Runs: 3}}
	for b := 1; b <= 3; b++ {
		for _, name := range []string{"n", "c"} {
			f := map[string]float64{"n": 1, "c": 0.6}[name] * (1 + 0.02*float64(b*b)*map[string]float64{"n": 1, "c": 2}[name])
			r.Runs = append(r.Runs, result.Run{Target: name, Block: b, Index: b, Complete: true, Summary: result.Summary{
				Figures: result.Figures{TPS: 700 * f, QPS: 20000 * f, P95US: 1e4 / f}, AvgUS: 5e3 / f, NOPM: 20000 * f, TPM: 44000 * f}})
		}
	}
	stats.Analyze(r)
	v := Verdicts(r, 0)
	if len(v) != 2 || !strings.Contains(v[0], "nopm (primary)") || !strings.Contains(v[1], "tpm (secondary)") {
		t.Fatalf("verdicts %q", v)
	}
}

// --no-tui: a sweep's verdicts decided together carry the family line,
// once, after the points; one comparison has none.
func TestRunTableSaysTheFamily(t *testing.T) {
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "a"}, {Name: "b"}},
		Plan: result.Plan{Runs: 3, Points: []result.Point{{Threads: 1}, {Threads: 2}}}}
	for pt := range 2 {
		for i, v := range [][2]float64{{100, 80}, {101, 81}, {99, 80}} {
			r.Runs = append(r.Runs,
				result.Run{Target: "a", Point: pt, Block: i + 1, Index: i + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[0], QPS: v[0], P95US: 1000, P99US: 1000}, AvgUS: 1000}},
				result.Run{Target: "b", Point: pt, Block: i + 1, Index: i + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[1], QPS: v[1], P95US: 1000, P99US: 1000}, AvgUS: 1000}})
		}
	}
	stats.Analyze(r)
	table := RunTable(r)
	if n := strings.Count(table, "2 comparisons, Holm-adjusted at α 0.05\n"); n != 1 {
		t.Fatalf("the family line %d times:\n%s", n, table)
	}
	r.Plan.Points = r.Plan.Points[:1]
	r.Runs = slices.DeleteFunc(r.Runs, func(run result.Run) bool { return run.Point == 1 })
	stats.Analyze(r)
	if table := RunTable(r); strings.Contains(table, "Holm") {
		t.Fatalf("one comparison has no family line:\n%s", table)
	}
}

// cpu, memory and fileio speak their own units on every line: events/s and
// MiB/s, no queries, and the CPU read is the benchmark's own.
func TestSystemWorkloadLinesSpeakEvents(t *testing.T) {
	var b strings.Builder
	p := &PlainPrinter{W: &b, System: true}
	iv := result.Interval{TS: 1, SpanS: 1, Figures: result.Figures{Events: 3954, TPS: 3954.94, P95US: 300, P99US: 400},
		Telemetry: result.TelemetryOf(map[string]float64{result.TelServerCPUCores: 1.01})}
	p.Event(engine.Event{Kind: engine.EventInterval, Target: "native", Interval: iv})
	run := result.Run{Index: 1, Summary: result.Summary{DurationS: 2.01, Figures: result.Figures{Events: 7901, TPS: 3932.65, P95US: 300}, AvgUS: 250}}
	p.Event(engine.Event{Kind: engine.EventRunDone, Target: "native", Index: 1, Run: &run})
	out := b.String()
	for _, want := range []string{"events/s   3954.94  MiB/s     0.00", "benchmark cpu 1.01", "native run 1: 7901 events in 2.01s: events/s 3932.65, MiB/s 0.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	for _, never := range []string{"qps", "queries", "tps", "server cpu"} {
		if strings.Contains(out, never) {
			t.Errorf("says %q:\n%s", never, out)
		}
	}
}
