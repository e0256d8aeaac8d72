// Package explain is dbduel explain's ablation ladder: the rungs from a
// native server to the container `docker run -p` gives, each changing one
// thing of another rung, and the analysis that turns their interleaved
// runs into per-rung deltas with paired CIs, checked evidence and an
// attribution of the total gap to layers. It reads results only.
package explain

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// Rung is one step: its target SPEC's keys (after docker:IMAGE) and what
// its evidence must show.
type Rung struct {
	Name       string
	Change     string
	ComparedTo string
	Keys       string // SPEC keys after the image ("" for native)
	Engine     string // the SPEC's prefix: "" (docker), podman or k8s
	Expect     Expect
}

// Spec is the rung's target SPEC for image (native: the native SPEC).
func (r Rung) Spec(native, image string) string {
	if r.Keys == "" {
		return native
	}
	engine := r.Engine
	if engine == "" {
		engine = "docker"
	}
	return engine + ":" + image + "," + r.Keys
}

// Expect is what a rung's read-back evidence must say for its label to hold.
type Expect struct {
	NetworkPath   string // direct, docker-proxy, bridge-direct
	Datadir       string // dir, bind, volume, overlay
	Seccomp       string // disabled, filter ("" : not checked)
	CPUs          float64
	Cpuset        string
	MemoryLimited bool
	Engine        string // podman or kubernetes ("" : not checked)
	Rootless      bool
	MemoryBytes   int64  // the memory limit exactly (0: not checked)
	Client        string // the client's placement: here, beside ("" : not checked)
	// ClientNode is where a beside client ran: "server" (the server's
	// node), "other" (another), "" (not checked).
	ClientNode string
}

// MemoryRung is the rung whose limit the caller sets from the native
// server's footprint before the rung's container starts.
const MemoryRung = "memory-limit"

// MemoryLimit is that limit: 1.5 times the footprint, rounded up to 16 MiB,
// at least 64 MiB.
func MemoryLimit(footprint uint64) int64 {
	const step = 16 << 20
	n := int64(footprint) * 3 / 2
	n = (n + step - 1) / step * step
	return max(n, 64<<20)
}

// Ladder is every rung, in the order that isolates one factor at a time.
// cpus is the size of the CPU-limit pair (a quota vs a cpuset of as many
// CPUs).
func Ladder(cpus int) []Rung {
	set := "0"
	if cpus > 1 {
		set = fmt.Sprintf("0-%d", cpus-1)
	}
	return []Rung{
		{Name: "native", Change: "the native server", Expect: Expect{NetworkPath: "direct", Datadir: "dir"}},
		{Name: "host-bind", Change: "the container itself: namespaces, cgroups, seccomp (host network, datadir bind-mounted)", ComparedTo: "native",
			Keys: "network=host,datadir=bind", Expect: Expect{NetworkPath: "direct", Datadir: "bind", Seccomp: "filter"}},
		{Name: "host-volume", Change: "datadir on a named volume instead of a bind mount", ComparedTo: "host-bind",
			Keys: "network=host,datadir=volume", Expect: Expect{NetworkPath: "direct", Datadir: "volume", Seccomp: "filter"}},
		{Name: "host-overlay", Change: "datadir on the container's overlay filesystem instead of a volume", ComparedTo: "host-volume",
			Keys: "network=host,datadir=overlay", Expect: Expect{NetworkPath: "direct", Datadir: "overlay", Seccomp: "filter"}},
		{Name: "bridge-proxy", Change: "bridge network, port published on 127.0.0.1 (docker-proxy): what docker run -p gives", ComparedTo: "host-volume",
			Keys: "network=bridge,datadir=volume", Expect: Expect{NetworkPath: "docker-proxy", Datadir: "volume", Seccomp: "filter"}},
		{Name: "bridge-direct", Change: "bridge network without docker-proxy: the client in the container's network namespace (dbduel's agent), on its loopback", ComparedTo: "bridge-proxy",
			Keys: "network=bridge,datadir=volume,client=netns", Expect: Expect{NetworkPath: "bridge-direct", Datadir: "volume", Seccomp: "filter"}},
		{Name: "seccomp-unconfined", Change: "no seccomp filter", ComparedTo: "host-volume",
			Keys: "network=host,datadir=volume,seccomp=unconfined", Expect: Expect{NetworkPath: "direct", Datadir: "volume", Seccomp: "disabled"}},
		{Name: "memory-limit", Change: "a memory limit just above the native server's footprint (1.5x its resident memory when it started)", ComparedTo: "host-volume",
			Keys: "network=host,datadir=volume", Expect: Expect{NetworkPath: "direct", Datadir: "volume", MemoryLimited: true}},
		{Name: "cpuset", Change: fmt.Sprintf("pinned to %d CPU(s) (cpuset=%s)", cpus, set), ComparedTo: "host-volume",
			Keys: "network=host,datadir=volume,cpuset=" + set, Expect: Expect{NetworkPath: "direct", Datadir: "volume", Cpuset: set}},
		{Name: "cpu-quota", Change: fmt.Sprintf("a CPU quota of %d CPU(s) instead of a cpuset of as many", cpus), ComparedTo: "cpuset",
			Keys: fmt.Sprintf("network=host,datadir=volume,cpus=%d", cpus), Expect: Expect{NetworkPath: "direct", Datadir: "volume", CPUs: float64(cpus)}},
	}
}

