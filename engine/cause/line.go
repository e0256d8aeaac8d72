package cause

import (
	"fmt"
	"math"
	"strings"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// serverCPUMatters is the change in the server's CPU per transaction, in
// percent against the baseline's, from which it is named as a cause: the
// per-interval CPU readings themselves move by a few percent run to run.
const serverCPUMatters = 10

// Primary is the comparison a target's verdict reads at a point: the one
// the analysis marked primary (NOPM for TPC-C, p95 at a fixed rate, TPS
// otherwise), nil before a block has measured both.
func Primary(r *result.Result, target string, point int) *result.Comparison {
	for i, c := range r.Comparisons {
		if c.Target == target && c.Point == point && c.Primary && c.NBaseline == 0 {
			return &r.Comparisons[i]
		}
	}
	if c := r.Comparison(target, "nopm", point); c != nil {
		return c
	}
	return r.Comparison(target, "tps", point)
}

// Annotate writes each target's cause into its primary comparison (not
// into compare's, which set two files' runs side by side: no shared blocks,
// no telemetry to read across them).
func Annotate(r *result.Result) {
	names := r.TargetNames()
	if len(names) < 2 {
		return
	}
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		if c.NBaseline > 0 || c.Target == c.Baseline || stats.IsCalibration(c.Target) {
			continue // the A/A copy is a check of the design: its line is the A/A line
		}
		if p := Primary(r, c.Target, c.Point); p == c {
			c.Cause = For(r, c.Target, c.Point)
		}
	}
}

// Line is the cause of every target's gap at a point in one line, e.g.
// "bridge: docker-proxy used 0.62 cores — 38% of the container side's CPU
// per transaction; host: within noise" ("" with fewer than two targets or
// before a block has measured them).
func Line(r *result.Result, point int) string {
	var parts []string
	for _, c := range r.Comparisons {
		if c.Point == point && c.Cause != "" {
			parts = append(parts, c.Target+": "+c.Cause)
		}
	}
	return strings.Join(parts, "; ")
}

// For is what the run measured that explains target's gap to the baseline
// at a point: "within noise" when the CI holds zero, else the measured
// costs that differ (docker-proxy's CPU, throttling, the server's CPU per
// transaction), then the parity differences beside them.
func For(r *result.Result, target string, point int) string {
	comp := Primary(r, target, point)
	if comp == nil {
		return ""
	}
	tgt, base, ok := targetPair(r, target, comp.Baseline)
	if !ok {
		return ""
	}
	et, eb := Evidence(r, tgt, point), Evidence(r, base, point)
	var oneSided, alongside []string
	diffs := differences(r, tgt, base)
	if system := systemFacts(tgt, base); system != nil {
		// cpu, memory and fileio have no server: what differs is where
		// the benchmark's own process ran.
		diffs, oneSided = system, throttling(et)
	} else {
		oneSided = costs(et, eb, base.Name)
		alongside = serverCPU(r, target, base.Name, point, et, eb)
	}
	if f := flaggedShare(r, target, point); f >= 0.25 {
		alongside = append(alongside, fmt.Sprintf("%.0f%% of its intervals were noisy (steal or other processes' CPU)", f*100))
	}
	var groups []string
	status, narrow := standing(r, comp)
	if status != "" {
		groups = append(groups, status)
	}
	// What only one side has comes first (docker-proxy in front of one
	// side only); then what differs between the two (limits, the
	// configuration, storage, version); then what was measured beside it.
	// Measured figures are correlates, not isolated causes (dbduel
	// explain's rungs isolate one change at a time).
	if !narrow && len(oneSided) > 0 {
		groups = append(groups, "measured alongside: "+strings.Join(append(oneSided, alongside...), ", "))
	}
	if len(diffs) > 0 {
		groups = append(groups, "differs: "+strings.Join(diffs, ", "))
	}
	if !narrow && len(oneSided) == 0 && len(alongside) > 0 {
		groups = append(groups, "measured alongside: "+strings.Join(alongside, ", "))
	}
	if c := shared(et, eb); c != "" {
		groups = append(groups, c)
	}
	if len(groups) == 0 {
		return "not in the telemetry: no docker-proxy or CPU throttling measured on one side only, the server's CPU per transaction within 10%, nothing read back differs (limits, configuration, network path, client, datadir, version)"
	}
	return strings.Join(groups, "; ")
}

