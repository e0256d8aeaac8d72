// Package report writes a Result as Markdown, CSV, HTML or a PNG chart, for
// sharing a comparison outside the terminal.
package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/ui/text"
)

// Formats are the accepted --format values.
var Formats = []string{"md", "csv", "html", "png"}

// Write renders r in format to w.
func Write(w io.Writer, r *result.Result, format string) error {
	switch format {
	case "md":
		_, err := io.WriteString(w, Markdown(r))
		return err
	case "csv":
		return CSV(w, r)
	case "html":
		_, err := io.WriteString(w, HTML(r))
		return err
	case "png":
		return PNG(w, r)
	}
	return fmt.Errorf("unknown report format %q: want %s", format, strings.Join(Formats, ", "))
}

func describe(t result.Target) string {
	d := t.Described
	parts := []string{t.Kind}
	if d.Image != "" {
		parts = append(parts, "image "+d.Image)
	}
	if d.Binary != "" {
		parts = append(parts, "binary "+d.Binary)
	}
	if d.NetworkMode != "" {
		parts = append(parts, "network "+d.NetworkMode+" ("+d.NetworkPath+")")
	}
	if d.Datadir != nil {
		parts = append(parts, "datadir "+d.Datadir.Kind+" "+d.Datadir.FSType)
	}
	if d.MemoryLimitBytes > 0 {
		parts = append(parts, fmt.Sprintf("memory %d MiB", d.MemoryLimitBytes>>20))
	}
	if d.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("cpus %g", d.CPUs))
	}
	if d.Cpuset != "" {
		parts = append(parts, "cpuset "+d.Cpuset)
	}
	return strings.Join(parts, ", ")
}

// Markdown is the run table, the verdicts and what each target was.
func Markdown(r *result.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# dbduel: %s\n\n", r.Workload.Name)
	if !r.Complete {
		b.WriteString("**Partial result: the run was stopped before the plan finished.**\n\n")
	}
	fmt.Fprintf(&b, "Started %s · dbduel %s · %d run(s) per target · plan seed %d\n\n", r.StartedAt.Format("2006-01-02 15:04:05 UTC"), r.DbduelVersion, r.Plan.Runs, r.Plan.Seed)
	b.WriteString("| target | server | what it is |\n|---|---|---|\n")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.Name, t.ServerVersion, describe(t))
	}
	for pi := range max(len(r.Plan.Points), 1) {
		if len(r.Plan.Points) > 1 {
			pt := r.Plan.Points[pi]
			fmt.Fprintf(&b, "\n## threads=%d table_size=%d\n", pt.Threads, pt.TableSize)
		}
		b.WriteString("\n| target | run | total queries | QPS | TPS | avg ms | p95 ms |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for _, run := range r.Runs {
			if run.Warmup || run.Point != pi {
				continue
			}
			s := run.Summary
			label := strconv.Itoa(run.Index)
			if !run.Complete {
				label += " (partial: cut short, not in the comparison)"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %.2f | %.2f | %.2f |\n", run.Target, label, s.Queries, s.QPS, s.TPS, s.AvgUS/1000, s.P95US/1000)
		}
		b.WriteString(tpccRuns(r, pi))
		var verdicts []string
		for _, c := range r.Comparisons {
			if c.Point != pi {
				continue
			}
			ci := "no CI"
			if c.HasCI {
				ci = fmt.Sprintf("[%+.1f%%, %+.1f%%]", c.CILowPct, c.CIHighPct)
			}
			if c.Metric == "tps" || c.Metric == "qps" || c.Metric == "p95" || c.Metric == "nopm" || c.Metric == "tpm" {
				verdicts = append(verdicts, fmt.Sprintf("| %s vs %s | %s | %+.1f%% | %s | %d | %s |", c.Target, c.Baseline, c.Metric, c.DeltaPct, ci, c.N, c.Method))
			}
		}
		if len(verdicts) > 0 {
			b.WriteString("\n| comparison | metric | Δ | 95% CI | n | method |\n|---|---|---:|---|---:|---|\n")
			b.WriteString(strings.Join(verdicts, "\n") + "\n")
		}
		for _, c := range r.Comparisons {
			if c.Point == pi && (c.Metric == "tps" || c.Metric == "nopm") {
				fmt.Fprintf(&b, "\n**%s**\n", c.Verdict)
			}
		}
	}
	if r.Parity != nil && len(r.Parity.VariablesDiff) > 0 {
		b.WriteString("\n## Configuration differences (SHOW GLOBAL VARIABLES)\n\n| variable |")
		for _, t := range r.Targets {
			b.WriteString(" " + t.Name + " |")
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(r.Targets)) + "\n")
		for _, d := range r.Parity.VariablesDiff {
			b.WriteString("| " + d.Name + " |")
			for _, t := range r.Targets {
				b.WriteString(" " + d.Values[t.Name] + " |")
			}
			b.WriteString("\n")
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Warnings\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	return b.String()
}

// tpccRuns is TPC-C's NOPM and TPM per run ("" for other workloads).
func tpccRuns(r *result.Result, point int) string {
	var b strings.Builder
	for _, run := range r.Runs {
		s := run.Summary
		if run.Warmup || run.Point != point || s.CountedBy == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n| target | run | NOPM | TPM | client tpmC | New-Order p95 ms | Payment p95 ms |\n|---|---:|---:|---:|---:|---:|---:|\n")
		}
		label := strconv.Itoa(run.Index)
		if !run.Complete {
			label += " (partial)"
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.0f | %.2f | %.2f |\n", run.Target, label, s.NOPM, s.TPM, s.ClientTPMC,
			s.Types["new_order"].P95US/1000, s.Types["payment"].P95US/1000)
	}
	if b.Len() > 0 {
		b.WriteString("\nNOPM and TPM are the server's: sum(district.d_next_o_id) and Com_commit + Com_rollback per minute, as HammerDB reads them.\n")
	}
	return b.String()
}

