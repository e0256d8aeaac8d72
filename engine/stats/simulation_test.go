package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
)

// The simulations behind docs/measurement.md's "Simulations" section: each
// logs its table (go test -v -run Simulation ./engine/stats) and fails if
// a rule stops holding. Under -short or -race they run fewer plans.

// minCoverage is the least coverage a 95% interval may show in a
// simulation of trials plans: 0.95 less three standard errors.
func minCoverage(trials int) float64 {
	return 0.95 - 3*math.Sqrt(0.95*0.05/float64(trials))
}

// Under -short, or the race detector (CI's run, where they would take
// minutes of a shared machine), they run a fifth of the plans; the tables
// in docs/measurement.md are from full runs (go test -v -run Simulation).
func simTrials(full int) int {
	if testing.Short() || raceDetector {
		return full / 5
	}
	return full
}

// simRun is one complete simulated run of tps (QPS the same).
func simRun(target string, point, block int, tps float64) result.Run {
	return result.Run{Target: target, Point: point, Block: block, Complete: true,
		Summary: result.Summary{Figures: result.Figures{TPS: tps, QPS: tps}, AvgUS: 1e6 / tps}}
}

// simPlan makes a result of blocks×targets, each target's TPS a shared
// block effect times its true ratio times its own noise (log sd per side).
func simPlan(rng *rand.Rand, blocks int, ratios map[string]float64, names []string, sd float64) *result.Result {
	r := &result.Result{Complete: true, Plan: result.Plan{Runs: blocks}}
	for _, n := range names {
		r.Targets = append(r.Targets, result.Target{Name: n})
	}
	for b := 1; b <= blocks; b++ {
		block := 1000 * math.Exp(0.1*rng.NormFloat64())
		for _, n := range names {
			tps := block * ratios[n] * math.Exp(sd/math.Sqrt2*rng.NormFloat64())
			r.Runs = append(r.Runs, simRun(n, 0, b, tps))
		}
	}
	return r
}

// The A/A rule: the A/A copy's interval is a check of the design. With no
// bias it flags a point suspect in about 5% of plans (its own 95%), and it
// never changes the target's verdict: the target's CI keeps its coverage
// and its rejections (a true −10% at 5 blocks is found in ~all plans; the
// old reading called 61% of them "at the edge of the noise").
func TestAASimulation(t *testing.T) {
	trials := simTrials(2000)
	names := []string{"n", "n" + CalibrationSuffix, "c"}
	for _, c := range []struct {
		blocks      int
		aa, target  float64 // true ratios of the A/A copy and the target
		targetNoise float64
	}{{3, 1, 1, 1}, {5, 1, 0.9, 1}, {5, 1, 1, 3}, {5, 1.05, 0.9, 1}, {5, 1.1, 0.9, 1}} {
		rng := rand.New(rand.NewPCG(uint64(c.blocks), uint64(c.aa*1000)))
		suspect, covered, found := 0, 0, 0
		for range trials {
			r := simPlan(rng, c.blocks, map[string]float64{"n": 1, names[1]: c.aa, "c": c.target}, names, 0.04)
			if c.targetNoise != 1 { // the target 3× noisier than the baseline
				for i, run := range r.Runs {
					if run.Target == "c" {
						r.Runs[i].Summary.TPS *= math.Exp(0.04 * (c.targetNoise - 1) / math.Sqrt2 * rng.NormFloat64())
					}
				}
			}
			Analyze(r)
			cmp := r.Comparison("c", "tps", 0)
			if slices.Contains(cmp.SuspectReasons, "aa") { // the drift check has its own table
				suspect++
			}
			if lo, hi := 1+cmp.CILowPct/100, 1+cmp.CIHighPct/100; lo <= c.target && c.target <= hi {
				covered++
			}
			if cmp.CILowPct > 0 || cmp.CIHighPct < 0 {
				found++
			}
		}
		f := func(n int) float64 { return float64(n) / float64(trials) }
		t.Logf("| %d | %+.0f%% | %+.0f%% | %g× | %.3f | %.3f | %.3f |", c.blocks, (c.aa-1)*100, (c.target-1)*100, c.targetNoise, f(covered), f(suspect), f(found))
		if f(covered) < minCoverage(trials) {
			t.Errorf("%+v: the target's CI covers %.3f", c, f(covered))
		}
		if c.aa == 1 && f(suspect) > 0.08 {
			t.Errorf("%+v: no bias, yet %.3f of plans flagged suspect", c, f(suspect))
		}
		if c.aa >= 1.1 && f(suspect) < 0.9 {
			t.Errorf("%+v: a 10%% bias flagged in only %.3f of plans", c, f(suspect))
		}
	}
}

