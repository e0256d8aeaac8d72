package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dbduel/dbduel/engine/result"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestDescribeHandComputed(t *testing.T) {
	d := Describe([]float64{10, 12, 14, 16})
	// mean 13, sample stddev sqrt(20/3) = 2.5820, t(3) = 3.1824
	if !near(d.Mean, 13, 1e-9) || !near(d.Median, 13, 1e-9) || !near(d.Stddev, 2.581989, 1e-6) {
		t.Fatalf("mean/median/sd: %+v", d)
	}
	half := 3.182446 * 2.581989 / 2
	if !near(d.CILow, 13-half, 1e-4) || !near(d.CIHigh, 13+half, 1e-4) || !strings.Contains(d.CIMethod, "Student t") {
		t.Fatalf("t CI: %+v", d)
	}
	if !near(d.CV, 2.581989/13, 1e-6) || d.Min != 10 || d.Max != 16 {
		t.Fatalf("cv/min/max: %+v", d)
	}
}

func TestMedianCIOrderStatistics(t *testing.T) {
	// n=6: P(B(6,.5) <= 0) = 1/64 <= 0.025 < P(B<=1) = 7/64, so l=1: [x(1), x(6)].
	lo, hi, ok := MedianCI([]float64{1, 2, 3, 4, 5, 6}, 0.95)
	if !ok || lo != 1 || hi != 6 {
		t.Fatalf("n=6: [%v, %v] %v", lo, hi, ok)
	}
	// n=10: P(B<=1) = 11/1024 = 0.0107 <= 0.025 < P(B<=2) = 56/1024, so l=2: [x(2), x(9)].
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	lo, hi, ok = MedianCI(xs, 0.95)
	if !ok || lo != 2 || hi != 9 {
		t.Fatalf("n=10: [%v, %v] %v", lo, hi, ok)
	}
	if _, _, ok := MedianCI(xs[:5], 0.95); ok {
		t.Fatal("n=5 must be too small for a median CI")
	}
	if d := Describe(xs); !strings.Contains(d.CIMethod, "order statistics") || d.CILow != 2 || d.CIHigh != 9 {
		t.Fatalf("Describe n=10: %+v", d)
	}
}

func TestComparePairedTOnLogRatios(t *testing.T) {
	// log-ratios ln(0.9), ln(0.8), ln(0.85): mean m, sd s, t(2)=4.302653.
	base := []float64{100, 100, 100}
	tgt := []float64{90, 80, 85}
	p := ComparePaired(tgt, base)
	logs := []float64{math.Log(0.9), math.Log(0.8), math.Log(0.85)}
	m := (logs[0] + logs[1] + logs[2]) / 3
	v := 0.0
	for _, l := range logs {
		v += (l - m) * (l - m)
	}
	s := math.Sqrt(v / 2)
	half := 4.302653 * s / math.Sqrt(3)
	if !near(p.Ratio, math.Exp(m), 1e-9) || !near(p.Low, math.Exp(m-half), 1e-5) || !near(p.High, math.Exp(m+half), 1e-5) {
		t.Fatalf("paired t: %+v, want ratio %v [%v, %v]", p, math.Exp(m), math.Exp(m-half), math.Exp(m+half))
	}
	if p.N != 3 || !p.HasCI || !strings.Contains(p.Method, "paired t") {
		t.Fatalf("method: %+v", p)
	}
}

// TestComparePairedCoverage simulates paired blocks with a known true
// ratio and checks that the 95% CI contains it in at least 93% of trials at
// n = 8, 12 and 20 (the percentile bootstrap used before covered 0.88-0.91).
func TestComparePairedCoverage(t *testing.T) {
	const trials = 2000
	rng := rand.New(rand.NewPCG(7, 11))
	for _, trueRatio := range []float64{0.9, 1} { // 1: an A/A comparison, whose CI must hold 0%
		for _, n := range []int{3, 8, 12, 20} {
			hits := 0
			for range trials {
				base, tgt := make([]float64, n), make([]float64, n)
				for i := range n {
					block := 1000 * math.Exp(0.1*rng.NormFloat64()) // block effect shared by both sides
					base[i] = block * math.Exp(0.04*rng.NormFloat64())
					tgt[i] = block * trueRatio * math.Exp(0.04*rng.NormFloat64())
				}
				p := ComparePaired(tgt, base)
				if !p.HasCI || !strings.HasPrefix(p.Method, "paired t on log-ratios") {
					t.Fatalf("n=%d: %+v", n, p)
				}
				if p.Low <= trueRatio && trueRatio <= p.High {
					hits++
				}
			}
			cov := float64(hits) / trials
			t.Logf("ratio %.1f n=%2d coverage %.3f", trueRatio, n, cov)
			if cov < 0.93 {
				t.Errorf("ratio %.1f n=%d: coverage %.3f < 0.93", trueRatio, n, cov)
			}
		}
	}
}

// TestComparePairedNoNarrowingJump: the CI's width follows t(n-1)·s/√n from
// 7 to 8 blocks (the bootstrap switch at 8 narrowed it by about 30%).
func TestComparePairedNoNarrowingJump(t *testing.T) {
	base := []float64{100, 101, 99, 100, 102, 98, 100, 101}
	tgt := []float64{90, 92, 88, 91, 89, 90, 93, 87}
	p7, p8 := ComparePaired(tgt[:7], base[:7]), ComparePaired(tgt, base)
	width := func(p Paired) float64 { return math.Log(p.High) - math.Log(p.Low) }
	logs := func(n int) []float64 {
		var xs []float64
		for i := range n {
			xs = append(xs, math.Log(tgt[i]/base[i]))
		}
		return xs
	}
	for _, c := range []struct {
		p Paired
		n int
	}{{p7, 7}, {p8, 8}} {
		want := 2 * TQuantile(c.n-1) * stat.StdDev(logs(c.n), nil) / math.Sqrt(float64(c.n))
		if !near(width(c.p), want, 1e-9) {
			t.Fatalf("n=%d: log width %v, want %v (t interval)", c.n, width(c.p), want)
		}
	}
}