// RootlessRung is the Podman rung that needs an unprivileged user.
const RootlessRung = "podman-rootless"

// PodmanRungs are Podman's rungs, measured when asked for: the same
// container on Podman's host network (the engine itself: Podman's runc
// setup against Docker's), Podman's published port (netavark's NAT, no
// userland proxy, where Docker has docker-proxy), and rootless Podman's
// (a user namespace; the port through rootlessport, a userland proxy)
// for user, an unprivileged user with subordinate ids.
func PodmanRungs(user string) []Rung {
	return []Rung{
		{Name: "podman-host", Change: "Podman instead of Docker (runc, host network, named volume)", ComparedTo: "host-volume", Engine: "podman",
			Keys: "network=host,datadir=volume", Expect: Expect{NetworkPath: "direct", Datadir: "volume", Engine: "podman"}},
		{Name: "podman-published", Change: "Podman's published port on 127.0.0.1: netavark's NAT, no userland proxy", ComparedTo: "podman-host", Engine: "podman",
			Keys: "network=bridge,datadir=volume", Expect: Expect{NetworkPath: "bridge-direct", Datadir: "volume", Engine: "podman"}},
		{Name: RootlessRung, Change: "rootless Podman: a user namespace, the published port through rootlessport (userland) and slirp4netns", ComparedTo: "podman-published", Engine: "podman",
			Keys: "network=bridge,datadir=volume,rootless=" + user, Expect: Expect{NetworkPath: "rootlessport", Datadir: "volume", Engine: "podman", Rootless: true}},
	}
}

// KubeSize is what every Kubernetes rung shares: the pods' size, where
// they run, and the claim of the PVC rung.
type KubeSize struct {
	CPUs        float64
	Memory      string // as the user wrote it (512m)
	MemoryBytes int64  // Memory's bytes
	// Home and Other are two nodes that take pods (both empty with one):
	// every pod is pinned to Home, and the other-node rung's client runs
	// on Other.
	Home, Other string
	// Storage is the PVC rung's CLASS:SIZE (empty: no such rung).
	Storage string
}

