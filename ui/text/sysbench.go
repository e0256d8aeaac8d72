// Package text holds the headless printers: sysbench 1.0.20's layout
// (--format sysbench), dbduel's own readable layout (--format text) and the
// NDJSON stream (--format json).
package text

import (
	"fmt"
	"io"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
)

// Printer renders the engine's events and the final result.
type Printer interface {
	Event(e engine.Event)
	Result(r *result.Result)
}

// Banner describes the run for the sysbench-layout header.
type Banner struct {
	Version        string
	Threads        int
	ReportInterval int
	RandSeed       uint64
	Rate           float64
	Percentile     int
	Workload       string // cpu, memory and fileio have layouts of their own
}

// SysbenchPrinter prints exactly sysbench 1.0.20's interval lines and final
// report for each run; everything dbduel adds is on lines of its own.
type SysbenchPrinter struct {
	W       io.Writer
	Banner  Banner
	started bool
}

func (p *SysbenchPrinter) header() {
	if p.started {
		return
	}
	p.started = true
	b := p.Banner
	fmt.Fprintf(p.W, "dbduel %s (sysbench 1.0.20 compatible output)\n\n", b.Version)
	fmt.Fprintf(p.W, "Running the test with following options:\n")
	fmt.Fprintf(p.W, "Number of threads: %d\n", b.Threads)
	if b.Rate > 0 {
		fmt.Fprintf(p.W, "Target transaction rate: %g/sec\n", b.Rate)
	}
	if b.ReportInterval > 0 {
		fmt.Fprintf(p.W, "Report intermediate results every %d second(s)\n", b.ReportInterval)
	}
	if b.RandSeed != 0 {
		fmt.Fprintf(p.W, "Initializing random number generator from seed (%d).\n\n", b.RandSeed)
	} else {
		fmt.Fprintf(p.W, "Initializing random number generator from current time\n\n")
	}
	fmt.Fprintf(p.W, "\nInitializing worker threads...\n\nThreads started!\n\n")
}

// Event prints interval lines; run headers go before each run.
func (p *SysbenchPrinter) Event(e engine.Event) {
	switch e.Kind {
	case engine.EventPhase:
		if e.Index > 0 {
			p.header()
			warm := ""
			if e.Warmup {
				warm = " warmup=1"
			}
			fmt.Fprintf(p.W, "# dbduel target=%s block=%d run=%d%s\n", e.Target, e.Block, e.Index, warm)
		}
	case engine.EventInterval:
		if e.Interval.Warmup {
			return // sysbench prints nothing during --warmup-time
		}
		// Each run's own thread count: a --threads sweep's later points differ.
		fmt.Fprintln(p.W, sysbenchLine(p.Banner.Workload, e.Interval, e.Threads, p.Banner.Percentile))
		if p.Banner.Rate > 0 {
			fmt.Fprintf(p.W, "[ %.0fs ] queue length: %d, concurrency: %d\n", e.Interval.TS, e.Interval.QueueLen, e.Interval.Concurrency)
		}
	case engine.EventRunDone:
		fmt.Fprint(p.W, sysbenchReport(p.Banner.Workload, e.Run.Summary, e.Run.Fairness))
	}
}

// Result prints nothing more: each run's report came with its run.
func (p *SysbenchPrinter) Result(*result.Result) {}

// SysbenchIntervalLine is sysbench 1.0.20's per-interval line.
func SysbenchIntervalLine(iv result.Interval, threads, pct int) string {
	sec := iv.SpanS
	per := func(n uint64) float64 {
		if sec <= 0 {
			return 0
		}
		return float64(n) / sec
	}
	return fmt.Sprintf("[ %.0fs ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%d%%): %4.2f err/s: %4.2f reconn/s: %4.2f",
		iv.TS, threads, iv.TPS, iv.QPS, per(iv.Reads), per(iv.Writes), per(iv.Other),
		pct, iv.PctUS/1000, per(iv.Errors), per(iv.Reconnects))
}

// sysbenchLine is the interval line of the workload's sysbench test: the
// system tests print their own (sb_cpu.c uses the default with eps).
func sysbenchLine(workload string, iv result.Interval, threads, pct int) string {
	switch workload {
	case "cpu":
		return fmt.Sprintf("[ %.0fs ] thds: %d eps: %4.2f lat (ms,%d%%): %4.2f", iv.TS, threads, iv.TPS, pct, iv.PctUS/1000)
	case "memory":
		return fmt.Sprintf("[ %.0fs ] %4.2f MiB/sec", iv.TS, iv.ReadMiBPerS+iv.WrittenMiBPerS)
	case "fileio":
		fsyncs := 0.0
		if iv.SpanS > 0 {
			fsyncs = float64(iv.Other) / iv.SpanS
		}
		return fmt.Sprintf("[ %.0fs ] reads: %4.2f MiB/s writes: %4.2f MiB/s fsyncs: %4.2f/s latency (ms,%d%%): %4.3f",
			iv.TS, iv.ReadMiBPerS, iv.WrittenMiBPerS, fsyncs, pct, iv.PctUS/1000)
	}
	return SysbenchIntervalLine(iv, threads, pct)
}