// The blocks hint is precision, not post-hoc power: the smallest n whose
// t interval (not z) at the spread seen is ±X%, whatever the estimate.
// sd 0.05, ±5% (ln 1.05 = 0.04879): t(5)·0.05/√6 = 0.0525 > 0.04879, t(6)·0.05/√7
// = 0.0462: 7 blocks; z would say (1.96·0.05/0.04879)² = 4.03 -> 5.
func TestBlocksForIsATPrecisionTarget(t *testing.T) {
	if n := BlocksFor(0.05, 5); n != 7 {
		t.Fatalf("BlocksFor(0.05, 5) = %d, want 7", n)
	}
	for _, c := range []struct{ sd, pct float64 }{{0.04, 5}, {0.1, 2}, {0.3, 5}, {0.02, 1}} {
		n := BlocksFor(c.sd, c.pct)
		goal := math.Log1p(c.pct / 100)
		if TQuantile(n-1)*c.sd/math.Sqrt(float64(n)) > goal || (n > 2 && TQuantile(n-2)*c.sd/math.Sqrt(float64(n-1)) <= goal) {
			t.Errorf("BlocksFor(%v, %v) = %d is not the smallest n reaching ±%v%%", c.sd, c.pct, n, c.pct)
		}
	}
	// The line does not depend on the estimate: a 0.1% and a 30% effect
	// with the same spread get the same hint (the old power hint said 643
	// blocks for the first).
	a := PrecisionLine(Paired{Ratio: 0.999, Low: 0.95, High: 1.05, N: 4, HasCI: true, SD: 0.05}, 5)
	b := PrecisionLine(Paired{Ratio: 0.7, Low: 0.665, High: 0.735, N: 4, HasCI: true, SD: 0.05}, 5)
	if !strings.HasSuffix(a, "about 7 blocks for ±5%") || !strings.HasSuffix(b, "about 7 blocks for ±5%") {
		t.Fatalf("precision lines %q, %q", a, b)
	}
	if l := PrecisionLine(Paired{Ratio: 1, Low: 0.98, High: 1.02, N: 9, HasCI: true, SD: 0.02}, 5); l != "" {
		t.Fatalf("a CI narrower than ±5%% needs no line: %q", l)
	}
}

func TestLatencyVerdictDirection(t *testing.T) {
	ci := func(r, lo, hi float64) Paired {
		return Paired{Ratio: r, Low: lo, High: hi, N: 3, HasCI: true, Method: "paired t on log-ratios"}
	}
	cases := []struct {
		metric string
		higher bool
		p      Paired
		want   string
	}{
		{"tps", true, ci(0.8, 0.75, 0.85), "c is slower by 20.0%"},
		{"tps", true, ci(1.2, 1.1, 1.3), "c is faster by 20.0%"},
		{"qps", true, ci(0.5, 0.4, 0.6), "c is slower by 50.0%"},
		{"p95", false, ci(2.301, 1.831, 2.892), "c is slower by 130.1% [83.1%, 189.2%] in p95 (p95 higher)"},
		{"p99", false, ci(1.5, 1.2, 1.8), "c is slower by 50.0%"},
		{"avg", false, ci(0.7, 0.6, 0.8), "c is faster by 30.0% [20.0%, 40.0%] in avg (avg lower)"},
	}
	for _, c := range cases {
		if v := Verdict("c", "n", c.metric, c.p, c.higher); !strings.Contains(v, c.want) {
			t.Errorf("%s ratio %v: %q, want %q", c.metric, c.p.Ratio, v, c.want)
		}
	}
	// Every metric Analyze compares has the right direction.
	for _, m := range metrics {
		throughput := map[string]bool{"tps": true, "qps": true, "nopm": true, "tpm": true}
		if want := throughput[m.name]; m.higherIsBetter != want {
			t.Errorf("metric %s: higherIsBetter %v", m.name, m.higherIsBetter)
		}
	}
}

func TestVerdictWords(t *testing.T) {
	slow := Verdict("container", "native", "tps", Paired{Ratio: 0.9, Low: 0.86, High: 0.94, N: 5, HasCI: true, Method: "paired t on log-ratios"}, true)
	if !strings.Contains(slow, "container is slower by 10.0% [6.0%, 14.0%]") || !strings.Contains(slow, "n=5 blocks") {
		t.Fatalf("verdict: %q", slow)
	}
	none := Verdict("container", "native", "tps", Paired{Ratio: 0.99, Low: 0.95, High: 1.03, N: 3, HasCI: true, Method: "paired t"}, true)
	if !strings.Contains(none, "no significant") {
		t.Fatalf("verdict: %q", none)
	}
	single := Verdict("c", "n", "tps", Paired{Ratio: 0.5, N: 1, Method: "single run: no confidence interval; use --runs"}, true)
	if !strings.Contains(single, "-50.0%") || !strings.Contains(single, "use --runs") {
		t.Fatalf("verdict: %q", single)
	}
}

func TestAnalyzePairsByBlock(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "native"}, {Name: "container"}}}
	for b, v := range [][2]float64{{100, 50}, {110, 55}, {90, 45}} {
		r.Runs = append(r.Runs,
			result.Run{Target: "native", Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[0], QPS: v[0] * 20, P95US: 2000, P99US: 3000}, AvgUS: 1000}},
			result.Run{Target: "container", Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[1], QPS: v[1] * 20, P95US: 4000, P99US: 6000}, AvgUS: 2000}})
	}
	Analyze(r)
	var tps *result.Comparison
	for i := range r.Comparisons {
		if r.Comparisons[i].Metric == "tps" {
			tps = &r.Comparisons[i]
		}
	}
	if tps == nil || !near(tps.Ratio, 0.5, 1e-9) || !near(tps.DeltaPct, -50, 1e-9) || tps.N != 3 {
		t.Fatalf("tps comparison: %+v", tps)
	}
	if r.Stats["native"].TPS.N != 3 || !near(r.Stats["native"].TPS.Mean, 100, 1e-9) {
		t.Fatalf("stats: %+v", r.Stats["native"].TPS)
	}
}

