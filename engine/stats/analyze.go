package stats

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/dbduel/dbduel/engine/result"
)

// metric is one compared figure of a run.
type metric struct {
	name           string
	get            func(result.Summary) float64
	higherIsBetter bool
}

var metrics = []metric{
	{"tps", func(s result.Summary) float64 { return s.TPS }, true},
	{"qps", func(s result.Summary) float64 { return s.QPS }, true},
	{"avg", func(s result.Summary) float64 { return s.AvgUS }, false},
	{"p95", func(s result.Summary) float64 { return s.P95US }, false},
	{"p99", func(s result.Summary) float64 { return s.P99US }, false},
	// TPC-C's server-counted figures (zero, and so skipped, elsewhere).
	{"nopm", func(s result.Summary) float64 { return s.NOPM }, true},
	{"tpm", func(s result.Summary) float64 { return s.TPM }, true},
}

// Analyze fills r.Stats (per target) and r.Comparisons (each target vs the
// first, paired by block) from the measured runs, per sweep point, and adds
// a noise warning when a target's runs vary by more than 5%.
func Analyze(r *result.Result) {
	names := r.TargetNames()
	r.Stats = map[string]result.TargetStats{}
	r.PointStats = nil
	r.Comparisons = nil
	points := map[int]bool{}
	for _, run := range r.Runs {
		points[run.Point] = true
	}
	for _, run := range r.Runs {
		if msg := HonestyWarning(run); msg != "" {
			r.Warnings = append(r.Warnings, msg)
		}
		if n := run.Summary.UnservedEvents; n > 0 && !run.Warmup {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s run %d%s: %d arrivals were still queued when the run stopped and are not in its latency (the oldest had waited %.0f ms): the threads could not keep up with %s",
				run.Target, run.Index, pointLabel(r, run.Point), n, run.Summary.UnservedMaxWaitUS/1000, rateSource(r)))
		}
	}
	var all []scored
	for pi := 0; pi < max(len(r.Plan.Points), 1); pi++ {
		if !points[pi] {
			continue
		}
		label := pointLabel(r, pi)
		st, cs, warns := analyzePoint(r, names, pi, label)
		if pi == 0 {
			r.Stats = st
		}
		if len(r.Plan.Points) > 1 {
			r.PointStats = append(r.PointStats, result.PointStats{Point: pi, Threads: r.Plan.Points[pi].Threads,
				TableSize: r.Plan.Points[pi].TableSize, Stats: st})
		}
		all = append(all, cs...)
		r.Warnings = append(r.Warnings, warns...)
	}
	holm(r, all)
	for _, sc := range all {
		r.Comparisons = append(r.Comparisons, sc.finish(r))
	}
	checkAA(r)
	noteCarryOver(r)
	noteNoisyIntervals(r)
	steinShortfall(r)
	for i := range r.Segments {
		seg := &r.Segments[i]
		seg.Comparisons = []result.Comparison{}
		for _, c := range r.Comparisons {
			if c.Point == seg.Point {
				seg.Comparisons = append(seg.Comparisons, c)
			}
		}
	}
	iterationDeltas(r)
}

// noteNoisyIntervals says, in each primary verdict, how many of the
// measured intervals of its two targets at its point were flagged noisy
// (CPU steal, other processes' CPU), and how far the estimate moves
// without the blocks that hold one; it warns once per target and point.
func noteNoisyIntervals(r *result.Result) {
	type key struct {
		target string
		point  int
	}
	flagged, total := map[key]int{}, map[key]int{}
	flaggedBlock := map[key]map[int]bool{}
	for _, run := range r.Completed(result.AnyTarget, result.AnyPoint) {
		k := key{run.Target, run.Point}
		for _, iv := range run.Intervals {
			if iv.Warmup {
				continue
			}
			total[k]++
			if iv.Noise.Flagged {
				flagged[k]++
				if flaggedBlock[k] == nil {
					flaggedBlock[k] = map[int]bool{}
				}
				flaggedBlock[k][run.Block] = true
			}
		}
	}
	for pi := 0; pi < max(len(r.Plan.Points), 1); pi++ {
		for _, n := range r.TargetNames() {
			if k := (key{n, pi}); flagged[k] > 0 {
				r.Warnings = append(r.Warnings, fmt.Sprintf("%s%s: %d of %d measured intervals were flagged noisy (CPU steal or other processes' CPU; intervals[].noise)",
					n, pointLabel(r, pi), flagged[k], total[k]))
			}
		}
	}
	for i, c := range r.Comparisons {
		if !c.Primary {
			continue
		}
		kt, kb := key{c.Target, c.Point}, key{c.Baseline, c.Point}
		if f := flagged[kt] + flagged[kb]; f > 0 {
			r.Comparisons[i].Verdict += fmt.Sprintf("; %d of %d intervals behind it were flagged noisy", f, total[kt]+total[kb])
			r.Comparisons[i].Verdict += sensitivity(r, c, flaggedBlock[kt], flaggedBlock[kb])
		}
	}
}