// KubeRungs are Kubernetes's rungs (--k8s), for a cluster whose node is
// this machine or whose pod IPs this machine reaches: a container with the
// pods' CPU quota and memory limit, its datadir bind-mounted, then
// Guaranteed pods of that size (the datadir an emptyDir, the runtime's
// default seccomp filter) on the node's network, on their own (the pod
// IP), behind their Service's ClusterIP and NodePort (kube-proxy's NAT),
// with the client in an agent pod beside the server instead of here, and
// (given two nodes) on another node, and (given a storage class) the
// datadir on a claim. One size for all, small enough by default (0.2
// CPUs: seven pods and their agents fit two cores) that the whole ladder
// fits one node. With two nodes every pod is pinned to Home, so that the
// rungs differ in their one change and not in the node the scheduler
// picked.
func KubeRungs(k KubeSize) []Rung {
	cpus := k.CPUs
	size := fmt.Sprintf("cpus=%g,memory=%s", cpus, k.Memory)
	podSize := size // a pod's, pinned to home when there are two nodes
	if k.Home != "" {
		podSize += ",node=" + k.Home
	}
	pod := func(path, client string) Expect {
		return Expect{NetworkPath: path, Datadir: "emptydir", Seccomp: "filter", Engine: "kubernetes", CPUs: cpus,
			MemoryLimited: true, MemoryBytes: k.MemoryBytes, Client: client}
	}
	beside := pod("pod-ip", "beside")
	elsewhere := beside
	if k.Other != "" {
		beside.ClientNode, elsewhere.ClientNode = "server", "other"
	}
	rungs := []Rung{
		{Name: "quota-pod-size", Change: fmt.Sprintf("the pods' size on the container: a CPU quota of %g and a %s memory limit", cpus, k.Memory), ComparedTo: "host-bind",
			Keys: "network=host,datadir=bind," + size, Expect: Expect{NetworkPath: "direct", Datadir: "bind", Seccomp: "filter", CPUs: cpus, MemoryLimited: true, MemoryBytes: k.MemoryBytes}},
		{Name: "pod-hostnet", Change: "a Guaranteed pod on the node's network (hostNetwork: true) instead of the container: the kubelet and its runtime; the datadir an emptyDir (a node directory, as the bind mount)", ComparedTo: "quota-pod-size", Engine: "k8s",
			Keys: "network=host,client=here," + podSize, Expect: pod("host", "here")},
		{Name: "pod-ip", Change: "the pod's own network: the client reaches the pod IP over the node's bridge", ComparedTo: "pod-hostnet", Engine: "k8s",
			Keys: "client=here," + podSize, Expect: pod("pod-ip", "here")},
		{Name: "pod-clusterip", Change: "through the Service's ClusterIP: kube-proxy's iptables NAT", ComparedTo: "pod-ip", Engine: "k8s",
			Keys: "client=here,via=service," + podSize, Expect: pod("cluster-ip", "here")},
		{Name: "pod-nodeport", Change: "through the node's address and the Service's NodePort: kube-proxy's NAT", ComparedTo: "pod-ip", Engine: "k8s",
			Keys: "client=here,via=nodeport," + podSize, Expect: pod("node-port", "here")},
		{Name: "pod-beside", Change: "the client in dbduel's agent pod beside the server on its node instead of here (to the pod IP)", ComparedTo: "pod-ip", Engine: "k8s",
			Keys: "client=beside," + podSize, Expect: beside},
	}
	if k.Other != "" {
		rungs = append(rungs, Rung{Name: OtherNodeRung, Change: "the client's agent pod on another node than the server's: the cluster network between nodes", ComparedTo: "pod-beside", Engine: "k8s",
			Keys: "client=beside,client-node=" + k.Other + "," + podSize, Expect: elsewhere})
	}
	if k.Storage != "" {
		claim := beside
		claim.Datadir = "pvc"
		class, _, _ := strings.Cut(k.Storage, ":")
		rungs = append(rungs, Rung{Name: PVCRung, Change: fmt.Sprintf("the datadir on a PersistentVolumeClaim of the class %s instead of an emptyDir", class), ComparedTo: "pod-beside", Engine: "k8s",
			Keys: "client=beside,storage=" + k.Storage + "," + podSize, Expect: claim})
	}
	return rungs
}

// PVCRung is the Kubernetes rung that needs a StorageClass.
const PVCRung = "pod-pvc"