// Workers record while the reporter swaps: no event may be lost or counted twice.
func TestRecorderSwapUnderConcurrency(t *testing.T) {
	recs := []*Recorder{NewRecorder(false), NewRecorder(true), NewRecorder(false), NewRecorder(true)}
	const perWorker = 20000
	var wg sync.WaitGroup
	for _, r := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				d := time.Duration(i%1000+1) * time.Microsecond
				r.RecordEvent(d, d, 2, 1, 1, false)
			}
		}()
	}
	var total Counters
	hist, svc := NewHistogram(), NewHistogram()
	stop := make(chan struct{})
	go func() { wg.Wait(); close(stop) }()
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		for _, r := range recs {
			r.Swap(&total, hist, svc)
		}
	}
	want := uint64(len(recs) * perWorker)
	if total.Events != want || uint64(hist.TotalCount()) != want || total.Reads != 2*want || total.Queries() != 4*want {
		t.Fatalf("events %d, histogram %d, reads %d; want %d", total.Events, hist.TotalCount(), total.Reads, want)
	}
	if uint64(svc.TotalCount()) != want/2 {
		t.Fatalf("service histogram %d, want %d (two recorders keep it)", svc.TotalCount(), want/2)
	}
	if total.MinNS != 1000 || total.MaxNS != 1000*1000 {
		t.Fatalf("min/max %d/%d", total.MinNS, total.MaxNS)
	}
}

// A finished run's histograms are reused, never with the old run's values
// in them: a recorder released with events still unswapped hands its
// histograms on empty, and a released recorder swaps nothing.
func TestRecorderReleaseReusesEmptyHistograms(t *testing.T) {
	for range 50 {
		old := NewRecorder(true)
		old.RecordEvent(5*time.Millisecond, 3*time.Millisecond, 1, 0, 0, false)
		old.Release()
		// Made straight after the release: its histograms are the released
		// ones whenever the pool kept them.
		fresh := NewRecorder(true)
		fresh.RecordEvent(2*time.Millisecond, 2*time.Millisecond, 1, 0, 0, false)
		var c Counters
		hist, svc := NewHistogram(), NewHistogram()
		fresh.Swap(&c, hist, svc)
		if hist.TotalCount() != 1 || svc.TotalCount() != 1 || hist.Max() >= 3000 {
			t.Fatalf("a new recorder's histograms held %d/%d values (max %d µs): a released run's leaked in",
				hist.TotalCount(), svc.TotalCount(), hist.Max())
		}
		c = Counters{}
		hist.Reset()
		svc.Reset()
		old.Swap(&c, hist, svc) // after Release: its counters, no histogram
		if c.Events != 1 || hist.TotalCount() != 0 || svc.TotalCount() != 0 {
			t.Fatalf("released recorder swapped %d events, %d/%d values", c.Events, hist.TotalCount(), svc.TotalCount())
		}
		if old.hist != nil || old.svc != nil {
			t.Fatal("a swap after Release gave the released recorder histograms again")
		}
		if e, _ := old.Fairness(); e != 1 {
			t.Fatalf("fairness after Release: %d events", e)
		}
		fresh.Release()
	}
}

// A recorder's interval swap allocates no histogram once the pool holds
// one: a long run at many threads must not churn 188 KB per thread and
// interval (nor a plan per run). Without reuse a swap makes 4 allocations
// (two histograms of two each); under -race sync.Pool drops a quarter of
// what it is given at random, about 1 a swap, so the bound is looser there.
func TestRecorderSwapReusesHistograms(t *testing.T) {
	limit := 0.5
	if raceDetector {
		limit = 2.5
	}
	r := NewRecorder(true)
	hist, svc := NewHistogram(), NewHistogram()
	var c Counters
	r.Swap(&c, hist, svc) // the pool now holds the exchanged pair
	allocs := testing.AllocsPerRun(100, func() {
		r.RecordEvent(time.Millisecond, time.Millisecond, 1, 0, 0, false)
		r.Swap(&c, hist, svc)
	})
	if allocs > limit {
		t.Fatalf("%.1f allocations per swap: the exchange histograms are not reused", allocs)
	}
}

func TestThresholds(t *testing.T) {
	for _, bad := range []string{"tps", "tps<5", "latency<5%", "tps=5%", ""} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	th, err := ParseThreshold("tps<-5%")
	if err != nil || th.Metric != "tps" || !th.Less || th.Pct != -5 {
		t.Fatalf("%+v %v", th, err)
	}
	cs := []result.Comparison{
		{Target: "a", Metric: "tps", HasCI: true, CILowPct: -14, CIHighPct: -6},   // wholly below -5%: crossed
		{Target: "b", Metric: "tps", HasCI: true, CILowPct: -14, CIHighPct: -4},   // straddles: not crossed
		{Target: "c", Metric: "tps", HasCI: false, DeltaPct: -50},                 // no CI: unjudged
		{Target: "d", Metric: "p95", HasCI: true, CILowPct: -30, CIHighPct: -20},  // other metric
		{Target: "e", Metric: "tps", HasCI: true, CILowPct: -3, CIHighPct: +4},    // wholly above -5%: passes
		{Target: "n-aa", Metric: "tps", HasCI: true, CILowPct: -9, CIHighPct: -6}, // the A/A copy: never judged
	}
	j := th.Judge(cs, DefaultAlpha)
	if len(j.Crossed) != 1 || j.Crossed[0].Target != "a" || len(j.Unjudged) != 1 || j.Unjudged[0].Target != "c" ||
		len(j.Straddled) != 1 || j.Straddled[0].Target != "b" {
		t.Fatalf("judgement %+v", j)
	}
	up, _ := ParseThreshold("p95>+10%")
	if j := up.Judge([]result.Comparison{{Metric: "p95", HasCI: true, CILowPct: 12, CIHighPct: 40}}, DefaultAlpha); len(j.Crossed) != 1 {
		t.Fatal("p95 CI wholly above +10% not crossed")
	}
	// How many blocks would settle a straddle: t precision for the distance
	// from the estimate to the threshold (−8% vs −5%, sd 0.04).
	c := result.Comparison{Metric: "tps", DeltaPct: -8, SDLog: 0.04}
	d := math.Abs(math.Log(0.92) - math.Log(0.95))
	if got, want := th.Settle(c), fmt.Sprintf("about %d blocks", BlocksFor(0.04, math.Expm1(d)*100)); !strings.HasPrefix(got, want) {
		t.Fatalf("settle: %q, want %q", got, want)
	}
}