// sensitivity is the estimate without the blocks holding a flagged
// interval of either side, and how far it moved.
func sensitivity(r *result.Result, c result.Comparison, ft, fb map[int]bool) string {
	get := func(s result.Summary) float64 { return s.TPS }
	if c.Metric == "nopm" {
		get = func(s result.Summary) float64 { return s.NOPM }
	}
	byBlock := result.PerBlock(r.InCompleteBlocks(result.AnyTarget, c.Point), get)
	tv, bv, dropped := Pairs(byBlock, c.Target, c.Baseline, func(b int) bool { return ft[b] || fb[b] })
	if len(tv) == 0 {
		return "; every block held a flagged interval: no estimate without them"
	}
	p := ComparePaired(tv, bv)
	d := (p.Ratio - 1) * 100
	return fmt.Sprintf("; without the %d block(s) holding one: %+.1f%% (moved %+.1f points, %d block(s) left)", dropped, d, d-c.DeltaPct, len(tv))
}

// HonestyWarning says when dbduel's query count and the server's own counter
// disagree by more than 1% in a run ("" when they agree or were not read).
func HonestyWarning(run result.Run) string {
	h := run.Honesty
	if h == nil || math.Abs(h.DiffPct) <= 1 {
		return ""
	}
	unit := h.Unit
	if unit == "" {
		unit = "statements"
	}
	return fmt.Sprintf("%s run %d: dbduel counted %d %s, the server's %s counter %d (%+.2f%%); %s",
		run.Target, run.Index, h.DbduelQueries, unit, h.Counter, h.ServerQueries, h.DiffPct, h.Note)
}

// pointLabel names a sweep's point in verdicts and warnings ("" without a
// sweep); a live session's point is a segment, named by its number as the
// screen numbers them.
func pointLabel(r *result.Result, i int) string {
	for k, seg := range r.Segments {
		if seg.Point == i {
			return fmt.Sprintf(" in segment %d", k+1)
		}
	}
	points := r.Plan.Points
	if len(points) < 2 || i >= len(points) {
		return ""
	}
	return fmt.Sprintf(" at threads=%d table_size=%d", points[i].Threads, points[i].TableSize)
}

// rateSource is where an open loop's rate came from, for its warnings:
// --rate, or r in dbduel live.
func rateSource(r *result.Result) string {
	if len(r.Segments) > 0 {
		return "the rate"
	}
	return "--rate"
}

