package explain

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// ladderResult is three blocks of four rungs with known TPS: the container
// costs 2%, the volume 0%, the proxy halves what is left.
func ladderResult(proxyPath string) (*result.Result, []Rung) {
	rungs, _ := Select(Ladder(1), []string{"bridge-proxy"})
	tps := map[string][3]float64{
		"native":       {1000, 1100, 900},
		"host-bind":    {980, 1078, 882},
		"host-volume":  {980, 1078, 882},
		"bridge-proxy": {490, 550, 430},
	}
	desc := map[string]result.Described{
		"native":       {NetworkPath: "direct", Datadir: &result.Datadir{Kind: "dir", FSType: "ext4"}},
		"host-bind":    {NetworkPath: "direct", Datadir: &result.Datadir{Kind: "bind", FSType: "ext4"}, SeccompMode: "filter"},
		"host-volume":  {NetworkPath: "direct", Datadir: &result.Datadir{Kind: "volume", FSType: "ext4"}, SeccompMode: "filter"},
		"bridge-proxy": {NetworkPath: proxyPath, Datadir: &result.Datadir{Kind: "volume", FSType: "ext4"}, SeccompMode: "filter"},
	}
	r := &result.Result{}
	for _, rg := range rungs {
		r.Targets = append(r.Targets, result.Target{Name: rg.Name, Described: desc[rg.Name]})
		for b, v := range tps[rg.Name] {
			run := result.Run{Target: rg.Name, Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{TPS: v}}}
			run.Intervals = []result.Interval{{Telemetry: map[string]any{"server_cpu_cores": 0.5, "proxy_cpu_cores": 0.25}}}
			r.Runs = append(r.Runs, run)
		}
	}
	return r, rungs
}

func TestSelectKeepsTheReferences(t *testing.T) {
	rungs, err := Select(Ladder(1), []string{"cpu-quota"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rungs {
		names = append(names, r.Name)
	}
	// cpu-quota needs cpuset, which needs host-volume, host-bind and native.
	if got := strings.Join(names, " "); got != "native host-bind host-volume cpuset cpu-quota" {
		t.Fatalf("got %s", got)
	}
	if _, err := Select(Ladder(1), []string{"nope"}); err == nil || !strings.Contains(err.Error(), "bridge-proxy") {
		t.Fatalf("unknown rung: %v", err)
	}
}

// Each rung's delta is against its own reference, negative when slower,
// with the paired CI of the verdicts; the layers' shares add to 100%.
func TestAnalyzeDeltasAndAttribution(t *testing.T) {
	r, rungs := ladderResult("docker-proxy")
	Analyze(r, rungs)
	by := map[string]result.Rung{}
	for _, rg := range r.Explain.Rungs {
		by[rg.Name] = rg
	}
	if g := by["host-bind"]; !near(g.DeltaPct, -2, 1e-9) || !g.HasCI || g.N != 3 || !near(g.CILowPct, -2, 1e-9) || !near(g.CIHighPct, -2, 1e-9) {
		t.Fatalf("host-bind: %+v", g)
	}
	want := stats.ComparePaired([]float64{490, 550, 430}, []float64{980, 1078, 882})
	p := by["bridge-proxy"]
	if !near(p.DeltaPct, (want.Ratio-1)*100, 1e-9) || p.DeltaPct > -45 || !near(p.CILowPct, (want.Low-1)*100, 1e-9) || !near(p.CIHighPct, (want.High-1)*100, 1e-9) {
		t.Fatalf("bridge-proxy against host-volume: %+v, want %+v", p, want)
	}
	if native := stats.ComparePaired([]float64{490, 550, 430}, []float64{1000, 1100, 900}); !near(p.DeltaVsNativePct, (native.Ratio-1)*100, 1e-9) {
		t.Fatalf("vs native %.3f, want %.3f", p.DeltaVsNativePct, (native.Ratio-1)*100)
	}
	if !p.Valid || p.Evidence["proxy_cpu_us_per_txn"] == nil {
		t.Fatalf("evidence: %+v", p)
	}
	var share float64
	for _, a := range r.Explain.Attribution {
		share += a.SharePct
	}
	if len(r.Explain.Attribution) != 3 || !near(share, 100, 1e-6) {
		t.Fatalf("attribution %+v adds to %.3f%%", r.Explain.Attribution, share)
	}
	if a := r.Explain.Attribution[2]; !strings.HasPrefix(a.Layer, "network") || a.SharePct < 90 {
		t.Fatalf("the proxy should carry most of the gap: %+v", a)
	}
	if w := Waterfall(r.Explain); !strings.Contains(w, "bridge-proxy") || !strings.Contains(w, "docker-proxy 0.25 cores") {
		t.Fatalf("waterfall:\n%s", w)
	}
}

// A rung whose read-back path contradicts its label is marked invalid.
func TestContradictingEvidenceInvalidatesTheRung(t *testing.T) {
	r, rungs := ladderResult("bridge-direct")
	Analyze(r, rungs)
	last := r.Explain.Rungs[len(r.Explain.Rungs)-1]
	if last.Valid || !strings.Contains(last.Invalid, "docker-proxy") {
		t.Fatalf("bridge-proxy without docker-proxy: %+v", last)
	}
	if !strings.Contains(Waterfall(r.Explain), "INVALID") {
		t.Fatal("the waterfall does not say the rung is invalid")
	}
}

// A snapshot after some rungs only (a rung ran, its reference not yet):
// no delta is made up and the result still encodes (no ±Inf).
func TestPartialLadderEncodes(t *testing.T) {
	r, rungs := ladderResult("docker-proxy")
	var kept []result.Run
	for _, run := range r.Runs {
		if run.Target == "native" || run.Target == "bridge-proxy" {
			kept = append(kept, run)
		}
	}
	r.Runs = kept
	Analyze(r, rungs)
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("partial ladder: %v", err)
	}
	for _, rg := range r.Explain.Rungs {
		if rg.Name == "bridge-proxy" && (rg.N != 0 || rg.DeltaPct != 0) {
			t.Fatalf("bridge-proxy without host-volume got a delta: %+v", rg)
		}
	}
	if len(r.Explain.Attribution) != 0 {
		t.Fatalf("attribution without its rungs: %+v", r.Explain.Attribution)
	}
	if !strings.Contains(Waterfall(r.Explain), "not paired yet") {
		t.Fatal("the waterfall does not say the rung is not paired yet")
	}
}

// The memory rung's limit is 1.5x the footprint, rounded up to 16 MiB, at
// least 64 MiB.
func TestMemoryLimit(t *testing.T) {
	for fp, want := range map[uint64]int64{100 << 20: 160 << 20, 101 << 20: 160 << 20, 107 << 20: 176 << 20, 10 << 20: 64 << 20} {
		if got := MemoryLimit(fp); got != want {
			t.Errorf("footprint %d MiB: limit %d MiB, want %d", fp>>20, got>>20, want>>20)
		}
	}
}