// OtherNodeRung is the Kubernetes rung that needs a second node.
const OtherNodeRung = "pod-other-node"

// Layers split the total gap (native to bridge-proxy, the default
// container) along the chain whose steps telescope.
var layers = []struct{ name, from, to string }{
	{"container itself (namespaces, cgroups, seccomp)", "native", "host-bind"},
	{"storage (named volume vs bind mount)", "host-bind", "host-volume"},
	{"network (docker-proxy vs host network)", "host-volume", "bridge-proxy"},
}

// Select keeps the named rungs (and, so that every delta has its
// reference, the rungs they are compared to, transitively), in ladder order.
func Select(ladder []Rung, names []string) ([]Rung, error) {
	byName := map[string]Rung{}
	for _, r := range ladder {
		byName[r.Name] = r
	}
	want := map[string]bool{"native": true}
	for _, n := range names {
		r, ok := byName[n]
		if !ok {
			var known []string
			for _, r := range ladder {
				known = append(known, r.Name)
			}
			return nil, fmt.Errorf("unknown rung %q (known: %s)", n, strings.Join(known, ", "))
		}
		for ; r.Name != ""; r = byName[r.ComparedTo] {
			want[r.Name] = true
		}
	}
	var out []Rung
	for _, r := range ladder {
		if want[r.Name] {
			out = append(out, r)
		}
	}
	return out, nil
}

// Analyze fills r.Explain from the runs of the rungs (targets named after
// them, native first): each step against its reference and each rung's
// cumulative contrast against native, both paired by block with their own
// CIs, the evidence read back, and the attribution of the total gap.
func Analyze(r *result.Result, rungs []Rung) {
	ex := &result.Explain{Metric: "tps"}
	tps := perBlock(r)
	targets := map[string]result.Target{}
	for _, t := range r.Targets {
		targets[t.Name] = t
	}
	for _, rung := range rungs {
		out := result.Rung{Name: rung.Name, Change: rung.Change, ComparedTo: rung.ComparedTo}
		// A snapshot may hold a rung before its reference ran: no pairs, no delta.
		if p := pair(tps, rung.Name, rung.ComparedTo); rung.ComparedTo != "" && p.N > 0 {
			setStep(&out, p)
			vs := pair(tps, rung.Name, "native")
			out.DeltaVsNativePct, out.VsNativeHasCI = (vs.Ratio-1)*100, vs.HasCI
			if vs.HasCI {
				out.VsNativeCILowPct, out.VsNativeCIHighPct = (vs.Low-1)*100, (vs.High-1)*100
			}
		}
		out.Evidence = cause.Evidence(r, targets[rung.Name], 0)
		out.Invalid = contradiction(rung.Expect, out.Evidence)
		out.Valid = out.Invalid == ""
		ex.Rungs = append(ex.Rungs, out)
	}
	ex.Attribution = attribute(rungs, tps)
	r.Explain = ex
}

// setStep records a rung's step against its reference: Δ% with its CI and
// the same in log points, read as "not distinguishable from 0" when the
// CI spans 0.
func setStep(out *result.Rung, p stats.Paired) {
	out.DeltaPct, out.HasCI, out.N = (p.Ratio-1)*100, p.HasCI, p.N
	out.StepLogPoints = 100 * math.Log(p.Ratio)
	if !p.HasCI {
		return
	}
	out.CILowPct, out.CIHighPct = (p.Low-1)*100, (p.High-1)*100
	out.StepCILowLogPoints, out.StepCIHighLogPoints = 100*math.Log(p.Low), 100*math.Log(p.High)
	if p.Low <= 1 && p.High >= 1 {
		out.StepReading = "not distinguishable from 0"
	}
}

