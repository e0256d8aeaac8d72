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

// ladderTPS is four blocks of four rungs: the container costs ~2%, the
// volume nothing measurable, the proxy halves what is left.
var ladderTPS = map[string][]float64{
	"native":       {1000, 1100, 900, 1050},
	"host-bind":    {985, 1070, 890, 1030},
	"host-volume":  {980, 1080, 880, 1035},
	"bridge-proxy": {490, 560, 430, 520},
}

// ladderResult is the ladder's rungs with TPS per block (ladderTPS unless given).
func ladderResult(proxyPath string, tpsOf ...map[string][]float64) (*result.Result, []Rung) {
	rungs, _ := Select(Ladder(1), []string{"bridge-proxy"})
	tps := ladderTPS
	if len(tpsOf) > 0 {
		tps = tpsOf[0]
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
			run := result.Run{Target: rg.Name, Block: b + 1, Complete: true, Summary: result.Summary{Figures: result.Figures{Events: uint64(v), TPS: v}}}
			run.Intervals = []result.Interval{{SpanS: 1, Telemetry: result.TelemetryOf(map[string]float64{"server_cpu_cores": 0.5, "proxy_cpu_cores": 0.25})}}
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

// Each rung's step is against its own reference, negative when slower,
// with the paired CI of the verdicts, and in log points; its cumulative
// contrast against native has its own paired CI; a step whose CI spans 0
// reads "not distinguishable from 0"; the shares of a gap whose CI
// excludes 0 add to 100% and each has a CI holding it.
func TestAnalyzeDeltasAndAttribution(t *testing.T) {
	r, rungs := ladderResult("docker-proxy")
	Analyze(r, rungs)
	by := map[string]result.Rung{}
	for _, rg := range r.Explain.Rungs {
		by[rg.Name] = rg
	}
	hb := stats.ComparePaired(ladderTPS["host-bind"], ladderTPS["native"])
	if g := by["host-bind"]; !near(g.DeltaPct, (hb.Ratio-1)*100, 1e-9) || !g.HasCI || g.N != 4 || !near(g.CILowPct, (hb.Low-1)*100, 1e-9) ||
		!near(g.StepLogPoints, 100*math.Log(hb.Ratio), 1e-9) || !near(g.StepCIHighLogPoints, 100*math.Log(hb.High), 1e-9) {
		t.Fatalf("host-bind: %+v, want %+v", g, hb)
	}
	if v := by["host-volume"]; v.StepReading != "not distinguishable from 0" || v.CILowPct > 0 || v.CIHighPct < 0 {
		t.Fatalf("host-volume's step spans 0: %+v", v)
	}
	p := by["bridge-proxy"]
	want := stats.ComparePaired(ladderTPS["bridge-proxy"], ladderTPS["host-volume"])
	if !near(p.DeltaPct, (want.Ratio-1)*100, 1e-9) || p.DeltaPct > -45 || !near(p.CIHighPct, (want.High-1)*100, 1e-9) || p.StepReading != "" {
		t.Fatalf("bridge-proxy against host-volume: %+v, want %+v", p, want)
	}
	native := stats.ComparePaired(ladderTPS["bridge-proxy"], ladderTPS["native"])
	if !near(p.DeltaVsNativePct, (native.Ratio-1)*100, 1e-9) || !p.VsNativeHasCI || !near(p.VsNativeCILowPct, (native.Low-1)*100, 1e-9) {
		t.Fatalf("vs native %+v, want %+v", p, native)
	}
	if !p.Valid || p.Evidence["proxy_cpu_us_per_txn"] == nil {
		t.Fatalf("evidence: %+v", p)
	}
	var share, logSum float64
	for _, a := range r.Explain.Attribution {
		if !a.HasShare || a.ShareCILowPct > a.SharePct || a.ShareCIHighPct < a.SharePct {
			t.Fatalf("share without its CI around it: %+v", a)
		}
		share += a.SharePct
		logSum += a.StepLogPoints
	}
	if len(r.Explain.Attribution) != 3 || !near(share, 100, 1e-6) || !near(logSum, 100*math.Log(native.Ratio), 1e-9) {
		t.Fatalf("attribution %+v adds to %.3f%% (%.3f log pts)", r.Explain.Attribution, share, logSum)
	}
	if a := r.Explain.Attribution[2]; !strings.HasPrefix(a.Layer, "network") || a.SharePct < 90 {
		t.Fatalf("the proxy should carry most of the gap: %+v", a)
	}
	w := Waterfall(r.Explain)
	if !strings.Contains(w, "bridge-proxy") || !strings.Contains(w, "docker-proxy 0.25 cores") || !strings.Contains(w, "step not distinguishable from 0") {
		t.Fatalf("waterfall:\n%s", w)
	}
	if sh := Shares(r.Explain); !strings.Contains(sh, "(95% CIs)") || !strings.Contains(sh, "network (docker-proxy vs host network) 9") {
		t.Fatalf("shares: %q", sh)
	}
}

// A total gap whose CI spans 0 is not shared out: the old shares exploded
// ("510% / 166% / −576% of the gap") and added to 100% by construction
// whatever the noise.
func TestNoSharesOfAGapNotShownToExist(t *testing.T) {
	r, rungs := ladderResult("docker-proxy", map[string][]float64{
		"native":       {1000, 1100, 900, 1050},
		"host-bind":    {1040, 1050, 950, 1000},
		"host-volume":  {950, 1120, 880, 1070},
		"bridge-proxy": {1010, 1070, 920, 1040},
	})
	Analyze(r, rungs)
	for _, a := range r.Explain.Attribution {
		if a.HasShare || a.SharePct != 0 {
			t.Fatalf("a share of a gap not shown: %+v", a)
		}
	}
	if sh := Shares(r.Explain); sh != "no shares of the gap native → bridge-proxy: its CI includes 0" {
		t.Fatalf("shares: %q", sh)
	}
	if w := Waterfall(r.Explain); strings.Contains(w, "of the gap [") || !strings.Contains(w, "no shares, since the total's CI includes 0") {
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

// Podman's rungs chain from Docker's host-volume rung, one change each,
// and their SPECs are podman: ones; selecting the rootless rung keeps the
// whole chain.
func TestPodmanRungs(t *testing.T) {
	ladder := append(Ladder(1), PodmanRungs("bench")...)
	rungs, err := Select(ladder, []string{RootlessRung})
	if err != nil {
		t.Fatal(err)
	}
	var names, specs []string
	for _, r := range rungs {
		names = append(names, r.Name)
		specs = append(specs, r.Spec("local:mariadbd", "img:1"))
	}
	if got := strings.Join(names, " "); got != "native host-bind host-volume podman-host podman-published podman-rootless" {
		t.Fatalf("rungs %s", got)
	}
	want := []string{"local:mariadbd", "docker:img:1,network=host,datadir=bind", "docker:img:1,network=host,datadir=volume",
		"podman:img:1,network=host,datadir=volume", "podman:img:1,network=bridge,datadir=volume",
		"podman:img:1,network=bridge,datadir=volume,rootless=bench"}
	if strings.Join(specs, " ") != strings.Join(want, " ") {
		t.Fatalf("specs %q", specs)
	}
}

// A Podman rung's evidence must show Podman (and rootless for the
// rootless rung): a run Docker answered is not Podman's rung.
func TestPodmanRungContradictions(t *testing.T) {
	rungs := PodmanRungs("bench")
	published, rootless := rungs[1], rungs[2]
	ev := map[string]any{"network_path": "bridge-direct", "datadir_kind": "volume", "engine": "podman"}
	if c := contradiction(published.Expect, ev); c != "" {
		t.Fatalf("valid podman-published: %s", c)
	}
	ev["engine"] = "docker"
	if c := contradiction(published.Expect, ev); !strings.Contains(c, `engine is "docker", the rung needs "podman"`) {
		t.Fatalf("docker as podman: %q", c)
	}
	ev = map[string]any{"network_path": "rootlessport", "datadir_kind": "volume", "engine": "podman"}
	if c := contradiction(rootless.Expect, ev); c != "rootless is false, the rung needs true" {
		t.Fatalf("rootful as rootless: %q", c)
	}
	ev["rootless"] = true
	if c := contradiction(rootless.Expect, ev); c != "" {
		t.Fatalf("valid rootless: %s", c)
	}
	if !strings.HasPrefix(summary(ev), "rootless podman, rootlessport") {
		t.Fatalf("summary %q", summary(ev))
	}
}

// Kubernetes's rungs chain from Docker's host-bind rung through a
// container of the pods' size (its datadir a host directory, as an
// emptyDir), one change each, as k8s: SPECs of one size;
// selecting the ClusterIP rung keeps its chain.
func TestKubeRungs(t *testing.T) {
	ladder := append(Ladder(1), KubeRungs(KubeSize{CPUs: 0.3, Memory: "512m", MemoryBytes: 512 << 20})...)
	rungs, err := Select(ladder, []string{"pod-clusterip"})
	if err != nil {
		t.Fatal(err)
	}
	var names, specs []string
	for _, r := range rungs {
		names = append(names, r.Name)
		specs = append(specs, r.Spec("local:mariadbd", "img:1"))
	}
	if got := strings.Join(names, " "); got != "native host-bind quota-pod-size pod-hostnet pod-ip pod-clusterip" {
		t.Fatalf("rungs %s", got)
	}
	want := []string{"local:mariadbd", "docker:img:1,network=host,datadir=bind",
		"docker:img:1,network=host,datadir=bind,cpus=0.3,memory=512m", "k8s:img:1,network=host,client=here,cpus=0.3,memory=512m",
		"k8s:img:1,client=here,cpus=0.3,memory=512m", "k8s:img:1,client=here,via=service,cpus=0.3,memory=512m"}
	if strings.Join(specs, " ") != strings.Join(want, " ") {
		t.Fatalf("specs %q", specs)
	}
	// A pod whose path or size reads back otherwise is not its rung.
	clusterIP := rungs[len(rungs)-1]
	ev := map[string]any{"network_path": "cluster-ip", "datadir_kind": "emptydir", "seccomp_mode": "filter", "engine": "kubernetes",
		"cpus": 0.3, "memory_limit_bytes": float64(512 << 20), "client_placement": "here"}
	if c := contradiction(clusterIP.Expect, ev); c != "" {
		t.Fatalf("valid pod-clusterip: %s", c)
	}
	ev["network_path"] = "pod-ip"
	if c := contradiction(clusterIP.Expect, ev); c != `network path is "pod-ip", the rung needs "cluster-ip"` {
		t.Fatalf("pod IP as ClusterIP: %q", c)
	}
	ev["network_path"], ev["cpus"] = "cluster-ip", 1.0
	if c := contradiction(clusterIP.Expect, ev); c != "CPU quota is 1, the rung needs 0.3" {
		t.Fatalf("a pod of another size: %q", c)
	}
	ev["cpus"], ev["memory_limit_bytes"] = 0.3, float64(1<<30)
	if c := contradiction(clusterIP.Expect, ev); c != "memory limit is 1073741824 bytes, the rung needs 536870912" {
		t.Fatalf("a pod of another memory: %q", c)
	}
	// The client beside the pod is its own rung: a client here is not it.
	ev["memory_limit_bytes"], ev["network_path"] = float64(512<<20), "pod-ip"
	beside := KubeRungs(KubeSize{CPUs: 0.3, Memory: "512m", MemoryBytes: 512 << 20})[5]
	if c := contradiction(beside.Expect, ev); c != `client placement is "here", the rung needs "beside"` {
		t.Fatalf("a client here as beside: %q", c)
	}
}

// Given two nodes, every pod is pinned to the first and the other-node
// rung puts its client on the second: against pod-beside, whose client
// must be on the server's node, one change. A client that the read-back
// shows on the server's node is not the other-node rung, nor the reverse.
func TestKubeOtherNodeRung(t *testing.T) {
	if n := len(KubeRungs(KubeSize{CPUs: 0.3, Memory: "512m", MemoryBytes: 512 << 20})); n != 6 {
		t.Fatalf("one node: %d rungs, want 6 (no other-node rung)", n)
	}
	ladder := append(Ladder(1), KubeRungs(KubeSize{CPUs: 0.3, Memory: "512m", MemoryBytes: 512 << 20, Home: "n1", Other: "n2"})...)
	rungs, err := Select(ladder, []string{OtherNodeRung})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rungs {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "native host-bind quota-pod-size pod-hostnet pod-ip pod-beside pod-other-node" {
		t.Fatalf("rungs %s", got)
	}
	other, beside := rungs[6], rungs[5]
	if other.ComparedTo != "pod-beside" {
		t.Fatalf("compared to %s", other.ComparedTo)
	}
	if s := other.Spec("local:mariadbd", "img:1"); s != "k8s:img:1,client=beside,client-node=n2,cpus=0.3,memory=512m,node=n1" {
		t.Fatalf("other-node spec %s", s)
	}
	if s := beside.Spec("local:mariadbd", "img:1"); s != "k8s:img:1,client=beside,cpus=0.3,memory=512m,node=n1" {
		t.Fatalf("beside spec %s", s)
	}
	if s := rungs[2].Spec("local:mariadbd", "img:1"); s != "docker:img:1,network=host,datadir=bind,cpus=0.3,memory=512m" {
		t.Fatalf("the container of the pods' size: %s", s)
	}
	ev := map[string]any{"network_path": "pod-ip", "datadir_kind": "emptydir", "seccomp_mode": "filter", "engine": "kubernetes",
		"cpus": 0.3, "memory_limit_bytes": float64(512 << 20), "client_placement": "beside", "node": "n1", "client_nodes": "n2"}
	if c := contradiction(other.Expect, ev); c != "" {
		t.Fatalf("valid other-node: %s", c)
	}
	if c := contradiction(beside.Expect, ev); c != `the client ran on node "n2", the server on "n1"; the rung needs the client on the server's node` {
		t.Fatalf("other node as beside: %q", c)
	}
	ev["client_nodes"] = "n1"
	if c := contradiction(beside.Expect, ev); c != "" {
		t.Fatalf("valid beside: %s", c)
	}
	if c := contradiction(other.Expect, ev); c != `the client ran on node "n1", the server on "n1"; the rung needs the client on the other node` {
		t.Fatalf("same node as other: %q", c)
	}
	delete(ev, "client_nodes")
	if c := contradiction(other.Expect, ev); c == "" {
		t.Fatal("no client node read back passed as the other node")
	}
}

// Given a storage class, the PVC rung is the beside pod with its datadir on
// a claim: one change against pod-beside, and a pod whose datadir reads
// back as an emptyDir is not it.
func TestKubePVCRung(t *testing.T) {
	for _, r := range KubeRungs(KubeSize{CPUs: 0.3, Memory: "512m", MemoryBytes: 512 << 20}) {
		if r.Name == PVCRung {
			t.Fatal("a PVC rung without a storage class")
		}
	}
	ladder := append(Ladder(1), KubeRungs(KubeSize{CPUs: 0.3, Memory: "512m", MemoryBytes: 512 << 20, Storage: "local:2Gi"})...)
	rungs, err := Select(ladder, []string{PVCRung})
	if err != nil {
		t.Fatal(err)
	}
	pvc, beside := rungs[len(rungs)-1], rungs[len(rungs)-2]
	if pvc.Name != PVCRung || pvc.ComparedTo != "pod-beside" || beside.Name != "pod-beside" {
		t.Fatalf("rungs %s (vs %s), %s", pvc.Name, pvc.ComparedTo, beside.Name)
	}
	if s := pvc.Spec("local:mariadbd", "img:1"); s != "k8s:img:1,client=beside,storage=local:2Gi,cpus=0.3,memory=512m" {
		t.Fatalf("pvc spec %s", s)
	}
	if !strings.Contains(pvc.Change, "class local") {
		t.Fatalf("change %q does not name the class", pvc.Change)
	}
	ev := map[string]any{"network_path": "pod-ip", "datadir_kind": "pvc", "seccomp_mode": "filter", "engine": "kubernetes",
		"cpus": 0.3, "memory_limit_bytes": float64(512 << 20), "client_placement": "beside"}
	if c := contradiction(pvc.Expect, ev); c != "" {
		t.Fatalf("valid pod-pvc: %s", c)
	}
	ev["datadir_kind"] = "emptydir"
	if c := contradiction(pvc.Expect, ev); c != `datadir is "emptydir", the rung needs "pvc"` {
		t.Fatalf("an emptyDir as the PVC rung: %q", c)
	}
}