// --fail-if 'tps<-5%' with a log-ratio sd of 0.04: how often each outcome
// comes out. A target truly past the threshold must never pass silently
// beyond the CI's own 2.5% (it passed in 40% and 73% of these plans when
// a straddling CI passed); a straddle is now exit 5.
func TestFailIfSimulation(t *testing.T) {
	trials := simTrials(2000)
	th, _ := ParseThreshold("tps<-5%")
	names := []string{"n", "c"}
	for _, c := range []struct {
		blocks int
		ratio  float64
	}{{2, 0.7}, {3, 0.9}, {5, 0.9}, {5, 1}, {10, 0.97}} {
		rng := rand.New(rand.NewPCG(uint64(c.blocks), uint64(c.ratio*1000)))
		var crossed, straddled, passed int
		for range trials {
			r := simPlan(rng, c.blocks, map[string]float64{"n": 1, "c": c.ratio}, names, 0.04)
			Analyze(r)
			j := th.Judge(r.Comparisons, DefaultAlpha)
			switch {
			case len(j.Crossed) > 0:
				crossed++
			case len(j.Straddled) > 0:
				straddled++
			default:
				passed++
			}
		}
		f := func(n int) float64 { return float64(n) / float64(trials) }
		past := c.ratio < 0.95
		t.Logf("| %d | %+.0f%% | %.3f | %.3f | %.3f |", c.blocks, (c.ratio-1)*100, f(crossed), f(straddled), f(passed))
		if past && f(passed) > 0.03 {
			t.Errorf("%+v: a target past the threshold passed in %.3f of plans", c, f(passed))
		}
		if !past && f(crossed) > 0.03 {
			t.Errorf("%+v: a target on the good side crossed in %.3f of plans", c, f(crossed))
		}
	}
}

// The precision line: "about N blocks for ±X%" at the spread of the blocks
// so far. Simulated: how often a plan of the hinted N blocks (from 5
// pilot blocks) reaches ±X% (t precision: about half the time by
// construction, as a planning figure; the post-hoc power hint it replaced
// spanned 9 to 933 blocks between its 10th and 90th percentiles for a
// true −3%, sd 0.05, 5 blocks, where 23 were needed).
func TestPrecisionHintSimulation(t *testing.T) {
	trials := simTrials(2000)
	rng := rand.New(rand.NewPCG(17, 19))
	var hints []int
	reached := 0
	for range trials {
		var logs []float64
		for range 5 {
			logs = append(logs, math.Log(0.97)+0.05*rng.NormFloat64())
		}
		sd := stddev(logs)
		n := BlocksFor(sd, 5)
		hints = append(hints, n)
		for len(logs) < n {
			logs = append(logs, math.Log(0.97)+0.05*rng.NormFloat64())
		}
		// Reached with the interval dbduel makes (from 8 blocks it may be
		// the AR(1)-corrected one).
		if p := CompareLogs(logs); p.HasCI && HalfWidthPct(p.Low, p.High) <= 5 {
			reached++
		}
	}
	p10, p50, p90 := percentileInt(hints, 0.1), percentileInt(hints, 0.5), percentileInt(hints, 0.9)
	want := BlocksFor(0.05, 5) // the N for the true spread
	t.Logf("| sd 0.05, ±5%% | %d | %d / %d / %d | %.3f |", want, p10, p50, p90, float64(reached)/float64(trials))
	if p50 < want-3 || p50 > want+3 || p90 > 4*want {
		t.Errorf("hints %d/%d/%d around a true %d", p10, p50, p90, want)
	}
}

