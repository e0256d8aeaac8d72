package report

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// threeTargets is native, bridge (docker-proxy, ~40% slower) and host
// (within noise), three interleaved blocks of 10 one-second intervals,
// with a configuration difference and a warning.
func threeTargets() *result.Result {
	r := &result.Result{SchemaVersion: result.SchemaVersion, Complete: true, StartedAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Workload:    result.Workload{Name: "oltp_read_only", Options: map[string]any{"tables": 4, "table_size": 250000}},
		Plan:        result.Plan{Runs: 3, Points: []result.Point{{Threads: 8, TableSize: 250000}}},
		Environment: map[string]string{"kernel": "6.1.0-28-amd64", "cpu_model": "test CPU"},
		Warnings:    []string{"native: TPS varied by 6.0% (CV) across runs: the machine was noisy"}}
	tps := map[string][3]float64{"native": {1000, 1020, 980}, "bridge": {600, 618, 590}, "host": {1004, 1013, 985}}
	desc := map[string]result.Described{
		"native": {NetworkPath: "direct"},
		"bridge": {Image: "dbduel-test/mariadb:10.11.19", NetworkMode: "bridge", NetworkPath: "docker-proxy"},
		"host":   {Image: "dbduel-test/mariadb:10.11.19", NetworkMode: "host", NetworkPath: "direct"},
	}
	for b := 1; b <= 3; b++ {
		for _, name := range []string{"native", "bridge", "host"} {
			if b == 1 {
				r.Targets = append(r.Targets, result.Target{Name: name, Kind: map[bool]string{true: "local", false: "container"}[name == "native"],
					ServerVersion: "10.11.19-MariaDB", Described: desc[name]})
			}
			v := tps[name][b-1]
			tel := map[string]float64{"server_cpu_cores": 0.55}
			if name == "bridge" {
				tel["proxy_cpu_cores"] = 0.62
			}
			run := result.Run{Target: name, Block: b, Index: b, Complete: true,
				Summary: result.Summary{Figures: result.Figures{Events: uint64(10 * v), TPS: v, QPS: 16 * v, P95US: 8e6 / v}, Queries: uint64(160 * v), AvgUS: 4e6 / v, DurationS: 10}}
			for s := 1; s <= 10; s++ {
				run.Intervals = append(run.Intervals, result.Interval{Figures: result.Figures{TPS: v * (1 + float64(s%3)/100)}, TS: float64(s), SpanS: 1, Telemetry: result.TelemetryOf(tel)})
			}
			r.Runs = append(r.Runs, run)
		}
	}
	r.Parity = &result.Parity{VariablesDiff: []result.VariableDiff{
		{Name: "innodb_buffer_pool_size", Values: map[string]string{"native": "1073741824", "bridge": "134217728", "host": "1073741824"}}}}
	stats.Analyze(r)
	cause.Annotate(r)
	return r
}

func count(img image.Image, want color.RGBA, box image.Rectangle) int {
	n := 0
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c == want {
				n++
			}
		}
	}
	return n
}