func TestCompareFiles(t *testing.T) {
	mk := func(tps ...float64) *result.Result {
		r := &result.Result{Workload: result.Workload{Name: "oltp_read_only", Options: map[string]any{"tables": 1, "table_size": 100}},
			Plan: result.Plan{Points: []result.Point{{Threads: 1, TableSize: 100}}}}
		for i, v := range tps {
			r.Runs = append(r.Runs, result.Run{Target: "native", Block: i + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v, QPS: v, P95US: 2e6 / v, P99US: 3e6 / v}, AvgUS: 1e6 / v}})
		}
		return r
	}
	cs, err := CompareFiles(mk(100, 102, 98), mk(80, 82, 78))
	if err != nil {
		t.Fatal(err)
	}
	var tps result.Comparison
	for _, c := range cs {
		if c.Metric == "tps" {
			tps = c
		}
	}
	if !tps.HasCI || !near(tps.DeltaPct, -20, 0.5) || tps.CIHighPct >= 0 || !strings.Contains(tps.Verdict, "slower") {
		t.Fatalf("%+v", tps)
	}
	// Outside TPC-C there is no NOPM or TPM: no comparison of them (it
	// read -100%, "no runs", before).
	for _, c := range cs {
		if c.Metric == "nopm" || c.Metric == "tpm" {
			t.Fatalf("an OLTP result compared %s: %+v", c.Metric, c)
		}
	}
	other := mk(100)
	other.Workload.Name = "oltp_point_select"
	if _, err := CompareFiles(mk(100), other); err == nil {
		t.Fatal("different workloads compared")
	}
	size := mk(100)
	size.Workload.Options["table_size"] = 5
	if _, err := CompareFiles(mk(100), size); err == nil {
		t.Fatal("different table sizes compared")
	}
}

func TestAnalyzeWarnsWhenServerCounterDisagrees(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "native"}}}
	r.Runs = []result.Run{
		{Target: "native", Index: 1, Block: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 10}},
			Honesty: &result.Honesty{Counter: "Questions", ServerQueries: 1000, DbduelQueries: 900, DiffPct: -10}},
		{Target: "native", Index: 2, Block: 2, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 10}},
			Honesty: &result.Honesty{Counter: "Questions", ServerQueries: 1000, DbduelQueries: 1000}},
	}
	Analyze(r)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "native run 1") || !strings.Contains(r.Warnings[0], "-10.00%") {
		t.Fatalf("warnings: %q", r.Warnings)
	}
}

// compare refuses results that measured different things, naming the option.
func TestCompareFilesRefusesDifferentMeasurements(t *testing.T) {
	mk := func(edit func(*result.Result)) *result.Result {
		r := &result.Result{Workload: result.Workload{Name: "oltp_read_only", Options: map[string]any{"tables": 1, "rand_type": "special", "point_selects": 10, "rand_seed": 0}},
			Plan: result.Plan{TimeS: 10, Percentile: 95, Points: []result.Point{{Threads: 2, TableSize: 100}}}}
		for i := range 2 {
			r.Runs = append(r.Runs, result.Run{Target: "n", Block: i + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 100, QPS: 100, P95US: 1, P99US: 1}, AvgUS: 1}})
		}
		if edit != nil {
			edit(r)
		}
		return r
	}
	base := mk(nil)
	cases := map[string]func(*result.Result){
		"--rate differs: 0 (closed loop) vs 100/s (open loop)": func(r *result.Result) { r.Plan.Rate = 100 },
		"option --rand-type differs: special vs uniform":       func(r *result.Result) { r.Workload.Options["rand_type"] = "uniform" },
		"option --point-selects differs: 10 vs 5":              func(r *result.Result) { r.Workload.Options["point_selects"] = 5 },
		"--time differs: 10 s vs 20 s":                         func(r *result.Result) { r.Plan.TimeS = 20 },
		"--warmup-time differs: 0 s vs 5 s":                    func(r *result.Result) { r.Plan.WarmupS = 5 },
		"--percentile differs: 95 vs 99":                       func(r *result.Result) { r.Plan.Percentile = 99 },
		"threads differ: 2 vs 4; compare is for changes to the targets — sweep threads in one run with --threads 2,4": func(r *result.Result) { r.Plan.Points[0].Threads = 4 },
	}
	for want, edit := range cases {
		_, err := CompareFiles(base, mk(edit))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
	// Another --rand-seed measures the same thing.
	if cs, err := CompareFiles(base, mk(func(r *result.Result) { r.Workload.Options["rand_seed"] = 7 })); err != nil || len(cs) == 0 || cs[0].N != 2 || cs[0].NBaseline != 2 {
		t.Fatalf("rand_seed alone: %v %+v", err, cs)
	}
	renamed := mk(func(r *result.Result) {
		for i := range r.Runs {
			r.Runs[i].Target = "m"
		}
	})
	if _, err := CompareFiles(base, renamed); err == nil || !strings.Contains(err.Error(), "BASE has n; NEW has m") {
		t.Fatalf("target names: %v", err)
	}
}

func TestAnalyzeWarnsOfUnservedArrivals(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "a"}}, Runs: []result.Run{
		{Target: "a", Index: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 10}, UnservedEvents: 900, UnservedMaxWaitUS: 950000}}}}
	Analyze(r)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "900 arrivals were still queued") || !strings.Contains(r.Warnings[0], "950 ms") {
		t.Fatalf("warnings: %q", r.Warnings)
	}
}

