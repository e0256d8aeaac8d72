package text

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// PlainPrinter is dbduel's own headless layout: one line per interval with
// the target's name, then a table of runs and the comparison.
type PlainPrinter struct {
	W io.Writer
	// System: the workload is cpu, memory or fileio, which count events
	// (and MiB/s), run no queries and have no server: every line says so.
	System bool
}

func (p *PlainPrinter) Event(e engine.Event) {
	switch e.Kind {
	case engine.EventPhase:
		if e.Index > 0 {
			eta := ""
			if e.ETA > 0 {
				eta = fmt.Sprintf(", ETA %s", e.ETA.Round(time.Second))
			}
			fmt.Fprintf(p.W, "== %s: %s (block %d, %d/%d runs done%s)\n", e.Target, e.Phase, e.Block, e.Done, e.Total, eta)
		}
	case engine.EventInterval:
		iv := e.Interval
		warm := ""
		if iv.Warmup {
			warm = "  (warm-up)"
		}
		queue := ""
		if iv.ServiceP95US > 0 || iv.QueueLen > 0 {
			queue = fmt.Sprintf("  queue %d  conc %d  svc p95 %.2f ms", iv.QueueLen, iv.Concurrency, iv.ServiceP95US/1000)
		}
		if p.System {
			fmt.Fprintf(p.W, "[%4.0fs] %-12s events/s %9.2f  MiB/s %8.2f  p95 %8.2f ms  p99 %8.2f ms  err/s %.2f%s%s%s\n",
				iv.TS, e.Target, iv.TPS, iv.ReadMiBPerS+iv.WrittenMiBPerS, iv.P95US/1000, iv.P99US/1000,
				perSec(iv.Errors, iv), queue, SystemTelemetry(iv)+Noise(iv), warm)
			return
		}
		fmt.Fprintf(p.W, "[%4.0fs] %-12s tps %9.2f  qps %10.2f  p95 %8.2f ms  p99 %8.2f ms  err/s %.2f  reconn/s %.2f%s%s%s\n",
			iv.TS, e.Target, iv.TPS, iv.QPS, iv.P95US/1000, iv.P99US/1000,
			perSec(iv.Errors, iv), perSec(iv.Reconnects, iv), queue+transfer(iv)+tpcc(iv), Telemetry(iv)+Noise(iv), warm)
	case engine.EventRunDone:
		s := e.Run.Summary
		if p.System {
			fmt.Fprintf(p.W, "   %s run %d: %d events in %.2fs: events/s %.2f, MiB/s %.2f, avg %.2f ms, p95 %.2f ms\n",
				e.Target, e.Index, s.Events, s.DurationS, s.TPS, s.ReadMiBPerS+s.WrittenMiBPerS, s.AvgUS/1000, s.P95US/1000)
		} else {
			fmt.Fprintf(p.W, "   %s run %d: %d events, %d queries in %.2fs: tps %.2f, qps %.2f, avg %.2f ms, p95 %.2f ms\n",
				e.Target, e.Index, s.Events, s.Queries, s.DurationS, s.TPS, s.QPS, s.AvgUS/1000, s.P95US/1000)
		}
		if s.ServiceAvgUS > 0 {
			fmt.Fprintf(p.W, "   open loop: latency includes queue wait; service time avg %.2f ms, p95 %.2f ms; threads woke %.0f µs late on average\n",
				s.ServiceAvgUS/1000, s.ServiceP95US/1000, s.WakeLateAvgUS)
		}
		if s.UnservedEvents > 0 {
			fmt.Fprintf(p.W, "   open loop: %d arrivals were never served (the oldest had waited %.2f ms when the run stopped)\n", s.UnservedEvents, s.UnservedMaxWaitUS/1000)
		}
		if s.ReadMiBPerS+s.WrittenMiBPerS > 0 {
			fmt.Fprintf(p.W, "   throughput: read %.2f MiB/s, written %.2f MiB/s\n", s.ReadMiBPerS, s.WrittenMiBPerS)
		}
		if s.CountedBy != "" {
			fmt.Fprintf(p.W, "   TPC-C: NOPM %.0f, TPM %.0f (the server's %s); client tpmC %.0f\n", s.NOPM, s.TPM, s.CountedBy, s.ClientTPMC)
		} else if s.ServerCountsNote != "" {
			fmt.Fprintf(p.W, "   TPC-C: no NOPM or TPM: %s\n", s.ServerCountsNote)
		}
		if len(s.Types) > 0 {
			fmt.Fprintf(p.W, "   per transaction: %s\n", TypeLine(s.Types))
		}
		if h := e.Run.Honesty; p.System && (h == nil || h.Counter == "") {
			// No server, no counter to hold dbduel's count against.
		} else if h != nil && h.Note != "" && h.Counter == "" {
			fmt.Fprintf(p.W, "   server counter: %s\n", h.Note)
		} else if h != nil {
			unit := h.Unit
			if unit == "" {
				unit = "statements"
			}
			fmt.Fprintf(p.W, "   server counter %s: %d %s (dbduel counted %d, %+.2f%%)\n", h.Counter, h.ServerQueries, unit, h.DbduelQueries, h.DiffPct)
		}
	}
}