// sysbenchReport is the final report of the workload's sysbench test:
// the test's own figures, then the general statistics every test shares.
func sysbenchReport(workload string, s result.Summary, f *result.Fairness) string {
	rate := func(n uint64) float64 {
		if s.DurationS <= 0 {
			return 0
		}
		return float64(n) / s.DurationS
	}
	switch workload {
	case "cpu":
		return fmt.Sprintf("CPU speed:\n    events per second: %8.2f\n", rate(s.Events)) + generalStatistics(s, f)
	case "memory":
		out := fmt.Sprintf("Total operations: %d (%8.2f per second)\n\n", s.Events, rate(s.Events))
		if s.Reads+s.Writes > 0 {
			mib := s.ReadMiBPerS + s.WrittenMiBPerS
			out += fmt.Sprintf("%4.2f MiB transferred (%4.2f MiB/sec)\n\n", mib*s.DurationS, mib)
		}
		return out + generalStatistics(s, f)
	case "fileio":
		out := "\nFile operations:\n"
		out += fmt.Sprintf("    reads/s:                      %4.2f\n", rate(s.Reads))
		out += fmt.Sprintf("    writes/s:                     %4.2f\n", rate(s.Writes))
		out += fmt.Sprintf("    fsyncs/s:                     %4.2f\n", rate(s.Other))
		out += "\nThroughput:\n"
		out += fmt.Sprintf("    read, MiB/s:                  %4.2f\n", s.ReadMiBPerS)
		out += fmt.Sprintf("    written, MiB/s:               %4.2f\n", s.WrittenMiBPerS)
		return out + generalStatistics(s, f)
	}
	return SysbenchSummary(s, f)
}

// SysbenchSummary is sysbench 1.0.20's final report of one OLTP run.
func SysbenchSummary(s result.Summary, f *result.Fairness) string {
	rate := func(n uint64) float64 {
		if s.DurationS <= 0 {
			return 0
		}
		return float64(n) / s.DurationS
	}
	out := "SQL statistics:\n"
	out += "    queries performed:\n"
	out += fmt.Sprintf("        read:                            %d\n", s.Reads)
	out += fmt.Sprintf("        write:                           %d\n", s.Writes)
	out += fmt.Sprintf("        other:                           %d\n", s.Other)
	out += fmt.Sprintf("        total:                           %d\n", s.Queries)
	out += fmt.Sprintf("    transactions:                        %-6d (%.2f per sec.)\n", s.Events, rate(s.Events))
	out += fmt.Sprintf("    queries:                             %-6d (%.2f per sec.)\n", s.Queries, rate(s.Queries))
	out += fmt.Sprintf("    ignored errors:                      %-6d (%.2f per sec.)\n", s.Errors, rate(s.Errors))
	out += fmt.Sprintf("    reconnects:                          %-6d (%.2f per sec.)\n", s.Reconnects, rate(s.Reconnects))
	return out + generalStatistics(s, f)
}

// generalStatistics is the part of sysbench's report every test shares.
func generalStatistics(s result.Summary, f *result.Fairness) string {
	out := "\nGeneral statistics:\n"
	out += fmt.Sprintf("    total time:                          %.4fs\n", s.DurationS)
	out += fmt.Sprintf("    total number of events:              %d\n", s.Events)
	out += "\nLatency (ms):\n"
	out += fmt.Sprintf("         min: %39.2f\n", s.MinUS/1000)
	out += fmt.Sprintf("         avg: %39.2f\n", s.AvgUS/1000)
	out += fmt.Sprintf("         max: %39.2f\n", s.MaxUS/1000)
	if s.Percentile > 0 {
		out += fmt.Sprintf("        %3dth percentile: %27.2f\n", int(s.Percentile), s.PctUS/1000)
	} else {
		out += "         percentile stats:               disabled\n"
	}
	out += fmt.Sprintf("         sum: %39.2f\n", s.SumUS/1000)
	if f != nil {
		out += "\nThreads fairness:\n"
		out += fmt.Sprintf("    events (avg/stddev):           %.4f/%3.2f\n", f.EventsAvg, f.EventsStddev)
		out += fmt.Sprintf("    execution time (avg/stddev):   %.4f/%3.2f\n", f.ExecAvgS, f.ExecStddevS)
	}
	return out + "\n"
}