// attribute splits the gap native → bridge-proxy into the layers of the
// path, over the blocks every rung on it completed: each layer's step in
// log points with its CI, and, when the total's own CI excludes 0, its
// share of the total with its Fieller CI. Over common blocks the
// steps' log-ratios add up to the total's exactly, so the shares add to 100%.
func attribute(rungs []Rung, tps map[string]map[int]float64) []result.Attribution {
	names := map[string]bool{}
	for _, rung := range rungs {
		names[rung.Name] = true
	}
	path := []string{"native"}
	for _, l := range layers {
		if !names[l.from] || !names[l.to] {
			return nil
		}
		path = append(path, l.to)
	}
	blocks := commonBlocks(tps, path)
	if len(blocks) == 0 {
		return nil
	}
	logs := func(to, from string) []float64 {
		var out []float64
		for _, b := range blocks {
			out = append(out, math.Log(tps[to][b]/tps[from][b]))
		}
		return out
	}
	total := logs("bridge-proxy", "native")
	totalP := stats.CompareLogs(total)
	var out []result.Attribution
	for _, l := range layers {
		step := logs(l.to, l.from)
		p := stats.CompareLogs(step)
		a := result.Attribution{Layer: l.name, From: l.from, To: l.to, DeltaPct: (p.Ratio - 1) * 100, HasCI: p.HasCI,
			StepLogPoints: 100 * math.Log(p.Ratio)}
		if p.HasCI {
			a.CILowPct, a.CIHighPct = (p.Low-1)*100, (p.High-1)*100
			a.StepCILowLogPt, a.StepCIHighLogPt = 100*math.Log(p.Low), 100*math.Log(p.High)
		}
		if totalP.HasCI && (totalP.High < 1 || totalP.Low > 1) {
			a.HasShare = true
			a.SharePct = mean(step) / mean(total) * 100
			a.ShareCILowPct, a.ShareCIHighPct, _ = fiellerShare(step, total)
		}
		out = append(out, a)
	}
	return out
}

// commonBlocks are the blocks every named target completed, in order.
func commonBlocks(tps map[string]map[int]float64, names []string) []int {
	var blocks []int
	for b := range tps[names[0]] {
		all := true
		for _, n := range names[1:] {
			if _, ok := tps[n][b]; !ok {
				all = false
			}
		}
		if all {
			blocks = append(blocks, b)
		}
	}
	slices.Sort(blocks)
	return blocks
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// fiellerShare is the 95% interval of a step's share of the total gap
// (the ratio of the two means of per-block log-ratios, which are
// correlated: the step is part of the total), by Fieller's theorem with
// t(n−1). It exists when the total's own t interval excludes 0.
func fiellerShare(step, total []float64) (lo, hi float64, ok bool) {
	n := float64(len(step))
	if len(step) < 2 {
		return 0, 0, false
	}
	a, b := mean(step), mean(total)
	var v11, v22, v12 float64
	for i := range step {
		da, db := step[i]-a, total[i]-b
		v11, v22, v12 = v11+da*da, v22+db*db, v12+da*db
	}
	v11, v22, v12 = v11/(n-1)/n, v22/(n-1)/n, v12/(n-1)/n
	t := stats.TQuantile(len(step) - 1)
	g := t * t * v22 / (b * b)
	if g >= 1 || v22 == 0 {
		return 0, 0, false
	}
	q := a / b
	disc := v11 - 2*q*v12 + q*q*v22 - g*(v11-v12*v12/v22)
	if disc < 0 {
		disc = 0
	}
	center := q - g*v12/v22
	half := t / math.Abs(b) * math.Sqrt(disc)
	return (center - half) / (1 - g) * 100, (center + half) / (1 - g) * 100, true
}

// perBlock is each target's TPS by block (complete measured runs of the
// first point).
func perBlock(r *result.Result) map[string]map[int]float64 {
	return result.PerBlock(r.Completed(result.AnyTarget, 0), func(s result.Summary) float64 { return s.TPS })
}

// pair compares target with baseline over the blocks both completed.
func pair(tps map[string]map[int]float64, target, baseline string) stats.Paired {
	tv, bv, _ := stats.Pairs(tps, target, baseline, nil)
	return stats.ComparePaired(tv, bv)
}