func analyzePoint(r *result.Result, names []string, point int, label string) (map[string]result.TargetStats, []scored, []string) {
	byTarget := map[string]map[int]result.Summary{} // target -> block -> summary
	for _, run := range r.InCompleteBlocks(result.AnyTarget, point) {
		if byTarget[run.Target] == nil {
			byTarget[run.Target] = map[int]result.Summary{}
		}
		byTarget[run.Target][run.Block] = run.Summary
	}
	values := func(target string, get func(result.Summary) float64) []float64 {
		var xs []float64
		for _, b := range sortedBlocks(byTarget[target]) {
			xs = append(xs, get(byTarget[target][b]))
		}
		return xs
	}
	st := map[string]result.TargetStats{}
	var warns []string
	for _, n := range names {
		if len(byTarget[n]) == 0 {
			continue
		}
		st[n] = result.TargetStats{
			TPS:   Describe(values(n, metrics[0].get)),
			QPS:   Describe(values(n, metrics[1].get)),
			AvgUS: Describe(values(n, metrics[2].get)),
			P95US: Describe(values(n, metrics[3].get)),
		}
		if nopm := values(n, metrics[5].get); !slices.Contains(nopm, 0) {
			ts := st[n]
			d, t := Describe(nopm), Describe(values(n, metrics[6].get))
			ts.NOPM, ts.TPM = &d, &t
			st[n] = ts
		}
		if d := st[n].TPS; d.N > 1 && d.CV > 0.05 {
			warns = append(warns, fmt.Sprintf("%s%s: TPS varied by %.1f%% (CV) across runs: the machine was noisy", n, label, d.CV*100))
		}
	}
	if len(names) < 2 {
		return st, nil, warns
	}
	var cs []scored
	base := names[0]
	primary := "tps"
	if OpenLoop(r, point) {
		// The rate sets the TPS of every target that keeps up: the
		// verdict reads latency, as a user comparing at a rate asks.
		primary = "p95"
	}
	if _, ok := st[base]; ok && st[base].NOPM != nil {
		primary = "nopm" // TPC-C's verdict reads NOPM
	}
	for _, t := range names[1:] {
		var blocks []int
		for _, b := range sortedBlocks(byTarget[t]) {
			if _, ok := byTarget[base][b]; ok {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		for _, m := range metrics {
			var tv, bv []float64
			for _, b := range blocks {
				tv = append(tv, m.get(byTarget[t][b]))
				bv = append(bv, m.get(byTarget[base][b]))
			}
			if slices.Contains(bv, 0) {
				// No ratio to nothing: cpu runs no queries, memory's
				// latencies are below the histogram's 1 µs.
				continue
			}
			cs = append(cs, compareMetric(r, t, base, m, primary, point, label, tv, bv))
		}
	}
	return st, cs, warns
}

// scored is a comparison whose interval is made and whose verdict words
// wait for the family (Holm) to be decided.
type scored struct {
	c              result.Comparison
	p              Paired
	higherIsBetter bool
	primary, label string
	logs           []float64 // block order: the drift check's input
}

// compareMetric makes one comparison's interval over the blocks both
// targets completed (tv, bv in block order), from their log-ratios taken once.
func compareMetric(r *result.Result, t, base string, m metric, primary string, point int, label string, tv, bv []float64) scored {
	logs := logRatios(tv, bv) // block order: every reading below takes these
	p := steinPaired(r, point, t, m.name, logs, CompareLogs(logs))
	if !p.HasCI && p.N < 2 && r.Plan.Runs > 1 && len(r.Segments) == 0 {
		// (A live segment has no plan: its rounds are what ran.)
		// Not a "single run": more were planned, and some were cut short.
		p.Method = fmt.Sprintf("only %d of the %d planned blocks complete", p.N, r.Plan.Runs)
	}
	c := result.Comparison{
		Target: t, Baseline: base, Metric: m.name, Point: point, Ratio: p.Ratio, DeltaPct: (p.Ratio - 1) * 100,
		N: p.N, Method: p.Method, HasCI: p.HasCI, SDLog: p.SD, Primary: m.name == primary,
	}
	if p.HasCI {
		c.CILowPct, c.CIHighPct = (p.Low-1)*100, (p.High-1)*100
		c.HalfWidthPct = HalfWidthPct(p.Low, p.High)
		c.Interval = &result.IntervalRule{Rule: p.Rule, DF: p.DF}
		c.SELog, c.PValue = p.SE, p.PValue()
	}
	if r.Live != nil {
		if _, lo, hi, ok := AnytimeInterval(logs, 1-Confidence); ok {
			c.Anytime = &result.Anytime{LowPct: (lo - 1) * 100, HighPct: (hi - 1) * 100, Method: AnytimeMethod}
		}
	}
	sc := scored{c: c, p: p, higherIsBetter: m.higherIsBetter, primary: primary, label: label}
	if c.Primary {
		sc.logs = logs
	}
	return sc
}

// finish writes the comparison's verdict once its family is decided: the
// words, the precision and --margin readings, the drift check.
func (sc scored) finish(r *result.Result) result.Comparison {
	c := sc.c
	c.Verdict = verdict(c.Target, c.Baseline, displayName(r, c.Metric), role(c.Metric, sc.primary), sc.p, sc.higherIsBetter, c.Family) + sc.label
	judge(r, &c, sc.p, sc.primary)
	if d, ok := CheckDrift(sc.logs); ok {
		c.Drift = d.Reading()
		if d.Fired {
			markSuspect(&c, "drift", d.Why())
		}
	}
	return c
}

// markSuspect marks a comparison suspect for a reason, saying why in its verdict.
func markSuspect(c *result.Comparison, reason, why string) {
	c.Suspect = true
	if !slices.Contains(c.SuspectReasons, reason) {
		c.SuspectReasons = append(c.SuspectReasons, reason)
	}
	c.Verdict += "; " + why
}

func sortedBlocks(m map[int]result.Summary) []int {
	return slices.Sorted(maps.Keys(m))
}

// steinPaired replaces a comparison's interval by Stein's two-stage
// interval when --runs auto planned the point's blocks from a pilot: the
// pilot's sd of the metric's log-ratios and t(n0−1), whatever the blocks
// after it showed. Every metric gets it, not only TPS (whose spread chose
// N): the pilot's means are independent of its spreads, so N, a function
// of the spreads, leaves each metric's interval exact (a plain t interval
// for QPS from the same blocks covered 0.915–0.936).
func steinPaired(r *result.Result, point int, target, metric string, logs []float64, p Paired) Paired {
	for _, sp := range r.Plan.Stein {
		if sp.Point != point || p.N < sp.PilotBlocks || sp.PilotBlocks < 2 {
			continue
		}
		sd, ok := sp.PilotSD[target]
		if metric != "tps" {
			sd, ok = stat.StdDev(logs[:sp.PilotBlocks], nil), true
		}
		if !ok || sd <= 0 || math.IsNaN(sd) {
			continue
		}
		p.Ratio, p.Low, p.High = SteinInterval(logs, sd, sp.PilotBlocks)
		p.HasCI, p.SD = true, sd
		p.SE, p.DF, p.Rule = SteinSE(sd, len(logs)), float64(sp.PilotBlocks-1), "stein"
		p.Method = fmt.Sprintf("Stein two-stage: pilot sd of %d blocks, t(%d)", sp.PilotBlocks, sp.PilotBlocks-1)
	}
	return p
}

// steinShortfall warns when a limit cut a point's blocks below what the
// pilot's spread asked for, naming it: --max-runs when the point ran all
// the blocks it allows, --max-time when fewer ran. The half-width asked
// for was not reached.
func steinShortfall(r *result.Result) {
	for _, sp := range r.Plan.Stein {
		if n := len(r.CompleteBlocks(sp.Point)); sp.PlannedBlocks > n && r.Complete {
			limit := "--max-runs"
			if n < r.Plan.Runs {
				limit = "--max-time"
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("--runs auto%s: the pilot's spread asked for %d blocks for ±%g%%; %d ran (%s cut it): the half-width asked for was not reached",
				pointLabel(r, sp.Point), sp.PlannedBlocks, PrecisionTarget(r), n, limit))
		}
	}
}

// OpenLoop says whether a point ran at a fixed arrival rate: a live
// segment's rate (r), else the plan's --rate.
func OpenLoop(r *result.Result, point int) bool {
	for _, seg := range r.Segments {
		if seg.Point == point {
			return seg.Rate > 0
		}
	}
	return r.Plan.Rate > 0
}

// displayName is a metric as a workload's own verdicts name it: the system
// workloads (cpu, memory, fileio) count events, not transactions.
func displayName(r *result.Result, metric string) string {
	switch r.Workload.Name {
	case "cpu", "memory", "fileio":
		if metric == "tps" {
			return "events/s"
		}
	}
	return metric
}