func stddev(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)-1))
}

func percentileInt(xs []int, q float64) int {
	s := append([]int(nil), xs...)
	for i := range s { // insertion sort: small slices
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[int(q*float64(len(s)-1))]
}

// driftPlan is simPlan with AR(1) noise: each drifting target's own noise
// follows e_b = ρ·e_{b−1} + √(1−ρ²)·z_b (stationary, log sd per side as
// simPlan's), the others' is independent.
func driftPlan(rng *rand.Rand, blocks int, ratios map[string]float64, names []string, sd, rho float64, drifting map[string]bool) *result.Result {
	r := &result.Result{Complete: true, Plan: result.Plan{Runs: blocks}}
	for _, n := range names {
		r.Targets = append(r.Targets, result.Target{Name: n})
	}
	state := map[string]float64{}
	for _, n := range names {
		state[n] = rng.NormFloat64()
	}
	for b := 1; b <= blocks; b++ {
		block := 1000 * math.Exp(0.1*rng.NormFloat64())
		for _, n := range names {
			e := rng.NormFloat64()
			if drifting[n] {
				state[n] = rho*state[n] + math.Sqrt(1-rho*rho)*e
				e = state[n]
			}
			tps := block * ratios[n] * math.Exp(sd/math.Sqrt2*e)
			r.Runs = append(r.Runs, simRun(n, 0, b, tps))
		}
	}
	return r
}

// The drift check and the autocorrelation-robust interval: the target
// (or every server) drifting as AR(1) between blocks. Reported: the
// target's coverage, how often the drift check marked it suspect, the
// coverage of the plans it left unmarked, and how often the A/A line said
// "no bias detected". With independent blocks (ρ 0) the check fires in
// about 5% of plans and the interval keeps its 95%.
func TestDriftSimulation(t *testing.T) {
	trials := simTrials(2000)
	names := []string{"n", "n" + CalibrationSuffix, "c"}
	t.Log("| who drifts | ρ | blocks | coverage | plain t's coverage | half-width vs plain t | suspect (drift) | coverage, not suspect | A/A: no bias detected |")
	t.Log("|---|---|---|---|---|---|---|---|---|")
	for _, c := range []struct {
		every  bool
		rho    float64
		blocks int
	}{{false, 0, 5}, {false, 0, 8}, {false, 0, 12}, {false, 0.5, 5}, {false, 0.5, 8}, {false, 0.5, 12},
		{false, 0.8, 5}, {false, 0.8, 8}, {false, 0.8, 12}, {true, 0.5, 8}, {true, 0.8, 8}, {true, 0.8, 12}} {
		rng := rand.New(rand.NewPCG(uint64(c.blocks), uint64(c.rho*1000)))
		drifting := map[string]bool{"c": true}
		if c.every {
			drifting = map[string]bool{"n": true, names[1]: true, "c": true}
		}
		covered, plainCovered, suspect, coveredClean, clean, noBias := 0, 0, 0, 0, 0, 0
		widthRatio := 0.0
		for range trials {
			r := driftPlan(rng, c.blocks, map[string]float64{"n": 1, names[1]: 1, "c": 0.95}, names, 0.04, c.rho, drifting)
			Analyze(r)
			cmp := r.Comparison("c", "tps", 0)
			in := 1+cmp.CILowPct/100 <= 0.95 && 0.95 <= 1+cmp.CIHighPct/100
			if in {
				covered++
			}
			// The plain paired t from the same blocks, for comparison.
			se := cmp.SDLog / math.Sqrt(float64(cmp.N))
			half := TQuantile(cmp.N-1) * se
			if m := math.Log(cmp.Ratio); math.Abs(m-math.Log(0.95)) <= half {
				plainCovered++
			}
			widthRatio += math.Log1p(cmp.HalfWidthPct/100) / half / float64(trials)
			if slices.Contains(cmp.SuspectReasons, "drift") {
				suspect++
			} else {
				clean++
				if in {
					coveredClean++
				}
			}
			if r.NoiseFloor != nil && r.NoiseFloor.NoBiasDetected {
				noBias++
			}
		}
		f := func(n, of int) float64 { return float64(n) / float64(max(of, 1)) }
		who := "the target"
		if c.every {
			who = "every server"
		}
		t.Logf("| %s | %.1f | %d | %.3f | %.3f | %+.0f%% | %.3f | %.3f | %.3f |", who, c.rho, c.blocks, f(covered, trials), f(plainCovered, trials),
			(widthRatio-1)*100, f(suspect, trials), f(coveredClean, clean), f(noBias, trials))
		if c.rho == 0 {
			if f(covered, trials) < minCoverage(trials) {
				t.Errorf("%+v: independent blocks covered %.3f", c, f(covered, trials))
			}
			if f(suspect, trials) > 0.07 {
				t.Errorf("%+v: independent blocks marked drifting in %.3f of plans", c, f(suspect, trials))
			}
		}
	}
}

// sweepPlan is simPlan over points sweep points, every target at true
// ratio ratios[name] at every point but the one in effect (effect[point]
// for target "c1", when set).
func sweepPlan(rng *rand.Rand, points, blocks int, names []string, sd float64, effect map[int]float64) *result.Result {
	r := &result.Result{Complete: true, Plan: result.Plan{Runs: blocks}}
	for _, n := range names {
		r.Targets = append(r.Targets, result.Target{Name: n})
	}
	for p := range points {
		if points > 1 {
			r.Plan.Points = append(r.Plan.Points, result.Point{Threads: 1 << p, TableSize: 10000})
		}
		for b := 1; b <= blocks; b++ {
			block := 1000 * math.Exp(0.1*rng.NormFloat64())
			for _, n := range names {
				ratio := 1.0
				if e, ok := effect[p]; ok && n == "c1" {
					ratio = e
				}
				tps := block * ratio * math.Exp(sd/math.Sqrt2*rng.NormFloat64())
				r.Runs = append(r.Runs, simRun(n, p, b, tps))
			}
		}
	}
	return r
}

// hasWord says a verdict names a direction.
func hasWord(v string) bool {
	return strings.Contains(v, " is slower by ") || strings.Contains(v, " is faster by ")
}

// Many comparisons, one α: a sweep of P points × T targets, all identical
// to the baseline but one (a true −10% for c1 at point 0, when set), at 5
// blocks. Reported: the share of plans with any verdict word among the
// null comparisons (family-wise error, Holm), the same share had each
// comparison been read alone (unadjusted), and how often the true −10%
// was found. At most α of plans may print a word where nothing differs.
func TestMultiplicitySimulation(t *testing.T) {
	trials := simTrials(2000)
	t.Log("| comparisons | true difference | any word where none (Holm) | any word where none (unadjusted) | true −10% found | any marked drifting (independent blocks) |")
	t.Log("|---|---|---|---|---|---|")
	for _, c := range []struct {
		points, targets int
		effect          bool
	}{{1, 1, false}, {2, 2, false}, {4, 2, false}, {4, 2, true}} {
		names := []string{"n"}
		for i := range c.targets {
			names = append(names, fmt.Sprintf("c%d", i+1))
		}
		effect := map[int]float64{}
		if c.effect {
			effect[0] = 0.9
		}
		rng := rand.New(rand.NewPCG(uint64(c.points), uint64(c.targets)))
		holmAny, rawAny, found, drifting := 0, 0, 0, 0
		for range trials {
			r := sweepPlan(rng, c.points, 5, names, 0.04, effect)
			Analyze(r)
			h, raw, d := false, false, false
			for _, cmp := range r.Comparisons {
				if !cmp.Primary {
					continue
				}
				d = d || slices.Contains(cmp.SuspectReasons, "drift")
				if c.effect && cmp.Target == "c1" && cmp.Point == 0 {
					if hasWord(cmp.Verdict) {
						found++
					}
					continue
				}
				h = h || hasWord(cmp.Verdict)
				raw = raw || cmp.CILowPct > 0 || cmp.CIHighPct < 0
			}
			if h {
				holmAny++
			}
			if raw {
				rawAny++
			}
			if d {
				drifting++
			}
		}
		m := c.points * c.targets
		f := func(n int) float64 { return float64(n) / float64(trials) }
		truth, foundCol := "none", "–"
		if c.effect {
			truth, foundCol = "one of them −10%", fmt.Sprintf("%.3f", f(found))
		}
		t.Logf("| %d | %s | %.3f | %.3f | %s | %.3f |", m, truth, f(holmAny), f(rawAny), foundCol, f(drifting))
		if limit := DefaultAlpha + 3*math.Sqrt(DefaultAlpha*(1-DefaultAlpha)/float64(trials)); f(holmAny) > limit {
			t.Errorf("%d comparisons: a word where nothing differs in %.3f of plans (> %.3f)", m, f(holmAny), limit)
		}
		if m >= 4 && f(rawAny) < 2*DefaultAlpha {
			t.Errorf("%d comparisons: unadjusted %.3f: the simulation shows no multiplicity to adjust for", m, f(rawAny))
		}
	}
}

// --fail-if 'tps<-5%' over a family: P points × 2 targets, c1 at a true
// −10% at point 0, every other comparison at 0%, 5 blocks. Reported per
// comparison: c1's share crossed (exit 3), inconclusive (straddled, or
// past at 95% alone but not after Holm: exit 5); and the share of plans
// in which any 0% comparison crossed (family-wise, at most α/2: the test
// is one-sided in effect).
func TestFailIfFamilySimulation(t *testing.T) {
	trials := simTrials(2000)
	th, _ := ParseThreshold("tps<-5%")
	names := []string{"n", "c1", "c2"}
	t.Log("| comparisons | c1 (−10%) crossed | c1 straddled | c1 past alone, not after Holm | any 0% comparison crossed |")
	t.Log("|---|---|---|---|---|")
	for _, points := range []int{1, 2, 4} {
		rng := rand.New(rand.NewPCG(uint64(points), 41))
		var crossed, straddled, unsettled, nullCrossed int
		for range trials {
			r := sweepPlan(rng, points, 5, names, 0.04, map[int]float64{0: 0.9})
			Analyze(r)
			j := th.Judge(r.Comparisons, DefaultAlpha)
			is := func(cs []result.Comparison) bool {
				return slices.ContainsFunc(cs, func(c result.Comparison) bool { return c.Target == "c1" && c.Point == 0 })
			}
			switch {
			case is(j.Crossed):
				crossed++
			case is(j.Straddled):
				straddled++
			case is(j.Unsettled):
				unsettled++
			}
			if slices.ContainsFunc(j.Crossed, func(c result.Comparison) bool { return c.Target != "c1" || c.Point != 0 }) {
				nullCrossed++
			}
		}
		f := func(n int) float64 { return float64(n) / float64(trials) }
		t.Logf("| %d | %.3f | %.3f | %.3f | %.3f |", points*2, f(crossed), f(straddled), f(unsettled), f(nullCrossed))
		if f(nullCrossed) > DefaultAlpha/2+3*math.Sqrt(0.025*0.975/float64(trials)) {
			t.Errorf("%d comparisons: a 0%% comparison crossed tps<-5%% in %.3f of plans", points*2, f(nullCrossed))
		}
		if f(crossed)+f(straddled)+f(unsettled) < 0.97 {
			t.Errorf("%d comparisons: c1 (−10%%) passed in %.3f of plans", points*2, 1-f(crossed)-f(straddled)-f(unsettled))
		}
	}
}

// --runs auto beyond TPS: QPS (its own per-block spread, correlated with
// TPS's) and the --margin equivalence test under Stein's rule, through the
// rule and Analyze as a run uses them. Both ratios are truly 0.95, at the
// edge of a ±5% margin: "equivalent within ±5%" may be said in at most 5%
// of plans (the TOST's size), and QPS's interval must cover 0.95 in 95%.
func TestSteinQPSAndTOSTSimulation(t *testing.T) {
	trials := simTrials(2000)
	t.Log("| log-ratio sd (TPS / QPS) | ±target | TPS coverage | QPS coverage | equivalent at ±5% (size) | blocks |")
	t.Log("|---|---|---|---|---|---|")
	for _, c := range []struct{ sd, qsd, targetPct float64 }{{0.04, 0.06, 5}, {0.08, 0.08, 5}, {0.05, 0.10, 3}} {
		rng := rand.New(rand.NewPCG(uint64(c.sd*1000), uint64(c.qsd*1000)))
		var tpsIn, qpsIn, equiv, blocks int
		for range trials {
			r := &result.Result{Complete: true, Targets: []result.Target{{Name: "n"}, {Name: "c"}},
				Plan: result.Plan{Runs: 40, PrecisionPct: c.targetPct, MarginPct: 5}}
			rule := &SteinRule{TargetPct: c.targetPct}
			n := 0
			for n < 40 {
				n++
				block := 1000 * math.Exp(0.1*rng.NormFloat64())
				for _, name := range []string{"n", "c"} {
					ratio, z := 1.0, rng.NormFloat64()
					if name == "c" {
						ratio = 0.95
					}
					tps := block * ratio * math.Exp(c.sd/math.Sqrt2*z)
					qps := 20 * block * ratio * math.Exp(c.qsd/math.Sqrt2*(0.5*z+math.Sqrt(0.75)*rng.NormFloat64()))
					r.Runs = append(r.Runs, result.Run{Target: name, Block: n, Complete: true,
						Summary: result.Summary{Figures: result.Figures{TPS: tps, QPS: qps}, AvgUS: 1e6 / tps}})
				}
				if rule.Step(r, 0, n) {
					break
				}
			}
			blocks += n
			Analyze(r)
			covers := func(m string) bool {
				x := r.Comparison("c", m, 0)
				return 1+x.CILowPct/100 <= 0.95 && 0.95 <= 1+x.CIHighPct/100
			}
			if covers("tps") {
				tpsIn++
			}
			if covers("qps") {
				qpsIn++
			}
			if strings.HasPrefix(r.Comparison("c", "tps", 0).Equivalence, "equivalent") {
				equiv++
			}
		}
		f := func(n int) float64 { return float64(n) / float64(trials) }
		t.Logf("| %.2f / %.2f | ±%g%% | %.3f | %.3f | %.3f | %.1f |", c.sd, c.qsd, c.targetPct, f(tpsIn), f(qpsIn), f(equiv), float64(blocks)/float64(trials))
		if f(qpsIn) < minCoverage(trials) || f(tpsIn) < minCoverage(trials) {
			t.Errorf("%+v: coverage TPS %.3f QPS %.3f", c, f(tpsIn), f(qpsIn))
		}
		if f(equiv) > 0.05+3*math.Sqrt(0.05*0.95/float64(trials)) {
			t.Errorf("%+v: equivalent at the margin's edge in %.3f of plans", c, f(equiv))
		}
	}
}

// Live's running interval is watched: a user who stops at the first round
// whose interval excludes 0 must not be misled more than 5% of the time.
// Sessions of independent normal log-ratios with no true difference, the
// interval read after every round from the second: the share of sessions
// in which it ever excluded the truth within 10, 30 and 100 looks, for the
// fixed-n t interval (as before) and the anytime-valid sequence, and the
// sequence's half-width relative to the t interval's at 10 and 30 rounds.
func TestAnytimeSimulation(t *testing.T) {
	trials := simTrials(4000)
	rng := rand.New(rand.NewPCG(23, 29))
	looks := []int{10, 30, 100}
	everT, everCS := map[int]int{}, map[int]int{}
	var w10, w30 float64
	for range trials {
		var logs []float64
		missT, missCS := false, false
		for n := 1; n <= 100; n++ {
			logs = append(logs, 0.04*rng.NormFloat64())
			if n < 2 {
				continue
			}
			p := CompareLogs(logs[:n])
			if p.HasCI && (p.Low > 1 || p.High < 1) {
				missT = true
			}
			_, lo, hi, ok := AnytimeInterval(logs, 0.05)
			if ok && (lo > 1 || hi < 1) {
				missCS = true
			}
			if n == 10 || n == 30 {
				// Against a plain t interval from the same spread.
				ratio := math.Log(hi/lo) / 2 / (TQuantile(n-1) * p.SD / math.Sqrt(float64(n)))
				if n == 10 {
					w10 += ratio / float64(trials)
				} else {
					w30 += ratio / float64(trials)
				}
			}
			for _, l := range looks {
				if n == l {
					if missT {
						everT[l]++
					}
					if missCS {
						everCS[l]++
					}
				}
			}
		}
	}
	f := func(n int) float64 { return float64(n) / float64(trials) }
	t.Log("| looks (rounds) | fixed-n t: ever excluded the truth | confidence sequence: ever excluded the truth |")
	t.Log("|---|---|---|")
	for _, l := range looks {
		t.Logf("| %d | %.3f | %.3f |", l, f(everT[l]), f(everCS[l]))
		if f(everCS[l]) > 0.05+3*math.Sqrt(0.05*0.95/float64(trials)) {
			t.Errorf("%d looks: the confidence sequence excluded the truth in %.3f of sessions", l, f(everCS[l]))
		}
	}
	t.Logf("half-width of the sequence vs a plain t interval from the same spread: ×%.2f at 10 rounds, ×%.2f at 30", w10, w30)
	if f(everT[30]) < 0.1 {
		t.Errorf("the fixed-n interval watched for 30 looks erred in only %.3f: the simulation shows no problem to solve", f(everT[30]))
	}
}

// After a restart the target starts cold. Sessions: a true +10% for the
// restarted target, a cold start of −20% in its first round after the
// restart and −10% in its second, log sd 0.04 per side and a shared round
// effect of 0.02; 4 counted rounds (a short segment). Reported: the mean estimate and the
// coverage of 1.10 when every round counts (as before) and with the
// settling rule (Settled), and the settling rounds it spent.
func TestSettlingSimulation(t *testing.T) {
	trials := simTrials(4000)
	rng := rand.New(rand.NewPCG(31, 37))
	cold := map[int]float64{1: 0.8, 2: 0.9}
	type tally struct {
		est          float64
		cover, found int
	}
	var all, settled tally
	settling := 0.0
	for range trials {
		var first, counted, tpsSettling []float64
		steady := false
		for k := 1; len(counted) < 4; k++ {
			shared := 1000 * math.Exp(0.02*rng.NormFloat64())
			factor := 1.0
			if f, ok := cold[k]; ok {
				factor = f
			}
			base := shared * math.Exp(0.04/math.Sqrt2*rng.NormFloat64())
			tgt := shared * 1.10 * factor * math.Exp(0.04/math.Sqrt2*rng.NormFloat64())
			if len(first) < 4 {
				first = append(first, math.Log(tgt/base))
			}
			if !steady {
				tpsSettling = append(tpsSettling, tgt)
				steady, _ = Settled(tpsSettling)
				settling++
				continue
			}
			counted = append(counted, math.Log(tgt/base))
		}
		for _, c := range []struct {
			logs []float64
			t    *tally
		}{{first, &all}, {counted, &settled}} {
			p := CompareLogs(c.logs)
			c.t.est += (p.Ratio - 1) * 100 / float64(trials)
			if p.Low <= 1.10 && 1.10 <= p.High {
				c.t.cover++
			}
			if p.Low > 1 {
				c.t.found++
			}
		}
	}
	f := func(n int) float64 { return float64(n) / float64(trials) }
	t.Log("| rounds counted | mean estimate of a true +10% | coverage | +10% found (CI above 0) | settling rounds (mean) |")
	t.Log("|---|---|---|---|---|")
	t.Logf("| every round from the restart | %+.1f%% | %.3f | %.3f | 0 |", all.est, f(all.cover), f(all.found))
	t.Logf("| after settling (Settled) | %+.1f%% | %.3f | %.3f | %.1f |", settled.est, f(settled.cover), f(settled.found), settling/float64(trials))
	if f(settled.cover) < minCoverage(trials) || math.Abs(settled.est-10) > 1 {
		t.Errorf("with settling: estimate %+.1f%%, coverage %.3f", settled.est, f(settled.cover))
	}
	if all.est > 7 {
		t.Errorf("without settling: estimate %+.1f%%: the simulation shows no cold start to settle", all.est)
	}
}

func TestSettled(t *testing.T) {
	for _, c := range []struct {
		tps            []float64
		steady, capped bool
	}{
		{[]float64{800}, false, false},      // one slice: nothing to compare
		{[]float64{800, 900}, false, false}, // still warming
		{[]float64{800, 980, 1000}, true, false},
		{[]float64{800, 900, 1000}, true, true}, // three rounds: counted from here, with a note
		{[]float64{1000, 1030}, true, false},
	} {
		if steady, capped := Settled(c.tps); steady != c.steady || capped != c.capped {
			t.Errorf("Settled(%v) = %v, %v; want %v, %v", c.tps, steady, capped, c.steady, c.capped)
		}
	}
}

// Carry-over in dbduel live: the baseline's slice runs 5% slower when the
// slice before it (in its round or at the end of the round before) was
// the target's. A true −30%, log sd 0.04 per side, a shared round effect
// of 0.02. Orders: a shuffle per round (as before) or Williams rows (as
// now). Reported: the mean estimate, the coverage of 0.70, and how often
// the order effect was shown (its interval excluding 0).
func TestCarryOverSimulation(t *testing.T) {
	trials := simTrials(2000)
	t.Log("| order | rounds | mean estimate of a true −30% | coverage | order effect shown |")
	t.Log("|---|---|---|---|---|")
	for _, c := range []struct {
		williams bool
		rounds   int
	}{{false, 6}, {true, 6}, {false, 20}, {true, 20}} {
		rng := rand.New(rand.NewPCG(uint64(c.rounds), 43))
		var est float64
		covered, shown := 0, 0
		for range trials {
			r := &result.Result{Complete: true, Live: &result.Live{}, Targets: []result.Target{{Name: "n"}, {Name: "c"}}, Plan: result.Plan{Runs: c.rounds}}
			rows, at := plan.WilliamsRows(2), rng.IntN(2)
			prev := ""
			for b := 1; b <= c.rounds; b++ {
				order := []string{"n", "c"}
				if c.williams {
					row := rows[(at+b)%2]
					order = []string{[]string{"n", "c"}[row[0]], []string{"n", "c"}[row[1]]}
				} else if rng.IntN(2) == 1 {
					order = []string{"c", "n"}
				}
				shared := 1000 * math.Exp(0.02*rng.NormFloat64())
				for _, name := range order {
					tps := shared * math.Exp(0.04/math.Sqrt2*rng.NormFloat64())
					if name == "c" {
						tps *= 0.70
					}
					if name == "n" && prev == "c" {
						tps *= 0.95
					}
					prev = name
					r.Runs = append(r.Runs, simRun(name, 0, b, tps))
				}
			}
			Analyze(r)
			cmp := r.Comparison("c", "tps", 0)
			est += cmp.DeltaPct / float64(trials)
			if 1+cmp.CILowPct/100 <= 0.70 && 0.70 <= 1+cmp.CIHighPct/100 {
				covered++
			}
			if co := cmp.CarryOver; co != nil && (co.CILowPct > 0 || co.CIHighPct < 0) {
				shown++
			}
		}
		f := func(n int) float64 { return float64(n) / float64(trials) }
		order := "shuffled per round"
		if c.williams {
			order = "Williams rows"
		}
		t.Logf("| %s | %d | %+.1f%% | %.3f | %.3f |", order, c.rounds, est, f(covered), f(shown))
		if c.williams && c.rounds == 20 && f(shown) < 0.7 {
			t.Errorf("%+v: a 5%% carry-over shown in only %.3f of sessions", c, f(shown))
		}
	}
}
