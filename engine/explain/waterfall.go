package explain

import (
	"fmt"
	"strings"

	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
)

// Waterfall is the headless table of a ladder: each rung's change against
// its reference with the CI, its distance from native, its evidence, and
// the attribution of the total gap.
func Waterfall(ex *result.Explain) string {
	var b strings.Builder
	fmt.Fprintf(&b, "explain: throughput (%s) rung by rung; each Δ is against the rung it changes one thing of\n", ex.Metric)
	fmt.Fprintf(&b, "%-19s %-13s %9s %17s %11s  %s\n", "rung", "vs", "Δ%", "CI95", "vs native", "evidence")
	for _, r := range ex.Rungs {
		delta, ci, native := "", "", ""
		if r.ComparedTo != "" && r.N == 0 {
			delta = "not paired yet"
		} else if r.ComparedTo != "" {
			delta = fmt.Sprintf("%+.1f%%", r.DeltaPct)
			ci = "no CI"
			if r.HasCI {
				ci = fmt.Sprintf("[%+.1f, %+.1f]", r.CILowPct, r.CIHighPct)
			}
			native = fmt.Sprintf("%+.1f%%", r.DeltaVsNativePct)
		}
		ev := summary(r.Evidence)
		if !r.Valid {
			ev = "INVALID: " + r.Invalid + "; " + ev
		}
		fmt.Fprintf(&b, "%-19s %-13s %9s %17s %11s  %s\n", r.Name, r.ComparedTo, delta, ci, native, ev)
	}
	if len(ex.Attribution) > 0 {
		b.WriteString("attribution of the gap native → bridge-proxy (shares of its log-ratio; they add to 100%):\n")
		for _, a := range ex.Attribution {
			ci := "no CI"
			if a.HasCI {
				ci = fmt.Sprintf("[%+.1f, %+.1f]", a.CILowPct, a.CIHighPct)
			}
			fmt.Fprintf(&b, "  %-48s %+7.1f%% %17s  %5.0f%% of the gap\n", a.Layer, a.DeltaPct, ci, a.SharePct)
		}
	}
	return b.String()
}

// summary is the evidence in one short line.
func summary(ev map[string]any) string {
	var parts []string
	if p := cause.Str(ev["network_path"]); p != "" {
		s := p
		if v, ok := ev["proxy_cpu_cores"].(float64); ok && p == "docker-proxy" {
			s += fmt.Sprintf(" %.2f cores", v)
		}
		parts = append(parts, s)
	}
	if k := cause.Str(ev["datadir_kind"]); k != "" {
		parts = append(parts, k+"/"+cause.Str(ev["datadir_fstype"]))
	}
	if s := cause.Str(ev["seccomp_mode"]); s != "" {
		parts = append(parts, "seccomp "+s)
	}
	if srv, ok := ev["server_us_per_statement"].(float64); ok {
		cl, _ := ev["client_us_per_statement"].(float64)
		parts = append(parts, fmt.Sprintf("statement %.0f µs = server %.0f + between %.0f", cl, srv, cl-srv))
	}
	if v, ok := ev["server_cpu_us_per_txn"].(float64); ok {
		parts = append(parts, fmt.Sprintf("server %.0f µs CPU/txn", v))
	}
	if v, ok := ev["proxy_cpu_us_per_txn"].(float64); ok && v > 0 {
		parts = append(parts, fmt.Sprintf("proxy %.0f µs CPU/txn", v))
	}
	if v, ok := ev["client_cpu_us_per_txn"].(float64); ok && v > 0 {
		parts = append(parts, fmt.Sprintf("client in netns %.0f µs CPU/txn", v))
	}
	if v, ok := ev["cpu_throttled_pct"].(float64); ok && v > 0 {
		parts = append(parts, fmt.Sprintf("throttled %.0f%%", v))
	}
	return strings.Join(parts, ", ")
}

// Shares is the attribution of the gap in one sentence ("" without one):
// what the TUI's summary and the slide say under the waterfall.
func Shares(ex *result.Explain) string {
	if ex == nil || len(ex.Attribution) == 0 {
		return ""
	}
	var parts []string
	for _, a := range ex.Attribution {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", a.Layer, a.SharePct))
	}
	return "shares of the gap native → bridge-proxy: " + strings.Join(parts, "; ")
}