// CSV is one row per run.
func CSV(w io.Writer, r *result.Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"target", "point", "threads", "table_size", "block", "run", "warmup", "complete", "duration_s", "events", "queries",
		"reads", "writes", "other", "errors", "reconnects", "tps", "qps", "avg_us", "p50_us", "p95_us", "p99_us", "max_us", "nopm", "tpm"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, run := range r.Runs {
		s := run.Summary
		threads, size := "", ""
		if run.Point < len(r.Plan.Points) {
			threads, size = strconv.Itoa(r.Plan.Points[run.Point].Threads), strconv.Itoa(r.Plan.Points[run.Point].TableSize)
		}
		_ = cw.Write([]string{run.Target, strconv.Itoa(run.Point), threads, size, strconv.Itoa(run.Block), strconv.Itoa(run.Index),
			strconv.FormatBool(run.Warmup), strconv.FormatBool(run.Complete), f(s.DurationS), u(s.Events), u(s.Queries), u(s.Reads), u(s.Writes), u(s.Other),
			u(s.Errors), u(s.Reconnects), f(s.TPS), f(s.QPS), f(s.AvgUS), f(s.P50US), f(s.P95US), f(s.P99US), f(s.MaxUS), f(s.NOPM), f(s.TPM)})
	}
	cw.Flush()
	return cw.Error()
}

// HTML is a self-contained page: the run table, the verdicts and the chart.
func HTML(r *result.Result) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><meta charset=\"utf-8\"><title>dbduel: " + html.EscapeString(r.Workload.Name) + "</title>")
	b.WriteString("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:1em}</style></head><body>")
	fmt.Fprintf(&b, "<h1>dbduel: %s</h1>", html.EscapeString(r.Workload.Name))
	if !r.Complete {
		b.WriteString("<p><b>Partial result: the run was stopped before the plan finished.</b></p>")
	}
	b.WriteString("<h2>Targets</h2><table><tr><th>target</th><th>server</th><th>what it is</th></tr>")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>", html.EscapeString(t.Name), html.EscapeString(t.ServerVersion), html.EscapeString(describe(t)))
	}
	b.WriteString("</table><h2>Runs</h2><pre>" + html.EscapeString(text.RunTable(r)) + "</pre>")
	var png bytes.Buffer
	if err := PNG(&png, r); err == nil {
		name, _ := headline(r)
		b.WriteString("<h2>" + name + " per interval</h2><img alt=\"" + name + " per interval\" src=\"data:image/png;base64," + inlineData(png.Bytes()) + "\">")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}