// --runs 2 with the second block cut short: the verdict does not claim a
// single-run plan, and the partial run is not averaged.
func TestCutBlockIsNotASingleRunPlan(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "n"}, {Name: "c"}}, Plan: result.Plan{Runs: 2}}
	r.Runs = []result.Run{
		{Target: "n", Block: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 100, QPS: 100, P95US: 1, P99US: 1}, AvgUS: 1}},
		{Target: "c", Block: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 50, QPS: 50, P95US: 2, P99US: 2}, AvgUS: 2}},
		{Target: "n", Block: 2, Complete: false, Summary: result.Summary{Figures: result.Figures{TPS: 10, QPS: 10, P95US: 1, P99US: 1}, AvgUS: 1}},
	}
	Analyze(r)
	for _, c := range r.Comparisons {
		if c.Metric == "tps" {
			if strings.Contains(c.Verdict, "single run") || !strings.Contains(c.Verdict, "1 block: no CI; only 1 of the 2 planned blocks complete") ||
				strings.Contains(c.Verdict, "slower") || c.N != 1 {
				t.Fatalf("verdict: %q", c.Verdict)
			}
		}
	}
	if d := r.Stats["n"].TPS; d.N != 1 || d.Mean != 100 {
		t.Fatalf("the cut run was averaged: %+v", d)
	}
}

// --calibrate: the A/A copy is a check of the design, never a threshold.
// An A/A interval containing 0 says no bias was detected and how large a
// bias the check would find (never "calibrated"), and qualifies no verdict; one excluding 0 marks every verdict of its point
// suspect. (The old reading called a clear −3% "at the edge of the noise"
// because the A/A half-width was wider.)
func TestAACheckIsADesignCheck(t *testing.T) {
	build := func(aa [4]float64) *result.Result {
		r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "n-aa"}, {Name: "c"}, {Name: "d"}}, Plan: result.Plan{Runs: 4}}
		for b := range 4 {
			v := [4]float64{100, aa[b], []float64{50, 51, 49, 50}[b], []float64{97, 98, 96, 97}[b]}
			for i, name := range []string{"n", "n-aa", "c", "d"} {
				r.Runs = append(r.Runs, result.Run{Target: name, Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[i], QPS: v[i], P95US: 1, P99US: 1}, AvgUS: 1}})
			}
		}
		Analyze(r)
		return r
	}
	verdicts := func(r *result.Result) map[string]result.Comparison {
		m := map[string]result.Comparison{}
		for _, c := range r.Comparisons {
			if c.Metric == "tps" {
				m[c.Target] = c
			}
		}
		return m
	}
	// A/A around 0, wider than d's whole gap: d's clear −3% stays a verdict.
	r := build([4]float64{101, 99, 100, 102})
	nf := r.NoiseFloor
	if nf == nil || !nf.HasCI || nf.N != 4 || !nf.NoBiasDetected || !strings.HasPrefix(nf.Reading, "A/A: +0.5% [") ||
		!strings.Contains(nf.Reading, "in tps: no bias detected; at the spread observed, a bias of ±") || !strings.HasSuffix(nf.Reading, "% would be found with 80% power") ||
		strings.Contains(nf.Reading, "calibrated") || nf.DetectablePct <= 0 {
		t.Fatalf("noise floor: %+v", nf)
	}
	if AALine(r, 0) != nf.Reading || len(r.NoiseFloors) < 2 {
		t.Fatalf("A/A line %q, floors %+v", AALine(r, 0), r.NoiseFloors)
	}
	v := verdicts(r)
	if d := v["d"]; !strings.HasPrefix(d.Verdict, "d is slower by 3.0%") || strings.Contains(d.Verdict, "A/A") || strings.Contains(d.Verdict, "noise") || d.Suspect {
		t.Errorf("d (−3%%, CI excluding 0): %+v", d)
	}
	// A/A biased (+5% every block): every verdict of the point is suspect.
	r = build([4]float64{105, 104, 106, 105})
	if nf := r.NoiseFloor; nf.NoBiasDetected || !strings.Contains(nf.Reading, "A/A: identical targets differ by +5.0%") {
		t.Fatalf("biased A/A: %+v", nf)
	}
	for name, c := range verdicts(r) {
		if name == "n-aa" {
			if c.Suspect {
				t.Error("the A/A row is not suspect of itself")
			}
			continue
		}
		if !c.Suspect || !strings.Contains(c.Verdict, "suspect: the A/A check failed here") {
			t.Errorf("%s: %+v", name, c)
		}
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "A/A: identical targets differ") }) {
		t.Errorf("warnings: %q", r.Warnings)
	}
}

// simulateStein runs plans of Stein's two-stage rule: a pilot of
// SteinPilot blocks fixes N from its spread (at most maxBlocks), and the
// final interval uses the pilot's sd with t(n0−1). It returns the coverage
// of the true ratio over all plans, over the plans that reached their N
// (stopped by the CI target), the share of plans --max-runs capped, and
// the mean blocks.
func simulateStein(rng *rand.Rand, trials int, sd, targetPct float64, maxBlocks int) (all, reached, cappedShare, blocks float64) {
	trueRatio := 0.95
	hits, hitsReached, nReached, total := 0, 0, 0, 0
	for range trials {
		var logs []float64
		draw := func() {
			block := 1000 * math.Exp(0.1*rng.NormFloat64())
			b := block * math.Exp(sd/math.Sqrt2*rng.NormFloat64())
			t := block * trueRatio * math.Exp(sd/math.Sqrt2*rng.NormFloat64())
			logs = append(logs, math.Log(t/b))
		}
		for range SteinPilot {
			draw()
		}
		s0 := stat.StdDev(logs, nil)
		n := SteinBlocks(s0, SteinPilot, targetPct)
		capped := n > maxBlocks
		for len(logs) < min(n, maxBlocks) {
			draw()
		}
		_, lo, hi := SteinInterval(logs, s0, SteinPilot)
		in := lo <= trueRatio && trueRatio <= hi
		total += len(logs)
		if in {
			hits++
		}
		if !capped {
			nReached++
			if in {
				hitsReached++
			}
		}
	}
	return float64(hits) / float64(trials), float64(hitsReached) / float64(max(nReached, 1)), 1 - float64(nReached)/float64(trials), float64(total) / float64(trials)
}