// The slide: 1920×1080, every target's line in its colour, the baseline
// first in the legend (its swatch above the others), the legend under the
// plot and not over it, the Δ% chart right of the series.
func TestPNGIsASlide(t *testing.T) {
	var buf bytes.Buffer
	if err := PNG(&buf, threeTargets()); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != 1920 || b.Dy() != 1080 {
		t.Fatalf("size %v", b)
	}
	left := image.Rect(0, 0, b.Dx()*55/100, b.Dy())
	right := image.Rect(b.Dx()*60/100, 0, b.Dx(), b.Dy())
	// native's line is on top of host's (level with it: within noise).
	for i, name := range []string{"native", "bridge"} {
		if n := count(img, SeriesColors[i], left); n < 200 {
			t.Errorf("%s's colour: %d pixels in the time series", name, n)
		}
	}
	// The Δ% bars: bridge's and host's colours right of the series, never
	// the baseline's (it is the reference).
	if count(img, SeriesColors[1], right) < 100 || count(img, SeriesColors[2], right) < 100 {
		t.Errorf("Δ%% chart lacks its bars")
	}
	if n := count(img, SeriesColors[0], right); n != 0 {
		t.Errorf("the baseline has a Δ%% bar (%d pixels)", n)
	}
	// The legend's swatches, under the plot's X axis (below 68% of the
	// height) and left: the first (topmost) is the baseline's.
	firstRow := func(c color.RGBA) int {
		for y := b.Dy() * 68 / 100; y < b.Dy(); y++ {
			for x := 0; x < b.Dx()*12/100; x++ {
				if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == c {
					return y
				}
			}
		}
		return -1
	}
	blue, orange, green := firstRow(SeriesColors[0]), firstRow(SeriesColors[1]), firstRow(SeriesColors[2])
	if blue < 0 || orange < 0 || green < 0 || blue >= orange || orange >= green {
		t.Errorf("legend swatches at rows %d, %d, %d: native, bridge, host in that order", blue, orange, green)
	}
}

func TestTitleSaysWorkloadThreadsAndData(t *testing.T) {
	if got := Title(threeTargets()); got != "dbduel: oltp_read_only · 8 threads · 4×250000 rows" {
		t.Fatalf("title %q", got)
	}
}

