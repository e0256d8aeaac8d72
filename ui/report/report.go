// Package report writes a Result as Markdown, CSV, HTML or a PNG chart, for
// sharing a comparison outside the terminal.
package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/explain"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
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

// table is rows of cells under a head, rendered as Markdown or HTML.
type table struct {
	head []string
	rows [][]string
}

func (t table) markdown() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n|---|")
	b.WriteString(strings.Repeat("---:|", len(t.head)-1) + "\n")
	for _, r := range t.rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = mdText(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return b.String()
}

// mdMeta are what turns a result's text into Markdown markup: a link or
// an image (its "](" ), raw HTML and autolinks ("<"), a table's cell end
// ("|"), a code span, a line's end. Emphasis is left as written: it
// changes no meaning, and escaping every "_" would garble the names.
var mdMeta = strings.NewReplacer(`\`, `\\`, "](", `]\(`, "<", "&lt;", "|", `\|`, "`", "\\`", "\n", " ", "\r", " ")

func mdText(s string) string { return mdMeta.Replace(s) }

func (t table) html() string {
	var b strings.Builder
	b.WriteString("<table><tr>")
	for _, h := range t.head {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr>")
	for _, r := range t.rows {
		cls := ""
		if len(r) > 1 && (r[1] == "mean" || r[1] == "Δ%" || r[1] == "CI95") {
			cls = " class=\"summary\""
		}
		b.WriteString("<tr" + cls + ">")
		for _, c := range r {
			b.WriteString("<td>" + html.EscapeString(c) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

// runsTable is a point's runs as on screen: grouped by target with a mean
// row each, then every other target's Δ% against the baseline (the
// verdict's estimator) and its 95% CI, with units.
func runsTable(r *result.Result, point int) table {
	cols := text.Columns(r) // the workload's own: events and MiB/s for cpu, memory, fileio
	t := table{head: []string{"target", "run"}}
	for _, c := range cols {
		t.head = append(t.head, c.Head)
	}
	cells := func(s result.Summary) []string {
		var out []string
		for _, c := range cols {
			out = append(out, c.Value(s))
		}
		return out
	}
	names := r.TargetNames()
	blocks := r.CompleteBlocks(point)
	for _, name := range names {
		for _, run := range r.Measured(name, point) {
			label := strconv.Itoa(run.Index)
			switch {
			case !run.Complete:
				label += " (partial: cut short, not in the comparison)"
			case !blocks[run.Block]:
				label += " (its block has a run cut short: not in the comparison)"
			}
			t.rows = append(t.rows, append([]string{name, label}, cells(run.Summary)...))
		}
		if g, n := stats.GeoMean(r, name, point); n > 1 {
			t.rows = append(t.rows, append([]string{name, fmt.Sprintf("geometric mean of %d blocks", n)}, cells(g)...))
		}
	}
	for _, name := range names[min(1, len(names)):] {
		delta, ci := []string{name, "Δ%"}, []string{name, "CI95"}
		any := false
		for _, col := range cols {
			d, c := "", ""
			if cmp := r.Comparison(name, col.Metric, point); col.Metric != "" && cmp != nil {
				any = true
				d = fmt.Sprintf("%+.2f%%", cmp.DeltaPct)
				c = "no CI"
				if cmp.HasCI {
					c = fmt.Sprintf("[%+.1f%%, %+.1f%%]", cmp.CILowPct, cmp.CIHighPct)
				}
			}
			delta, ci = append(delta, d), append(ci, c)
		}
		if any {
			t.rows = append(t.rows, delta, ci)
		}
	}
	return t
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// comparisonsTable is every comparison of a point with its method.
func comparisonsTable(r *result.Result, point int) table {
	t := table{head: []string{"comparison", "metric", "Δ", "95% CI", "n", "method"}}
	for _, c := range r.Comparisons {
		if c.Point != point || !slices.Contains([]string{"tps", "qps", "p95", "nopm", "tpm"}, c.Metric) {
			continue
		}
		ci := "no CI"
		if c.HasCI {
			ci = fmt.Sprintf("[%+.1f%%, %+.1f%%]", c.CILowPct, c.CIHighPct)
		}
		t.rows = append(t.rows, []string{c.Target + " vs " + c.Baseline, c.Metric, fmt.Sprintf("%+.1f%%", c.DeltaPct), ci, strconv.Itoa(c.N), c.Method})
	}
	return t
}

// verdicts are a point's verdict lines (the primary metric's first), then
// the A/A check's line (--calibrate).
func verdicts(r *result.Result, point int) []string {
	out := text.Verdicts(r, point)
	if line := stats.AALine(r, point); line != "" {
		out = append(out, line)
	}
	return out
}

// parityTable is the configuration that differs, one column per target.
func parityTable(r *result.Result) (table, bool) {
	if r.Parity == nil || len(r.Parity.VariablesDiff) == 0 {
		return table{}, false
	}
	t := table{head: []string{"variable"}}
	for _, tg := range r.Targets {
		t.head = append(t.head, tg.Name)
	}
	for _, d := range r.Parity.VariablesDiff {
		row := []string{d.Name}
		for _, tg := range r.Targets {
			row = append(row, d.Values[tg.Name])
		}
		t.rows = append(t.rows, row)
	}
	return t, true
}

func pointTitle(r *result.Result, pi int) string {
	pt := r.Plan.Points[pi]
	if pi < len(r.Segments) { // dbduel live: a point is a segment
		s := r.Segments[pi]
		title := fmt.Sprintf("segment %d: %s · %s · %s", pi+1, s.WhatChanged, s.Workload, Threads(s.Threads))
		if s.Rate > 0 {
			title += fmt.Sprintf(" · rate %.0f/s", s.Rate)
		}
		return title + fmt.Sprintf(" · %d round(s)", s.Rounds)
	}
	return fmt.Sprintf("threads=%d table_size=%d", pt.Threads, pt.TableSize)
}

// iterationNotes are a live iteration's lines: what each restarted target
// read back, and its Δ TPS against iteration 1.
func iterationNotes(r *result.Result, pi int) []string {
	if pi >= len(r.Segments) {
		return nil
	}
	s := r.Segments[pi]
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.ReadBack)) {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s.ReadBack[name])) {
			kv = append(kv, k+"="+s.ReadBack[name][k])
		}
		out = append(out, fmt.Sprintf("%s restarted (iteration %d), reads back: %s", name, s.Iteration, strings.Join(kv, " ")))
	}
	for _, c := range s.VsIteration1 {
		line := fmt.Sprintf("%s vs iteration 1: Δ TPS %+.1f%%", c.Target, c.DeltaPct)
		if c.HasCI {
			line += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", c.CILowPct, c.CIHighPct)
		}
		out = append(out, line+fmt.Sprintf(" (%d vs %d rounds, %s)", c.N, c.NBaseline, c.Method))
	}
	return out
}

// Markdown is what the screen shows: per point the runs grouped by target
// with means, Δ% and CI rows, the comparisons, the verdicts and the cause;
// then what each target was, the configuration differences and warnings.
func Markdown(r *result.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdText(Title(r)))
	if !r.Complete {
		b.WriteString("**Partial result: the run was stopped before the plan finished.**\n\n")
	}
	fmt.Fprintf(&b, "Started %s · dbduel %s · %d run(s) per target · plan seed %d\n\n", r.StartedAt.Format("2006-01-02 15:04:05 UTC"), r.DbduelVersion, r.Plan.Runs, r.Plan.Seed)
	b.WriteString("| target | server | what it is |\n|---|---|---|\n")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", mdText(t.Name), mdText(t.ServerVersion), mdText(describe(t)))
	}
	for pi := range max(len(r.Plan.Points), 1) {
		if len(r.Plan.Points) > 1 || r.Live != nil {
			fmt.Fprintf(&b, "\n## %s\n", mdText(pointTitle(r, pi)))
		}
		for _, n := range iterationNotes(r, pi) {
			fmt.Fprintf(&b, "\n%s\n", mdText(n))
		}
		b.WriteString("\n" + runsTable(r, pi).markdown())
		b.WriteString(tpccRuns(r, pi))
		if t := comparisonsTable(r, pi); len(t.rows) > 0 {
			b.WriteString("\n" + t.markdown())
		}
		for _, t := range []table{blocksTable(r, pi), latencyTable(r, pi)} {
			if len(t.rows) > 0 {
				b.WriteString("\n" + t.markdown())
			}
		}
		for _, v := range verdicts(r, pi) {
			fmt.Fprintf(&b, "\n**%s**\n", mdText(v))
		}
		if line := cause.Line(r, pi); line != "" {
			fmt.Fprintf(&b, "\ncause: %s\n", mdText(line))
		}
	}
	if line := stats.FamilyLine(r); line != "" {
		fmt.Fprintf(&b, "\n*%s*\n", mdText(line))
	}
	if r.Explain != nil {
		b.WriteString("\n## explain\n\n```\n" + explain.Waterfall(r.Explain) + "```\n")
	}
	if t, ok := parityTable(r); ok {
		b.WriteString("\n## Configuration differences (SHOW GLOBAL VARIABLES)\n\n" + t.markdown())
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\n## Warnings\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "- %s\n", mdText(w))
		}
	}
	return b.String()
}

// tpccRuns is TPC-C's NOPM and TPM per run ("" for other workloads).
func tpccRuns(r *result.Result, point int) string {
	var b strings.Builder
	for _, run := range r.Measured(result.AnyTarget, point) {
		s := run.Summary
		if s.CountedBy == "" {
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

// pageStyle is the page's own CSS: nothing is fetched.
const pageStyle = `body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1280px;color:#222}
h1{font-size:1.6em}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}tr.summary td{background:#f3f6fa;font-weight:600}
.verdict{font-size:1.15em;font-weight:600;margin:.3em 0}.cause{background:#fff6e0;border-left:4px solid #ffa500;padding:.4em .8em}
img{max-width:100%;border:1px solid #ddd}.partial{color:#b00;font-weight:700}pre{background:#f6f6f6;padding:1em;overflow:auto}`

// HTML is a self-contained page: the verdicts and the cause first, the
// slide, the runs as on screen, the comparisons, explain's waterfall, what
// each target was, the configuration differences, warnings and the
// environment.
func HTML(r *result.Result) string {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + e(Title(r)) + "</title><style>" + pageStyle + "</style></head><body>")
	fmt.Fprintf(&b, "<h1>%s</h1>", e(Title(r)))
	fmt.Fprintf(&b, "<p>Started %s · dbduel %s · %d run(s) per target · plan seed %d</p>", e(r.StartedAt.Format("2006-01-02 15:04:05 UTC")), e(r.DbduelVersion), r.Plan.Runs, r.Plan.Seed)
	if !r.Complete {
		b.WriteString("<p class=\"partial\">Partial result: the run was stopped before the plan finished.</p>")
	}
	for pi := range max(len(r.Plan.Points), 1) {
		if len(r.Plan.Points) > 1 || r.Live != nil {
			b.WriteString("<h2>" + e(pointTitle(r, pi)) + "</h2>")
		}
		for _, n := range iterationNotes(r, pi) {
			b.WriteString("<p>" + e(n) + "</p>")
		}
		for _, v := range verdicts(r, pi) {
			b.WriteString("<p class=\"verdict\">" + e(v) + "</p>")
		}
		if line := cause.Line(r, pi); line != "" {
			b.WriteString("<p class=\"cause\">cause: " + e(line) + "</p>")
		}
	}
	if line := stats.FamilyLine(r); line != "" {
		b.WriteString("<p class=\"verdict\">" + e(line) + "</p>")
	}
	var png bytes.Buffer
	if err := PNG(&png, r); err == nil {
		b.WriteString("<img alt=\"" + e(Title(r)) + ": per-interval series and Δ% with 95% CI\" src=\"data:image/png;base64," + inlineData(png.Bytes()) + "\">")
	}
	for pi := range max(len(r.Plan.Points), 1) {
		title := "Runs"
		if len(r.Plan.Points) > 1 {
			title += " · " + pointTitle(r, pi)
		}
		b.WriteString("<h2>" + e(title) + "</h2>" + runsTable(r, pi).html())
		if t := comparisonsTable(r, pi); len(t.rows) > 0 {
			b.WriteString("<h3>Comparisons</h3>" + t.html())
		}
		if t := blocksTable(r, pi); len(t.rows) > 0 {
			b.WriteString("<h3>Every block</h3>" + t.html())
		}
		if t := latencyTable(r, pi); len(t.rows) > 0 {
			b.WriteString("<h3>Latency over the complete blocks (merged histograms)</h3>" + t.html())
		}
	}
	if r.Explain != nil {
		b.WriteString("<h2>explain</h2><pre>" + e(explain.Waterfall(r.Explain)) + "</pre>")
	}
	b.WriteString("<h2>Targets</h2>")
	tt := table{head: []string{"target", "server", "what it is"}}
	for _, t := range r.Targets {
		tt.rows = append(tt.rows, []string{t.Name, t.ServerVersion, describe(t)})
	}
	b.WriteString(tt.html())
	if t, ok := parityTable(r); ok {
		b.WriteString("<h2>Configuration differences</h2>" + t.html())
	}
	if len(r.Warnings) > 0 {
		b.WriteString("<h2>Warnings</h2><ul>")
		for _, w := range r.Warnings {
			b.WriteString("<li>" + e(w) + "</li>")
		}
		b.WriteString("</ul>")
	}
	if len(r.Environment) > 0 {
		env := table{head: []string{"environment", "value"}}
		for _, k := range slices.Sorted(maps.Keys(r.Environment)) {
			env.rows = append(env.rows, []string{k, r.Environment[k]})
		}
		b.WriteString("<h2>Environment</h2>" + env.html())
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// blocksTable is each target's primary Δ% block by block beside its
// estimate: whether the blocks agreed, or one outlier made the mean
// (cut blocks marked).
func blocksTable(r *result.Result, point int) table {
	t := table{head: []string{"target", "estimate", "every block's Δ%"}}
	names := r.TargetNames()
	for _, n := range names[min(1, len(names)):] {
		c := cause.Primary(r, n, point)
		if c == nil || c.NBaseline > 0 {
			continue
		}
		complete, partial := stats.BlockDeltas(r, n, names[0], c.Metric, point)
		var cells []string
		for _, d := range complete {
			cells = append(cells, fmt.Sprintf("%+.1f%%", d))
		}
		for _, d := range partial {
			cells = append(cells, fmt.Sprintf("%+.1f%% (cut)", d))
		}
		t.rows = append(t.rows, []string{n, fmt.Sprintf("%s %+.1f%%", c.Metric, c.DeltaPct), strings.Join(cells, ", ")})
	}
	return t
}

// latencyTable is each target's p50/p95/p99/max from its runs' merged
// histograms, with p95's Δ% against the baseline.
func latencyTable(r *result.Result, point int) table {
	t := table{head: []string{"target", "p50 ms", "p95 ms", "p99 ms", "max ms", "p95 Δ%"}}
	for i, n := range r.TargetNames() {
		l, ok := stats.MergedLatency(r, n, point)
		if !ok {
			continue
		}
		d := ""
		if c := r.Comparison(n, "p95", point); c != nil && i > 0 {
			d = fmt.Sprintf("%+.1f%%", c.DeltaPct)
		}
		t.rows = append(t.rows, []string{n, f2(l.P50 / 1000), f2(l.P95 / 1000), f2(l.P99 / 1000), f2(l.Max / 1000), d})
	}
	return t
}