// --runs auto in a seeded simulation: Stein's two-stage rule keeps its
// 95% over all plans, and among the plans stopped by the CI target where
// --max-runs rarely binds (the old rule, two narrow CIs in a row, covered
// 0.83 there). Where the cap binds often, the plans that reached their N
// are the ones whose pilot happened to spread little, and they cover
// less: the docs say so. docs/measurement.md's "--runs auto" table is this
// test's log (go test -v -run TestSteinRuleCoverage ./engine/stats).
func TestSteinRuleCoverage(t *testing.T) {
	trials := 4000
	if testing.Short() {
		trials = 800
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range []struct{ sd, targetPct float64 }{{0.02, 5}, {0.05, 5}, {0.05, 3}, {0.08, 5}, {0.15, 5}} {
		all, reached, capped, blocks := simulateStein(rng, trials, c.sd, c.targetPct, 40)
		t.Logf("| %.2f | ±%g%% | %.3f | %.3f | %.0f%% | %.1f |", c.sd, c.targetPct, all, reached, capped*100, blocks)
		if all < minCoverage(trials) || (capped < 0.1 && reached < minCoverage(trials)) {
			t.Errorf("sd %.2f target %g: coverage %.3f overall, %.3f when the target was reached (%.0f%% capped)", c.sd, c.targetPct, all, reached, capped*100)
		}
	}
}

// The rule itself on a result: nothing settles before the pilot; at the
// pilot the plan records the spread and the blocks it asks for; the point
// settles when it has them; Analyze then gives the Stein interval.
func TestSteinRuleOnAResult(t *testing.T) {
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "c"}}, Plan: result.Plan{Runs: 80, PrecisionPct: 5}}
	rule := &SteinRule{TargetPct: 5}
	rng := rand.New(rand.NewPCG(1, 2))
	settledAt := 0
	for n := 1; n <= 80 && settledAt == 0; n++ {
		base := 1000 * math.Exp(0.05*rng.NormFloat64())
		r.Runs = append(r.Runs,
			result.Run{Target: "n", Block: n, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: base}}},
			result.Run{Target: "c", Block: n, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: base * 0.9 * math.Exp(0.06*rng.NormFloat64())}}})
		if rule.Step(r, 0, n) {
			settledAt = n
		}
		if n < SteinPilot && len(r.Plan.Stein) > 0 {
			t.Fatal("planned before the pilot")
		}
	}
	if len(r.Plan.Stein) != 1 {
		t.Fatalf("stein: %+v", r.Plan.Stein)
	}
	sp := r.Plan.Stein[0]
	if want := SteinBlocks(sp.PilotSD["c"], SteinPilot, 5); settledAt != want || sp.PlannedBlocks != want {
		t.Fatalf("settled at %d, planned %d, want %d", settledAt, sp.PlannedBlocks, want)
	}
	Analyze(r)
	c := r.Comparison("c", "tps", 0)
	if c == nil || !strings.Contains(c.Method, "Stein two-stage") || c.HalfWidthPct > 5.01 {
		t.Fatalf("comparison %+v", c)
	}
}

// Noisy intervals are counted per point (a point-1 verdict said "3 of 12
// flagged" when none of point 1's were), and the verdict says how far the
// estimate moves without the blocks that hold one.
func TestVerdictSaysWhenIntervalsWereNoisy(t *testing.T) {
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "c"}},
		Plan: result.Plan{Runs: 3, Points: []result.Point{{Threads: 1}, {Threads: 2}}}}
	tps := map[string][]float64{"n": {100, 104, 98}, "c": {90, 92, 70}}
	for pt := range 2 {
		for b := 1; b <= 3; b++ {
			for _, name := range []string{"n", "c"} {
				run := result.Run{Target: name, Block: b, Point: pt, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: tps[name][b-1], QPS: 100, P95US: 1, P99US: 1}, AvgUS: 1}}
				for i := 0; i < 3; i++ {
					run.Intervals = append(run.Intervals, result.Interval{Noise: result.Noise{Flagged: pt == 0 && name == "c" && b == 3 && i == 0}})
				}
				r.Runs = append(r.Runs, run)
			}
		}
	}
	Analyze(r)
	p0, p1 := r.Comparison("c", "tps", 0), r.Comparison("c", "tps", 1)
	want := fmt.Sprintf("; 1 of 18 intervals behind it were flagged noisy; without the 1 block(s) holding one: %+.1f%%", (ComparePaired([]float64{90, 92}, []float64{100, 104}).Ratio-1)*100)
	if !strings.Contains(p0.Verdict, want) || !strings.Contains(p0.Verdict, "moved +") {
		t.Fatalf("point 0 verdict: %q, want %q", p0.Verdict, want)
	}
	if strings.Contains(p1.Verdict, "flagged") {
		t.Fatalf("point 1 had no flagged interval: %q", p1.Verdict)
	}
	noisy := slices.DeleteFunc(slices.Clone(r.Warnings), func(w string) bool { return !strings.Contains(w, "flagged noisy") })
	if len(noisy) != 1 || !strings.Contains(noisy[0], "c at threads=1 table_size=0: 1 of 9 measured intervals were flagged noisy") {
		t.Fatalf("warnings: %q", r.Warnings)
	}
}

// A metric the baseline measured as zero (cpu runs no queries; memory's
// events are faster than the histogram's 1 µs) gets no comparison: a
// ratio to nothing is not −100%. A target that fell to zero still does.
func TestAnalyzeSkipsMetricsWhoseBaselineIsZero(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "native"}, {Name: "c"}}}
	for b, v := range [][2]float64{{100, 50}, {110, 55}} {
		r.Runs = append(r.Runs,
			result.Run{Target: "native", Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[0], P95US: 0, P99US: 20}, AvgUS: 10}},
			result.Run{Target: "c", Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v[1], P95US: 3, P99US: 20}, AvgUS: 0}})
	}
	Analyze(r)
	got := map[string]float64{}
	for _, c := range r.Comparisons {
		got[c.Metric] = c.DeltaPct
	}
	if _, ok := got["qps"]; ok {
		t.Errorf("qps compared against a zero baseline: %v", got)
	}
	if _, ok := got["p95"]; ok {
		t.Errorf("p95 compared against a zero baseline: %v", got)
	}
	if !near(got["avg"], -100, 1e-9) || !near(got["tps"], -50, 1e-9) {
		t.Errorf("a target at zero is still compared: %v", got)
	}
}