// Markdown: runs grouped by target with a mean row, Δ% and CI rows as on
// screen, units on every CI, the verdict and the cause.
func TestMarkdownAsOnScreen(t *testing.T) {
	md := Markdown(threeTargets())
	for _, want := range []string{
		"| native | 1 |", "| native | geometric mean of 3 blocks |", "| bridge | Δ% |", "| bridge | CI95 |",
		"[-40.5%, -39.0%]",
		"cause: bridge: measured alongside: docker-proxy used 0.62 cores — 53% of the container side's CPU per transaction",
		"host: within noise (equivalent within ±5%",
		"*2 comparisons, Holm-adjusted at α 0.05*",
		"innodb_buffer_pool_size",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Grouped: native's three runs come before bridge's first.
	if strings.Index(md, "| native | 3 |") > strings.Index(md, "| bridge | 1 |") {
		t.Errorf("runs not grouped by target:\n%s", md)
	}
	// Every CI has its unit.
	for _, l := range strings.Split(md, "\n") {
		if strings.Contains(l, "CI95") && strings.Count(l, "[") != strings.Count(l, "%]") {
			t.Errorf("CI without %% in %q", l)
		}
	}
}

// HTML: a page with the verdict, cause, tables, charts, configuration
// differences, warnings and environment, fetching nothing.
func TestHTMLIsAWholePage(t *testing.T) {
	h := HTML(threeTargets())
	for _, want := range []string{
		"<h1>dbduel: oltp_read_only · 8 threads · 4×250000 rows</h1>",
		"class=\"verdict\"", "class=\"cause\"", "docker-proxy used 0.62 cores",
		"<td>Δ%</td>", "<td>[-40.5%, -39.0%]</td>", "data:image/png;base64,", "Configuration differences", "innodb_buffer_pool_size",
		"Warnings", "TPS varied by 6.0%", "Environment", "6.1.0-28-amd64",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	for _, bad := range []string{"http://", "https://", "<script", "<link"} {
		if strings.Contains(h, bad) {
			t.Errorf("html fetches or runs something: %q", bad)
		}
	}
}

// One thread is "1 thread" (reports said "1 threads").
func TestTitleSaysOneThread(t *testing.T) {
	r := threeTargets()
	r.Plan.Points[0].Threads = 1
	if got := Title(r); !strings.Contains(got, "· 1 thread ·") {
		t.Fatalf("title %q", got)
	}
}

// The reports show every block's Δ% and the latency from the merged
// histograms, as the finished screen does.
func TestReportsShowBlocksAndLatency(t *testing.T) {
	r := threeTargets()
	for i := range r.Runs {
		h := stats.NewHistogram()
		for v := int64(1000); v < 3000; v += 10 {
			h.RecordValue(v * int64(1+i%2))
		}
		enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		r.Runs[i].Histogram = string(enc)
	}
	md, html := Markdown(r), HTML(r)
	for _, want := range []string{"| target | estimate | every block's Δ% |", "| bridge | tps -", "| target | p50 ms | p95 ms | p99 ms | max ms | p95 Δ% |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if !strings.Contains(html, "Every block") || !strings.Contains(html, "merged histograms") {
		t.Error("html lacks the blocks or the latency")
	}
}

// The slide's latency panel is drawn from the runs' merged histograms, and
// left out for results without them.
func TestSlideLatencyPanel(t *testing.T) {
	r := threeTargets()
	if latencyPlot(r) != nil {
		t.Fatal("a latency panel without histograms")
	}
	for i := range r.Runs {
		h := stats.NewHistogram()
		h.RecordValue(int64(1000 + i))
		enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		r.Runs[i].Histogram = string(enc)
	}
	p := latencyPlot(r)
	if p == nil || p.X.Max <= 0 {
		t.Fatalf("panel %+v", p)
	}
	var png bytes.Buffer
	if err := PNG(&png, r); err != nil || png.Len() == 0 {
		t.Fatalf("png: %v", err)
	}
}

// A live session's report: a title that says so, a section per segment
// named by what changed, and an iteration's read-back and Δ vs iteration 1.
func TestLiveSessionReport(t *testing.T) {
	r := threeTargets()
	r.Live = &result.Live{SliceS: 3, SettleS: 1}
	r.Plan.Points = append(r.Plan.Points, result.Point{Threads: 8, TableSize: 250000})
	r.Runs = append(r.Runs, r.Runs...)
	for i := len(r.Runs) / 2; i < len(r.Runs); i++ {
		r.Runs[i].Point, r.Runs[i].Block = 1, r.Runs[i].Block+3
	}
	r.Segments = []result.Segment{{Point: 0, WhatChanged: "start", Workload: "oltp_read_only", Threads: 8, Rounds: 3, Iteration: 1},
		{Point: 1, WhatChanged: "iteration 2: tuned.cnf changed (bridge restarted)", Workload: "oltp_read_only", Threads: 8, Rounds: 3, Iteration: 2,
			ReadBack: map[string]map[string]string{"bridge": {"innodb_buffer_pool_size": "268435456"}}}}
	stats.Analyze(r)
	md := Markdown(r)
	for _, want := range []string{"# dbduel: oltp_read_only · live session of 2 segments",
		"## segment 1: start · oltp_read_only · 8 threads · 3 round(s)",
		"## segment 2: iteration 2: tuned.cnf changed (bridge restarted)",
		"bridge restarted (iteration 2), reads back: innodb_buffer_pool_size=268435456",
		"bridge vs iteration 1: Δ TPS +0.0% [", "(3 vs 3 rounds, Welch t on logs"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if html := HTML(r); !strings.Contains(html, "bridge vs iteration 1: Δ TPS") {
		t.Errorf("the HTML report lacks the iteration's Δ")
	}
}

// A system workload's report speaks its units: events, events/s and MiB/s
// in the runs table, events/s on the slide; no queries.
func TestSystemWorkloadReportsSpeakEvents(t *testing.T) {
	r := threeTargets()
	r.Workload.Name = "cpu"
	md := Markdown(r)
	if !strings.Contains(md, "| target | run | events | events/s | MiB/s | avg ms | p95 ms |") || strings.Contains(md, "queries") || strings.Contains(md, "| QPS") {
		t.Fatalf("cpu's runs table:\n%s", md)
	}
	if name, _ := headline(r); name != "events/s" {
		t.Fatalf("the slide draws %q", name)
	}
}
