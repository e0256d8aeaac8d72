package explain

import (
	"fmt"
	"strings"

	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
)

// Waterfall is the headless table of a ladder: each rung's step against
// its reference with the CI (a step whose CI spans 0 is not
// distinguishable from 0), its cumulative contrast against native with its
// own CI, its evidence, and the attribution of the total gap.
func Waterfall(ex *result.Explain) string {
	var b strings.Builder
	fmt.Fprintf(&b, "explain: throughput (%s) rung by rung; each step is against the rung it changes one thing of\n", ex.Metric)
	fmt.Fprintf(&b, "%-19s %-13s %9s %17s %9s %17s  %s\n", "rung", "vs", "step Δ%", "CI95", "vs native", "CI95", "evidence")
	for _, r := range ex.Rungs {
		delta, ci, native, nci := "", "", "", ""
		if r.ComparedTo != "" && r.N == 0 {
			delta = "not paired yet"
		} else if r.ComparedTo != "" {
			delta = fmt.Sprintf("%+.1f%%", r.DeltaPct)
			ci, nci = "no CI", "no CI"
			if r.HasCI {
				ci = fmt.Sprintf("[%+.1f, %+.1f]", r.CILowPct, r.CIHighPct)
			}
			native = fmt.Sprintf("%+.1f%%", r.DeltaVsNativePct)
			if r.VsNativeHasCI {
				nci = fmt.Sprintf("[%+.1f, %+.1f]", r.VsNativeCILowPct, r.VsNativeCIHighPct)
			}
		}
		ev := summary(r.Evidence)
		if r.StepReading != "" {
			ev = "step " + r.StepReading + "; " + ev
		}
		if !r.Valid {
			ev = "INVALID: " + r.Invalid + "; " + ev
		}
		fmt.Fprintf(&b, "%-19s %-13s %9s %17s %9s %17s  %s\n", r.Name, r.ComparedTo, delta, ci, native, nci, ev)
	}
	if len(ex.Attribution) > 0 {
		b.WriteString(attributionHeader(ex.Attribution))
		for _, a := range ex.Attribution {
			step := "no CI"
			if a.HasCI {
				step = fmt.Sprintf("[%+.1f, %+.1f]", a.StepCILowLogPt, a.StepCIHighLogPt)
			}
			share := ""
			if a.HasShare {
				share = fmt.Sprintf("  %.0f%% of the gap [%.0f%%, %.0f%%]", a.SharePct, a.ShareCILowPct, a.ShareCIHighPct)
			}
			if a.HasCI && a.StepCILowLogPt <= 0 && a.StepCIHighLogPt >= 0 {
				share += "  (not distinguishable from 0)"
			}
			fmt.Fprintf(&b, "  %-48s %+7.1f log pts %17s%s\n", a.Layer, a.StepLogPoints, step, share)
		}
	}
	return b.String()
}

// attributionHeader says what the attribution rows are, and whether the
// total gap is large enough to be shared out.
func attributionHeader(as []result.Attribution) string {
	if as[0].HasShare {
		return "attribution of the gap native → bridge-proxy (steps in log points over the blocks every rung completed; they add up to the total, so the shares add to 100%):\n"
	}
	return "attribution of the gap native → bridge-proxy: steps in log points; no shares, since the total's CI includes 0:\n"
}

// summary is the evidence in one short line.
func summary(ev map[string]any) string {
	var parts []string
	if e := cause.Str(ev["engine"]); e == "podman" || e == "kubernetes" {
		if r, _ := ev["rootless"].(bool); r {
			e = "rootless podman"
		}
		parts = append(parts, e)
	}
	if p := cause.Str(ev["network_path"]); p != "" {
		s := p
		if v, ok := ev[result.TelProxyCPUCores].(float64); ok && (p == "docker-proxy" || p == "rootlessport") {
			s += fmt.Sprintf(" %.2f cores", v)
		}
		parts = append(parts, s)
	}
	if k := cause.Str(ev["datadir_kind"]); k != "" {
		if fs := cause.Str(ev["datadir_fstype"]); fs != "" {
			k += "/" + fs // a pod's emptyDir has no filesystem read back
		}
		parts = append(parts, k)
	}
	if s := cause.Str(ev["seccomp_mode"]); s != "" {
		parts = append(parts, "seccomp "+s)
	}
	if srv, ok := ev["server_us_per_statement"].(float64); ok {
		cl, _ := ev["client_us_per_statement"].(float64)
		if cl > srv {
			parts = append(parts, fmt.Sprintf("statement %.0f µs = server %.0f + between %.0f", cl, srv, cl-srv))
		} else {
			// A client beside the server has its result before the server's
			// timer stops (the statement ends after its last packet).
			parts = append(parts, fmt.Sprintf("statement %.0f µs, server %.0f: nothing measurable between", cl, srv))
		}
	}
	if v, ok := ev["server_cpu_us_per_txn"].(float64); ok {
		parts = append(parts, fmt.Sprintf("server %.0f µs CPU/txn", v))
	}
	if v, ok := ev["proxy_cpu_us_per_txn"].(float64); ok && v > 0 {
		parts = append(parts, fmt.Sprintf("proxy %.0f µs CPU/txn", v))
	}
	if v, ok := ev["client_cpu_us_per_txn"].(float64); ok && v > 0 {
		// dbduel's agent: in the container's namespace, or a pod beside it.
		parts = append(parts, fmt.Sprintf("agent client %.0f µs CPU/txn", v))
	}
	if v, ok := ev[result.TelCPUThrottledPct].(float64); ok && v > 0 {
		parts = append(parts, fmt.Sprintf("throttled %.0f%%", v))
	}
	return strings.Join(parts, ", ")
}

// Shares is the attribution of the gap in one sentence ("" without one):
// what the TUI's summary and the slide say under the waterfall. Shares are
// given only when the total gap's CI excludes 0, each with its CI.
func Shares(ex *result.Explain) string {
	if ex == nil || len(ex.Attribution) == 0 {
		return ""
	}
	if !ex.Attribution[0].HasShare {
		return "no shares of the gap native → bridge-proxy: its CI includes 0"
	}
	var parts []string
	for _, a := range ex.Attribution {
		parts = append(parts, fmt.Sprintf("%s %.0f%% [%.0f%%, %.0f%%]", a.Layer, a.SharePct, a.ShareCILowPct, a.ShareCIHighPct))
	}
	return "shares of the gap native → bridge-proxy (95% CIs): " + strings.Join(parts, "; ")
}