// TPC-C's NOPM and TPM are compared like TPS: the container's lower NOPM is
// "slower" with the geometric mean of the per-block ratios, its stats are
// the runs' distribution, and a workload without them gets neither.
func TestAnalyzeComparesNOPMAndTPM(t *testing.T) {
	r := &result.Result{Targets: []result.Target{{Name: "native"}, {Name: "c"}}}
	for b, v := range [][2]float64{{20000, 12100}, {21000, 12500}, {19000, 11400}, {20500, 12250}} {
		r.Runs = append(r.Runs,
			result.Run{Target: "native", Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 700, QPS: 20000, P95US: 15000}, AvgUS: 5000, NOPM: v[0], TPM: v[0] * 2.2}},
			result.Run{Target: "c", Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 420, QPS: 12000, P95US: 24000}, AvgUS: 9000, NOPM: v[1], TPM: v[1] * 2.2}})
	}
	Analyze(r)
	var nopm, tpm *result.Comparison
	for i, c := range r.Comparisons {
		switch c.Metric {
		case "nopm":
			nopm = &r.Comparisons[i]
		case "tpm":
			tpm = &r.Comparisons[i]
		}
	}
	if nopm == nil || tpm == nil || !near(nopm.Ratio, 0.6, 0.005) || !near(tpm.Ratio, nopm.Ratio, 1e-9) || !nopm.HasCI || nopm.CIHighPct > -39 {
		t.Fatalf("nopm %+v tpm %+v", nopm, tpm)
	}
	if !strings.Contains(nopm.Verdict, "c is slower by 40.1%") || !strings.Contains(nopm.Verdict, "in nopm (primary)") ||
		!nopm.Primary || tpm.Primary || !strings.Contains(tpm.Verdict, "in tpm (secondary)") {
		t.Fatalf("verdict %q", nopm.Verdict)
	}
	if st := r.Stats["native"]; st.NOPM == nil || !near(st.NOPM.Mean, 20125, 1e-9) || st.TPM == nil || st.NOPM.N != 4 {
		t.Fatalf("native stats %+v", st)
	}
	th, err := ParseThreshold("nopm<-5%")
	if err != nil {
		t.Fatal(err)
	}
	if j := th.Judge(r.Comparisons, DefaultAlpha); len(j.Crossed) != 1 || j.Crossed[0].Metric != "nopm" {
		t.Fatalf("nopm<-5%% crossed by %+v", j)
	}
	if j := (Threshold{Metric: "nopm", Less: true, Pct: -50}).Judge(r.Comparisons, DefaultAlpha); len(j.Crossed) != 0 {
		t.Fatalf("nopm<-50%% crossed by a -40%% change: %+v", j)
	}

	oltp := &result.Result{Targets: r.Targets}
	oltp.Runs = append(oltp.Runs,
		result.Run{Target: "native", Block: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 700, QPS: 20000, P95US: 15000}, AvgUS: 5000}},
		result.Run{Target: "c", Block: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 420, QPS: 12000, P95US: 24000}, AvgUS: 9000}})
	Analyze(oltp)
	for _, c := range oltp.Comparisons {
		if c.Metric == "nopm" || c.Metric == "tpm" {
			t.Fatalf("an OLTP run got a %s comparison", c.Metric)
		}
	}
	if oltp.Stats["native"].NOPM != nil {
		t.Fatal("an OLTP run got NOPM stats")
	}
}

// compare names the sweep point in each verdict, as the run's own verdicts do.
func TestCompareFilesNamesSweepPoints(t *testing.T) {
	mk := func(scale float64) *result.Result {
		r := &result.Result{Workload: result.Workload{Name: "mongo_read_write", Options: map[string]any{}},
			Plan: result.Plan{Points: []result.Point{{Threads: 2, TableSize: 1000}, {Threads: 4, TableSize: 1000}}}}
		for pt := range 2 {
			for b := 1; b <= 2; b++ {
				v := scale * float64(10+pt+b)
				r.Runs = append(r.Runs, result.Run{Target: "native", Block: b, Point: pt, Complete: true,
					Summary: result.Summary{Figures: result.Figures{TPS: v, QPS: 18 * v, P95US: 2e6 / v, P99US: 3e6 / v}, AvgUS: 1e6 / v}})
			}
		}
		return r
	}
	cs, err := CompareFiles(mk(1), mk(0.9))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if c.Metric == "tps" {
			seen[c.Verdict[strings.Index(c.Verdict, " at threads="):]] = true
		}
	}
	if !seen[" at threads=2 table_size=1000"] || !seen[" at threads=4 table_size=1000"] {
		t.Fatalf("verdicts do not name their points: %v", seen)
	}
}

// Latency over a target's runs comes from their merged histograms: one
// slow run's tail shows in the merged p99, where a mean of per-run p99s
// would dilute it.
func TestMergedLatencyMergesHistograms(t *testing.T) {
	enc := func(values ...int64) string {
		h := NewHistogram()
		for _, v := range values {
			h.RecordValue(v)
		}
		b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fast := make([]int64, 990)
	for i := range fast {
		fast[i] = 100
	}
	slow := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = 5000
		}
		return out
	}
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "a"}}}
	r.Runs = []result.Run{
		{Target: "a", Block: 1, Complete: true, Histogram: enc(fast...)},
		{Target: "a", Block: 2, Complete: true, Histogram: enc(append(fast[:960:960], slow(30)...)...)},
	}
	l, ok := MergedLatency(r, "a", 0)
	// 30 of 1980 events (1.5%) at 5 ms: the merged p99 is 5 ms.
	if !ok || l.Events != 1980 || l.P50 < 99 || l.P50 > 101 || l.P99 < 4990 || l.Max < 4990 {
		t.Fatalf("merged %+v %v", l, ok)
	}
	if _, ok := MergedLatency(&result.Result{Targets: []result.Target{{Name: "a"}}, Runs: []result.Run{{Target: "a", Block: 1, Complete: true}}}, "a", 0); ok {
		t.Fatal("no histogram, yet a latency")
	}
}