// tpcc is an interval's client-counted TPC-C rates ("" for other workloads).
func tpcc(iv result.Interval) string {
	if iv.Types == nil {
		return ""
	}
	return fmt.Sprintf("  tpmC %.0f  TPM %.0f", iv.TPMC, iv.TPM)
}

// TypeOrder is TPC-C's transactions in the order of the mix.
var TypeOrder = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// TypeLine is each transaction type's count, rollbacks, retried errors
// and p95, in the order of the mix.
func TypeLine(types map[string]result.TypeSummary) string {
	var parts []string
	for _, n := range TypeOrder {
		t, ok := types[n]
		if !ok {
			continue
		}
		part := fmt.Sprintf("%s %d", n, t.Count)
		if t.Rollbacks > 0 {
			part += fmt.Sprintf(" (%d rolled back)", t.Rollbacks)
		}
		if t.Errors > 0 {
			part += fmt.Sprintf(" %d retried", t.Errors)
		}
		parts = append(parts, part+fmt.Sprintf(" p95 %.1f ms", t.P95US/1000))
	}
	return strings.Join(parts, "; ")
}

// transfer is the MiB/s of a workload that moves data (memory, fileio).
func transfer(iv result.Interval) string {
	if iv.ReadMiBPerS+iv.WrittenMiBPerS == 0 {
		return ""
	}
	return fmt.Sprintf("  read %.2f MiB/s  written %.2f MiB/s", iv.ReadMiBPerS, iv.WrittenMiBPerS)
}

// perSec is a count over the interval's span (a stalled interval with no
// completed event still has its length).
func perSec(n uint64, iv result.Interval) float64 {
	if iv.SpanS <= 0 {
		return 0
	}
	return float64(n) / iv.SpanS
}

// Result prints the table of runs per target.
func (p *PlainPrinter) Result(r *result.Result) {
	fmt.Fprint(p.W, "\n"+RunTable(r))
}