// standing says where a comparison stands before anything is named beside
// it: too few blocks, within noise, or not resolved. It reads the
// comparison's own interval the one way the verdict does: a gap when the
// verdict word says so (Holm over the plan's family), "within noise"
// exactly when --margin's equivalence test (TOST, the 90% interval) finds
// it within ±margin, or ±5% without --margin. narrow is true for "within
// noise": nothing then needs explaining.
func standing(r *result.Result, c *result.Comparison) (status string, narrow bool) {
	switch {
	case !c.HasCI && c.N <= 1:
		return fmt.Sprintf("%d block: no CI", c.N), false
	case !c.HasCI:
		return "no CI", false
	case c.N == 2:
		return "2 blocks: too few to judge", false
	case significant(c):
		return "", false
	}
	x := r.Plan.MarginPct
	if x <= 0 {
		x = stats.DefaultPrecisionPct
	}
	if c.SELog <= 0 || c.Interval == nil || c.Interval.DF <= 0 {
		return fmt.Sprintf("not resolved (±%.1f%%)", c.HalfWidthPct), false
	}
	t := stats.TOST(c.Ratio, c.SELog, c.Interval.DF, x)
	ci := fmt.Sprintf("90%% CI [%+.1f%%, %+.1f%%]", (t.Low-1)*100, (t.High-1)*100)
	if t.Equivalent {
		return fmt.Sprintf("within noise (equivalent within ±%g%%: %s)", x, ci), true
	}
	return fmt.Sprintf("not resolved (%s, not within ±%g%%)", ci, x), false
}

// significant says the comparison's verdict word names a gap: its family
// (Holm) decided so, or, read alone, its 95% CI excludes 0.
func significant(c *result.Comparison) bool {
	if c.Family != nil {
		return c.Family.Significant
	}
	return c.CILowPct > 0 || c.CIHighPct < 0
}

func targetPair(r *result.Result, target, baseline string) (t, b result.Target, ok bool) {
	var okT, okB bool
	for _, x := range r.Targets {
		switch x.Name {
		case target:
			t, okT = x, true
		case baseline:
			b, okB = x, true
		}
	}
	return t, b, okT && okB
}

// costs names where a significant gap's CPU went, from the evidence.
func costs(et, eb map[string]any, base string) []string {
	var out []string
	proxyCores, _ := et[result.TelProxyCPUCores].(float64)
	// A userland proxy (docker-proxy, rootlessport) explains a gap only
	// when it is in front of one side.
	if p := Str(et["network_path"]); userlandProxy(p) && Str(eb["network_path"]) != p && proxyCores > 0 {
		s := fmt.Sprintf("%s used %.2f cores", p, proxyCores)
		proxy, okP := et["proxy_cpu_us_per_txn"].(float64)
		server, okS := et["server_cpu_us_per_txn"].(float64)
		if okP && okS && proxy+server > 0 {
			s += fmt.Sprintf(" — %.0f%% of the container side's CPU per transaction", proxy/(proxy+server)*100)
		}
		out = append(out, s)
	}
	tt, _ := et[result.TelCPUThrottledPct].(float64)
	tb, _ := eb[result.TelCPUThrottledPct].(float64)
	if tt >= 1 && tt >= 2*tb {
		out = append(out, fmt.Sprintf("the CPU quota throttled it in %.0f%% of periods", tt))
	}
	return out
}

// userlandProxy says whether a network path copies every byte through a
// process of its own: Docker's docker-proxy, rootless Podman's rootlessport.
func userlandProxy(path string) bool { return path == "docker-proxy" || path == "rootlessport" }