// compare's unpaired p95s of [1,1,1] vs [2,2,2] have no spread: no
// interval (it read "slower by 100.0% [100.0%, 100.0%]"), the resolution
// said, and --fail-if leaves it unjudged rather than crossed.
func TestCompareFilesZeroSpreadHasNoInterval(t *testing.T) {
	mk := func(p95 float64) *result.Result {
		r := &result.Result{Workload: result.Workload{Name: "oltp_read_only", Options: map[string]any{}},
			Plan: result.Plan{Points: []result.Point{{Threads: 1, TableSize: 100}}}}
		for i := range 3 {
			r.Runs = append(r.Runs, result.Run{Target: "native", Block: i + 1, Complete: true,
				Summary: result.Summary{Figures: result.Figures{TPS: 100 + float64(i), QPS: 100, P95US: p95, P99US: p95}, AvgUS: 1}})
		}
		return r
	}
	cs, err := CompareFiles(mk(1), mk(2))
	if err != nil {
		t.Fatal(err)
	}
	var p95 result.Comparison
	for _, c := range cs {
		if c.Metric == "p95" {
			p95 = c
		}
	}
	if p95.HasCI || p95.CILowPct != 0 || !strings.Contains(p95.Verdict, "resolution") || strings.Contains(p95.Verdict, "slower") {
		t.Fatalf("%+v", p95)
	}
	th, _ := ParseThreshold("p95>+10%")
	if j := th.Judge(cs, DefaultAlpha); len(j.Crossed) != 0 || len(j.Unjudged) != 1 {
		t.Fatalf("judged %+v", j)
	}
}

// A --runs auto point cut below the blocks its pilot asked for names the
// limit that cut it: --max-time when fewer than --max-runs ran (it named
// --max-runs whatever the cause), --max-runs when all of them did.
func TestSteinShortfallNamesTheLimit(t *testing.T) {
	build := func(blocks int) *result.Result {
		r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "c"}},
			Plan: result.Plan{Runs: 8, Stein: []result.SteinPoint{{PilotBlocks: 3, PlannedBlocks: 12, PilotSD: map[string]float64{"c": 0.1}}}}}
		for b := range blocks {
			for i, name := range []string{"n", "c"} {
				v := 100 + float64(b%3) - float64(i)
				r.Runs = append(r.Runs, result.Run{Target: name, Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v, QPS: v, P95US: 1, P99US: 1}, AvgUS: 1}})
			}
		}
		Analyze(r)
		return r
	}
	for _, c := range []struct {
		blocks int
		want   string
	}{{5, "5 ran (--max-time cut it)"}, {8, "8 ran (--max-runs cut it)"}} {
		r := build(c.blocks)
		if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, c.want) }) {
			t.Errorf("%d blocks: warnings %q, want one with %q", c.blocks, r.Warnings, c.want)
		}
	}
}

// At a fixed arrival rate every target that keeps up runs at the rate, so
// TPS says nothing: the verdict (primary) reads p95, for run --rate and
// for a live segment opened with r, and closed-loop points keep TPS.
func TestOpenLoopVerdictReadsLatency(t *testing.T) {
	build := func(plan float64, segs []result.Segment) *result.Result {
		r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "c"}},
			Plan: result.Plan{Runs: 4, Rate: plan, Points: []result.Point{{Threads: 4}, {Threads: 4}}}, Segments: segs}
		for pt := range 2 {
			for b := 1; b <= 4; b++ {
				jitter := 1 + 0.01*float64(b%2)
				r.Runs = append(r.Runs,
					result.Run{Target: "n", Point: pt, Block: 4*pt + b, Index: b, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 500, QPS: 500, P95US: 2000 * jitter, P99US: 3000}, AvgUS: 1000}},
					result.Run{Target: "c", Point: pt, Block: 4*pt + b, Index: b, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 499 * jitter, QPS: 499, P95US: 3000, P99US: 4500}, AvgUS: 1500}})
			}
		}
		Analyze(r)
		return r
	}
	primaryOf := func(r *result.Result, pt int) string {
		for _, c := range r.Comparisons {
			if c.Target == "c" && c.Point == pt && c.Primary {
				if !strings.Contains(c.Verdict, "(primary)") {
					t.Errorf("primary %s without the word: %q", c.Metric, c.Verdict)
				}
				return c.Metric
			}
		}
		return ""
	}
	if r := build(500, nil); primaryOf(r, 0) != "p95" || primaryOf(r, 1) != "p95" {
		t.Fatalf("run --rate: primary %q, %q, want p95", primaryOf(r, 0), primaryOf(r, 1))
	}
	live := build(0, []result.Segment{{Point: 0, Rate: 0}, {Point: 1, Rate: 500}})
	if primaryOf(live, 0) != "tps" || primaryOf(live, 1) != "p95" {
		t.Fatalf("live: closed segment %q (want tps), open segment %q (want p95)", primaryOf(live, 0), primaryOf(live, 1))
	}
	if r := build(0, nil); primaryOf(r, 0) != "tps" {
		t.Fatalf("closed loop: primary %q, want tps", primaryOf(r, 0))
	}
}

// A live session's warnings name the segment (its runs are numbered per
// segment, so "c run 1" alone is ambiguous) and the rate r set, never a
// --rate the user did not pass.
func TestLiveWarningsNameTheSegment(t *testing.T) {
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "c"}},
		Plan:     result.Plan{Runs: 14, Points: []result.Point{{Threads: 2}, {Threads: 2}}},
		Segments: []result.Segment{{Point: 0}, {Point: 1, Rate: 400}},
		Runs: []result.Run{
			{Target: "n", Point: 1, Block: 1, Index: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 400}}},
			{Target: "c", Point: 1, Block: 1, Index: 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: 380}, UnservedEvents: 402, UnservedMaxWaitUS: 900000}},
		}}
	Analyze(r)
	found := false
	for _, w := range r.Warnings {
		if strings.Contains(w, "402 arrivals") {
			found = true
			if !strings.Contains(w, "c run 1 in segment 2:") || strings.Contains(w, "--rate") || !strings.Contains(w, "keep up with the rate") {
				t.Errorf("warning %q", w)
			}
		}
	}
	if !found {
		t.Fatalf("no queued-arrivals warning: %q", r.Warnings)
	}
	// A segment has no plan of 14 blocks to fall short of.
	for _, c := range r.Comparisons {
		if strings.Contains(c.Method, "planned") || strings.Contains(c.Verdict, "planned") {
			t.Errorf("live comparison speaks of a plan: %q / %q", c.Method, c.Verdict)
		}
	}
}