// RunTable is a table of runs: a row per target and run, a
// mean row per target, Δ% rows against the baseline with the CI, then the
// verdict. Sweeps get one table per point and a curve table.
func RunTable(r *result.Result) string {
	var b strings.Builder
	if line := StopLine(r); line != "" {
		b.WriteString(line + "\n")
	}
	if len(r.Plan.Points) <= 1 {
		b.WriteString(pointTable(r, 0))
	} else {
		for i, pt := range r.Plan.Points {
			fmt.Fprintf(&b, "point %d/%d: threads=%d table_size=%d\n", i+1, len(r.Plan.Points), pt.Threads, pt.TableSize)
			b.WriteString(pointTable(r, i))
			b.WriteString("\n")
		}
		b.WriteString(CurveTable(r))
	}
	if line := stats.FamilyLine(r); line != "" {
		b.WriteString(line + "\n")
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

// Column is one figure of the run table: its heading, its value in a run
// (or gmean) row, and the comparison metric whose Δ% goes under it.
type Column struct {
	Head   string
	Value  func(result.Summary) string
	Metric string // "" when no comparison goes under it
}

// Columns are a workload's own: queries and their rates for databases;
// events, events/s and MiB/s for the system workloads (cpu runs no queries).
func Columns(r *result.Result) []Column {
	ms := func(v float64) string { return fmt.Sprintf("%.2f", v/1000) }
	f2 := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	lat := []Column{{"avg ms", func(s result.Summary) string { return ms(s.AvgUS) }, "avg"}, {"p95 ms", func(s result.Summary) string { return ms(s.P95US) }, "p95"}}
	if IsSystemWorkload(r.Workload.Name) {
		return append([]Column{
			{"events", func(s result.Summary) string { return fmt.Sprint(s.Events) }, ""},
			{"events/s", func(s result.Summary) string { return f2(s.TPS) }, "tps"},
			{"MiB/s", func(s result.Summary) string { return f2(s.ReadMiBPerS + s.WrittenMiBPerS) }, "qps"},
		}, lat...)
	}
	return append([]Column{
		{"queries", func(s result.Summary) string { return fmt.Sprint(s.Queries) }, ""},
		{"qps", func(s result.Summary) string { return f2(s.QPS) }, "qps"},
		{"tps", func(s result.Summary) string { return f2(s.TPS) }, "tps"},
	}, lat...)
}

// IsSystemWorkload says name is cpu, memory or fileio: they count events
// and bytes, not queries, and run no server.
func IsSystemWorkload(name string) bool { return name == "cpu" || name == "memory" || name == "fileio" }

// row prints one table line: target, label, then the columns' cells.
// runTable is the per-run table: rows of cells and notes between them,
// written in order once every row is in, each column as wide as its
// widest cell (a CI such as [-96.6,+250.0] widens its column rather than
// pushing the rest of its row out of line).
type runTable struct {
	lines [][]string // a row's cells, or one note (a line of its own)
	notes map[int]bool
}

// columnWidths are the table's default widths: name, run, then the figures.
var columnWidths = []int{-14, 5, 12, 11, 10, 10, 10}

func (t *runTable) row(name, label string, cells []string) {
	t.lines = append(t.lines, append([]string{name, label}, cells...))
}

func (t *runTable) note(line string) {
	if t.notes == nil {
		t.notes = map[int]bool{}
	}
	t.notes[len(t.lines)] = true
	t.lines = append(t.lines, []string{line})
}

func (t *runTable) write(b *strings.Builder) {
	widths := append([]int(nil), columnWidths...)
	for i, l := range t.lines {
		if t.notes[i] {
			continue
		}
		for j, c := range l {
			if j >= len(widths) {
				widths = append(widths, 10)
			}
			if n := utf8.RuneCountInString(c); n > abs(widths[j]) {
				widths[j] = n * sign(widths[j])
			}
		}
	}
	for i, l := range t.lines {
		if t.notes[i] {
			b.WriteString(l[0] + "\n")
			continue
		}
		for j, c := range l {
			if j > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(b, "%*s", widths[j], c)
		}
		b.WriteByte('\n')
	}
}

func abs(n int) int { return max(n, -n) }

func sign(n int) int {
	if n < 0 {
		return -1
	}
	return 1
}

func pointTable(r *result.Result, point int) string {
	var b strings.Builder
	cols := Columns(r)
	cells := func(f func(Column) string) []string {
		out := make([]string, len(cols))
		for i, c := range cols {
			out[i] = f(c)
		}
		return out
	}
	var tab runTable
	tab.row("target", "run", cells(func(c Column) string { return c.Head }))
	names := r.TargetNames()
	blocks := r.CompleteBlocks(point)
	apart := false
	for _, name := range names {
		for _, run := range r.Measured(name, point) {
			label := fmt.Sprint(run.Index)
			if !run.Complete || !blocks[run.Block] {
				label += "*" // cut short, or its block was: shown, never averaged
				apart = true
			}
			tab.row(name, label, cells(func(c Column) string { return c.Value(run.Summary) }))
		}
		if g, n := stats.GeoMean(r, name, point); n > 1 {
			tab.row(name, "gmean", cells(func(c Column) string { return c.Value(g) }))
		}
	}
	if apart {
		tab.note("* cut short, or in a block with a run cut short: left out of the gmean, Δ% and verdicts")
	}
	if len(names) > 1 && len(blocks) > 1 {
		tab.note(fmt.Sprintf("gmean: geometric mean over the %d block(s) every target completed, the blocks and estimator of the Δ%%", len(blocks)))
	}
	for _, name := range names[1:] {
		delta, ci := map[string]string{}, map[string]string{}
		for _, c := range r.Comparisons {
			if c.Target != name || c.Point != point {
				continue
			}
			delta[c.Metric] = fmt.Sprintf("%+.2f%%", c.DeltaPct)
			if c.HasCI {
				ci[c.Metric] = fmt.Sprintf("[%+.1f,%+.1f]", c.CILowPct, c.CIHighPct)
			}
		}
		if len(delta) > 0 {
			tab.row(name, "Δ%", cells(func(c Column) string { return delta[c.Metric] }))
		}
		if len(ci) > 0 {
			tab.row(name, "CI95", cells(func(c Column) string { return ci[c.Metric] }))
		}
	}
	tab.write(&b)
	b.WriteString(tpccTable(r, names, point))
	for _, v := range Verdicts(r, point) {
		fmt.Fprintf(&b, "verdict: %s\n", v)
	}
	if line := stats.AALine(r, point); line != "" {
		b.WriteString(line + "\n")
	}
	if line := cause.Line(r, point); line != "" {
		fmt.Fprintf(&b, "cause: %s\n", line)
	}
	return b.String()
}

// tpccTable is TPC-C's server-counted NOPM and TPM per run, with Δ% and
// CI rows ("" for other workloads).
func tpccTable(r *result.Result, names []string, point int) string {
	var b strings.Builder
	for _, name := range names {
		for _, run := range r.Measured(name, point) {
			if run.Summary.CountedBy == "" {
				continue
			}
			if b.Len() == 0 {
				fmt.Fprintf(&b, "\n%-14s %5s %12s %12s %12s\n", "target", "run", "NOPM", "TPM", "client tpmC")
			}
			label := fmt.Sprint(run.Index)
			if !run.Complete {
				label += "*"
			}
			s := run.Summary
			fmt.Fprintf(&b, "%-14s %5s %12.0f %12.0f %12.0f\n", name, label, s.NOPM, s.TPM, s.ClientTPMC)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	for _, name := range names[1:] {
		n, t := r.Comparison(name, "nopm", point), r.Comparison(name, "tpm", point)
		if n == nil || t == nil {
			continue
		}
		fmt.Fprintf(&b, "%-14s %5s %12s %12s\n", name, "Δ%", fmt.Sprintf("%+.2f%%", n.DeltaPct), fmt.Sprintf("%+.2f%%", t.DeltaPct))
		if n.HasCI && t.HasCI {
			fmt.Fprintf(&b, "%-14s %5s %12s %12s\n", name, "CI95", fmt.Sprintf("[%+.1f,%+.1f]", n.CILowPct, n.CIHighPct), fmt.Sprintf("[%+.1f,%+.1f]", t.CILowPct, t.CIHighPct))
		}
	}
	return b.String()
}

// CurveTable is a compact sweep summary: each point's mean TPS per target
// and, for the other targets, the ratio to the baseline with its CI — the
// geometric mean of per-block ratios that the verdicts use.
func CurveTable(r *result.Result) string {
	var b strings.Builder
	names := r.TargetNames()
	fmt.Fprintf(&b, "%-8s %-11s", "threads", "table_size")
	for i, n := range names {
		if i == 0 {
			fmt.Fprintf(&b, " %14s", n+" tps")
		} else {
			fmt.Fprintf(&b, " %30s", n+" tps (ratio [CI95])")
		}
	}
	b.WriteString("\n")
	for pi, pt := range r.Plan.Points {
		fmt.Fprintf(&b, "%-8d %-11d", pt.Threads, pt.TableSize)
		for i, n := range names {
			sum, k := 0.0, 0
			for _, run := range r.Completed(n, pi) {
				sum += run.Summary.TPS
				k++
			}
			w := 30
			if i == 0 {
				w = 14
			}
			if k == 0 {
				fmt.Fprintf(&b, " %*s", w, "-")
				continue
			}
			cell := fmt.Sprintf("%.2f", sum/float64(k))
			if c := r.Comparison(n, "tps", pi); i > 0 && c != nil {
				cell += fmt.Sprintf(" (%.2fx", c.Ratio)
				if c.HasCI {
					cell += fmt.Sprintf(" [%.2f,%.2f]", 1+c.CILowPct/100, 1+c.CIHighPct/100)
				}
				cell += ")"
			}
			fmt.Fprintf(&b, " %*s", w, cell)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Noise is an interval's noise figures in a few words when it was flagged
// ("" otherwise): CPU steal and other processes' CPU.
func Noise(iv result.Interval) string {
	if !iv.Noise.Flagged {
		return ""
	}
	out := ""
	if v, ok := iv.Noise.Get(result.NoiseStealPct); ok {
		out += fmt.Sprintf("  steal %.1f%%", v)
	}
	if v, ok := iv.Noise.Get(result.NoiseOtherCPUCores); ok {
		out += fmt.Sprintf("  other processes %.2f cores", v)
	}
	return out + "  (noisy)"
}

// Telemetry is an interval's resource figures in a few words ("" if none).
// SystemTelemetry is Telemetry for cpu, memory and fileio: no server runs,
// so the CPU read is the benchmark's own (its threads in dbduel or the agent).
func SystemTelemetry(iv result.Interval) string {
	if v, ok := iv.Telemetry.Get(result.TelServerCPUCores); ok {
		return fmt.Sprintf("  benchmark cpu %.2f", v)
	}
	return ""
}

func Telemetry(iv result.Interval) string {
	out := ""
	if v, ok := iv.Telemetry.Get(result.TelServerCPUCores); ok {
		out += fmt.Sprintf("  server cpu %.2f", v)
	}
	if v, ok := iv.Telemetry.Get(result.TelProxyCPUCores); ok {
		out += fmt.Sprintf("  docker-proxy cpu %.2f", v)
	}
	return out
}

// StopLine is the first thing said of a plan that stopped early: why, and
// which blocks never started ("" for a complete plan).
func StopLine(r *result.Result) string {
	if r == nil || r.Complete {
		return ""
	}
	line := "stopped before the plan finished"
	switch {
	case strings.HasPrefix(r.Error, "stopped "):
		line += ", " + strings.TrimPrefix(r.Error, "stopped ")
	case r.Error != "":
		line += ": " + r.Error
	}
	if never := NeverStarted(r); len(never) > 0 {
		line += "; " + blockList(never, len(r.Plan.Blocks)) + " never started"
	}
	return line
}

// NeverStarted are the planned blocks (1-based) with no run at all.
func NeverStarted(r *result.Result) []int {
	ran := map[int]bool{}
	for _, run := range r.Runs {
		ran[run.Block] = true
	}
	var out []int
	for b := 1; b <= len(r.Plan.Blocks); b++ {
		if !ran[b] {
			out = append(out, b)
		}
	}
	return out
}

// blockList says "block 3 of 3" or "blocks 2-3 of 3".
func blockList(bs []int, of int) string {
	if len(bs) == 1 {
		return fmt.Sprintf("block %d of %d", bs[0], of)
	}
	return fmt.Sprintf("blocks %d-%d of %d", bs[0], bs[len(bs)-1], of)
}

// Verdicts are a point's verdicts, each target's primary metric first
// (NOPM for TPC-C, then its TPM; TPS for the sysbench families; events/s
// for the system workloads).
func Verdicts(r *result.Result, point int) []string {
	var out []string
	for _, name := range r.TargetNames() {
		c := cause.Primary(r, name, point)
		if c == nil || c.NBaseline > 0 {
			continue
		}
		out = append(out, c.Verdict)
		if c.Metric == "nopm" {
			if tpm := r.Comparison(name, "tpm", point); tpm != nil {
				out = append(out, tpm.Verdict)
			}
		}
	}
	return out
}