// flaggedShare is the share of target's measured intervals at a point
// that the noise sampler flagged.
func flaggedShare(r *result.Result, target string, point int) float64 {
	var n, flagged int
	for _, run := range r.Completed(target, point) {
		for _, iv := range run.Intervals {
			if iv.Warmup {
				continue
			}
			n++
			if iv.Noise.Flagged {
				flagged++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(flagged) / float64(n)
}

// parity names what differs between the two servers besides the thing
// compared: the version, then the two variables most likely to move
// performance (Parity lists those first).

// serverCPU names the server's CPU per transaction against the
// baseline's when it differs by serverCPUMatters or more: marginal (idle
// CPU subtracted) where the idle CPU was read, paired by block with its
// CI, with the accounting scopes when they differ; and the machine's
// irq/softirq beside both sides when it differs.
func serverCPU(r *result.Result, target, base string, point int, et, eb map[string]any) []string {
	var out []string
	p, marginal := ServerCPUPerTxn(r, target, base, point)
	key, what := "server_marginal_cpu_us_per_txn", "marginal CPU per transaction"
	_, mt := et[key].(float64)
	_, mb := eb[key].(float64)
	if !marginal || !mt || !mb {
		key, what = "server_cpu_us_per_txn", "CPU per transaction"
		if mt && mb {
			// Gross on both sides of every pair, and said.
			what += " (gross: the idle CPU was not read in every block)"
		}
	}
	st, okT := et[key].(float64)
	sb, okB := eb[key].(float64)
	if okT && okB && sb > 0 {
		d := (st/sb - 1) * 100
		if p.N > 0 {
			d = (p.Ratio - 1) * 100
		}
		if math.Abs(d) >= serverCPUMatters {
			s := fmt.Sprintf("the server's %s %+.0f%%", what, d)
			if p.HasCI {
				s += fmt.Sprintf(" [%+.0f%%, %+.0f%%]", (p.Low-1)*100, (p.High-1)*100)
			}
			s += fmt.Sprintf(" vs %s (%.0f µs vs %.0f µs", base, st, sb)
			if a, b := Str(et["cpu_scope"]), Str(eb["cpu_scope"]); a != "" && b != "" && a != b {
				s += fmt.Sprintf("; not like for like: %s's is its %s, %s's its %s", target, a, base, b)
			}
			out = append(out, s+")")
		}
	}
	kt, okKT := et[result.NoiseKernelCPUCores].(float64)
	kb, okKB := eb[result.NoiseKernelCPUCores].(float64)
	if okKT && okKB && math.Abs(kt-kb) >= 0.05 {
		out = append(out, fmt.Sprintf("the machine's irq/softirq %.2f cores beside it vs %.2f beside %s", kt, kb, base))
	}
	return out
}

// systemFacts are what differs in where a system micro-benchmark ran (nil
// when the targets are not the system workloads'): the CPUs it could use,
// the CPU quota, the files' filesystem and whether O_DIRECT was honoured.
func systemFacts(t, b result.Target) []string {
	ts, bs := t.Described.System, b.Described.System
	if ts == nil || bs == nil {
		return nil
	}
	out := []string{}
	for _, f := range []struct{ key, what string }{
		{"cpus_allowed", "CPUs allowed"}, {"cpu_quota", "CPU quota"}, {"memory_max", "memory limit"},
		{"fs_type", "files on"}, {"o_direct", "O_DIRECT"},
	} {
		if ts[f.key] != bs[f.key] {
			out = append(out, fmt.Sprintf("%s %s vs %s", f.what, ts[f.key], bs[f.key]))
		}
	}
	return out
}

// throttling is the CPU quota's throttled periods, when it held the
// target back.
func throttling(et map[string]any) []string {
	if th, _ := et[result.TelCPUThrottledPct].(float64); th >= 1 {
		return []string{fmt.Sprintf("the CPU quota throttled it in %.0f%% of periods", th)}
	}
	return nil
}
