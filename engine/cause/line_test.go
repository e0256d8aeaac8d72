package cause

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// threeTargets is native, a bridge container behind docker-proxy and a
// host-network container, three blocks each, with known TPS and CPU:
// native 1000 TPS on 0.5 server cores (500 µs/txn); bridge 600 TPS on 0.36
// server cores (600 µs/txn) and 0.24 proxy cores (400 µs/txn: 40% of
// 1000); host within noise of native.
func threeTargets() *result.Result {
	r := &result.Result{Plan: result.Plan{Runs: 3}}
	type side struct {
		name   string
		desc   result.Described
		tps    [3]float64
		server float64
		proxy  float64
	}
	sides := []side{
		{"native", result.Described{NetworkPath: "direct"}, [3]float64{1000, 1010, 990}, 0.5, 0},
		{"bridge", result.Described{NetworkPath: "docker-proxy", NetworkMode: "bridge"}, [3]float64{600, 612, 588}, 0.36, 0.24},
		{"host", result.Described{NetworkPath: "direct", NetworkMode: "host"}, [3]float64{1010, 995, 1000}, 0.5, 0},
	}
	for _, s := range sides {
		r.Targets = append(r.Targets, result.Target{Name: s.name, Described: s.desc})
		for b, tps := range s.tps {
			tel := map[string]float64{"server_cpu_cores": s.server}
			if s.proxy > 0 {
				tel["proxy_cpu_cores"] = s.proxy
			}
			run := result.Run{Target: s.name, Block: b + 1, Index: b + 1, Complete: true,
				Summary:   result.Summary{Figures: result.Figures{Events: uint64(tps), TPS: tps, QPS: tps * 10, P95US: 2000}, AvgUS: 1000},
				Intervals: []result.Interval{{Figures: result.Figures{TPS: tps}, SpanS: 1, Telemetry: result.TelemetryOf(tel)}}}
			r.Runs = append(r.Runs, run)
		}
	}
	return r
}

func TestCauseNamesTheProxyAndItsShare(t *testing.T) {
	r := threeTargets()
	stats.Analyze(r)
	Annotate(r)
	bridge := For(r, "bridge", 0)
	// 0.24 cores at 600 TPS is 400 µs/txn; the server's 0.36 is 600: 40%.
	if !strings.Contains(bridge, "docker-proxy used 0.24 cores — 40% of the container side's CPU per transaction") {
		t.Fatalf("bridge: %q", bridge)
	}
	// 600 vs 500 µs/txn: +20% against native.
	if !strings.Contains(bridge, "the server's CPU per transaction +20% [+17%, +23%] vs native (600 µs vs 500 µs)") {
		t.Fatalf("bridge: %q", bridge)
	}
	if host := For(r, "host", 0); host != "within noise (equivalent within ±5%: 90% CI [-2.2%, +2.6%])" {
		t.Fatalf("host: %q", host)
	}
	line := Line(r, 0)
	if !strings.HasPrefix(line, "bridge: measured alongside: docker-proxy") || !strings.HasSuffix(line, "; host: within noise (equivalent within ±5%: 90% CI [-2.2%, +2.6%])") {
		t.Fatalf("line: %q", line)
	}
	// Stored on the primary metric only.
	for _, c := range r.Comparisons {
		if (c.Cause != "") != (c.Metric == "tps") {
			t.Fatalf("%s %s cause %q", c.Target, c.Metric, c.Cause)
		}
	}
}

// Rootless Podman's rootlessport is a userland proxy too: its cost is
// named as docker-proxy's is, by its own name.
func TestCauseNamesRootlessport(t *testing.T) {
	r := threeTargets()
	r.Targets[1].Described = result.Described{NetworkPath: "rootlessport", NetworkMode: "bridge", Engine: "podman", Rootless: true}
	stats.Analyze(r)
	Annotate(r)
	bridge := For(r, "bridge", 0)
	if !strings.Contains(bridge, "rootlessport used 0.24 cores — 40% of the container side's CPU per transaction") || strings.Contains(bridge, "docker-proxy") {
		t.Fatalf("bridge: %q", bridge)
	}
}

func TestCauseParityAndThrottling(t *testing.T) {
	r := threeTargets()
	for i := range r.Runs {
		if r.Runs[i].Target == "host" {
			r.Runs[i].Summary.TPS *= 0.5
			r.Runs[i].Intervals[0].Telemetry.Set("cpu_throttled_pct", 37.4)
		}
	}
	r.Parity = &result.Parity{
		Versions: map[string]string{"native": "10.11.19-MariaDB", "bridge": "10.11.19-MariaDB", "host": "10.11.6-MariaDB"},
		VariablesDiff: []result.VariableDiff{
			{Name: "innodb_buffer_pool_size", Values: map[string]string{"native": "1G", "bridge": "1G", "host": "128M"}, Rank: 0},
			{Name: "sync_binlog", Values: map[string]string{"native": "0", "bridge": "1", "host": "1"}, Rank: 1},
			{Name: "max_connections", Values: map[string]string{"native": "151", "bridge": "151", "host": "100"}, Rank: 2},
			{Name: "thread_cache_size", Values: map[string]string{"native": "8", "bridge": "8", "host": "9"}, Rank: 2},
		},
	}
	stats.Analyze(r)
	Annotate(r)
	host := For(r, "host", 0)
	for _, want := range []string{
		"the CPU quota throttled it in 37% of periods",
		"server version 10.11.19-MariaDB → 10.11.6-MariaDB",
		"differs: configuration innodb_buffer_pool_size 1G → 128M, sync_binlog 0 → 1, 2 more setting(s) (parity.variables_diff)",
	} {
		if !strings.Contains(host, want) {
			t.Errorf("host: %q lacks %q", host, want)
		}
	}
	// The proxy is bridge's, never host's.
	if strings.Contains(host, "docker-proxy") {
		t.Errorf("host: %q", host)
	}
	// bridge differs from native only in sync_binlog: one variable named.
	if b := For(r, "bridge", 0); !strings.Contains(b, "differs: configuration sync_binlog 0 → 1") || strings.Contains(b, "more setting") {
		t.Errorf("bridge: %q", b)
	}
}

// "Within noise" is said only of an interval narrow enough to mean it; a
// wide one spanning 0, or two blocks, is not resolved, and what was
// measured beside it is still printed, as measured, not as the cause.
// (Two blocks of a −64% gap printed "cause: within noise".)
func TestWithinNoiseOnlyOfNarrowIntervals(t *testing.T) {
	r := threeTargets()
	for i := range r.Runs { // host now moves ±20% around native
		if r.Runs[i].Target == "host" {
			r.Runs[i].Summary.TPS = []float64{1250, 800, 1100}[r.Runs[i].Block-1]
		}
	}
	stats.Analyze(r)
	Annotate(r)
	if host := For(r, "host", 0); !strings.HasPrefix(host, "not resolved (90% CI [") || strings.Contains(host, "within noise") {
		t.Fatalf("host: %q", host)
	}
	two := threeTargets()
	two.Runs = slices.DeleteFunc(two.Runs, func(run result.Run) bool { return run.Block == 3 })
	stats.Analyze(two)
	Annotate(two)
	b := For(two, "bridge", 0)
	if !strings.HasPrefix(b, "2 blocks: too few to judge; measured alongside: docker-proxy used 0.24 cores") {
		t.Fatalf("bridge with 2 blocks: %q", b)
	}
	if c := two.Comparison("bridge", "tps", 0); c == nil || strings.Contains(c.Verdict, "slower") || !strings.Contains(c.Verdict, "2 blocks: too few to judge; the interval") {
		t.Fatalf("2-block verdict: %+v", c)
	}
}

func TestCauseBeforeTheFirstBlock(t *testing.T) {
	r := threeTargets()
	r.Runs = r.Runs[:1] // native's first run only
	stats.Analyze(r)
	Annotate(r)
	if got := Line(r, 0); got != "" {
		t.Fatalf("line %q", got)
	}
}

// CPU per transaction is like for like: ΣCPU ÷ Σtransactions with the idle
// CPU read before the run subtracted. Identical work (100 µs a
// transaction) over 0.15 idle cores read +83% on the slower side as a
// plain ratio of cores to TPS; marginal, it is the same, and not named.
// Different accounting scopes are said.
func TestServerCPUPerTransactionIsMarginal(t *testing.T) {
	r := &result.Result{Complete: true, Plan: result.Plan{Runs: 3}}
	for _, side := range []struct {
		name  string
		tps   float64
		scope string
	}{{"native", 1000, "process group"}, {"c", 420, "cgroup"}} {
		r.Targets = append(r.Targets, result.Target{Name: side.name, Described: result.Described{CPUScope: side.scope}})
		for b := 1; b <= 3; b++ {
			tps := side.tps * (1 + 0.01*float64(b))
			tel := map[string]float64{"server_cpu_cores": 0.15 + tps*100e-6, "server_idle_cpu_cores": 0.15}
			r.Runs = append(r.Runs, result.Run{Target: side.name, Block: b, Index: b, Complete: true,
				Summary:   result.Summary{Figures: result.Figures{Events: uint64(tps * 10), TPS: tps, QPS: tps}, AvgUS: 1e6 / tps, DurationS: 10},
				Intervals: []result.Interval{{Figures: result.Figures{TPS: tps}, SpanS: 10, Telemetry: result.TelemetryOf(tel)}}})
		}
	}
	stats.Analyze(r)
	Annotate(r)
	ev := Evidence(r, r.Targets[1], 0)
	if m := ev["server_marginal_cpu_us_per_txn"].(float64); m < 99 || m > 101 {
		t.Fatalf("marginal CPU per transaction %v µs, want 100", m)
	}
	if raw := ev["server_cpu_us_per_txn"].(float64); raw < 400 {
		t.Fatalf("raw CPU per transaction %v µs: the idle CPU divided by fewer transactions", raw)
	}
	if c := For(r, "c", 0); strings.Contains(c, "CPU per transaction +") {
		t.Fatalf("identical marginal work named as a difference: %q", c)
	}
	// The same work 30% dearer on c: named, with the scopes.
	for i, run := range r.Runs {
		if run.Target == "c" {
			tps := run.Summary.TPS
			r.Runs[i].Intervals[0].Telemetry.Set("server_cpu_cores", 0.15+tps*130e-6)
		}
	}
	stats.Analyze(r)
	Annotate(r)
	if c := For(r, "c", 0); !strings.Contains(c, "the server's marginal CPU per transaction +30%") || !strings.Contains(c, "not like for like: c's is its cgroup, native's its process group") {
		t.Fatalf("c: %q", c)
	}
}

// The system micro-benchmarks have no server: their cause names where the
// benchmark ran (CPUs, quota, filesystem, O_DIRECT), never a server's CPU
// per transaction.
func TestSystemWorkloadCauseSpeaksItsOwnTerms(t *testing.T) {
	r := &result.Result{Complete: true, Workload: result.Workload{Name: "fileio"}, Plan: result.Plan{Runs: 3}}
	sys := map[string]map[string]string{
		"native": {"cpus_allowed": "0-1", "cpu_quota": "none", "fs_type": "ext4", "o_direct": "honoured"},
		"c":      {"cpus_allowed": "0-1", "cpu_quota": "1", "fs_type": "overlay", "o_direct": "refused (EINVAL: the filesystem does not support O_DIRECT)"},
	}
	for _, name := range []string{"native", "c"} {
		r.Targets = append(r.Targets, result.Target{Name: name, Described: result.Described{System: sys[name]}})
		for b := 1; b <= 3; b++ {
			tps := map[string]float64{"native": 1000, "c": 600}[name] * (1 + 0.01*float64(b*b))
			r.Runs = append(r.Runs, result.Run{Target: name, Block: b, Index: b, Complete: true,
				Summary:   result.Summary{Figures: result.Figures{Events: uint64(tps), TPS: tps}, AvgUS: 1e6 / tps},
				Intervals: []result.Interval{{SpanS: 1, Telemetry: result.TelemetryOf(map[string]float64{"server_cpu_cores": 0.5})}}})
		}
	}
	stats.Analyze(r)
	Annotate(r)
	c := For(r, "c", 0)
	for _, want := range []string{"CPU quota 1 vs none", "files on overlay vs ext4", "O_DIRECT refused"} {
		if !strings.Contains(c, want) {
			t.Errorf("cause %q lacks %q", c, want)
		}
	}
	if strings.Contains(c, "per transaction") || strings.Contains(c, "server") {
		t.Errorf("cause speaks database: %q", c)
	}
}

// Two containers both behind docker-proxy that differ in their cnf and
// memory limit: the cause names those differences first, whole, and
// docker-proxy only as what both share (it named docker-proxy first in
// seed 003's container-vs-container run).
func TestCauseNamesWhatDiffersBetweenContainers(t *testing.T) {
	r := &result.Result{Complete: true, Plan: result.Plan{Runs: 3}}
	for _, side := range []struct {
		name string
		mem  int64
		tps  float64
	}{{"mem2g", 2 << 30, 500}, {"tuned", 8 << 30, 800}} {
		r.Targets = append(r.Targets, result.Target{Name: side.name,
			Described: result.Described{NetworkPath: "docker-proxy", NetworkMode: "bridge", MemoryLimitBytes: side.mem}})
		for b := 1; b <= 3; b++ {
			tps := side.tps * (1 + 0.01*float64(b*b)*side.tps/500)
			tel := map[string]float64{"server_cpu_cores": 0.5, "proxy_cpu_cores": 0.4}
			r.Runs = append(r.Runs, result.Run{Target: side.name, Block: b, Index: b, Complete: true,
				Summary:   result.Summary{Figures: result.Figures{Events: uint64(tps), TPS: tps, QPS: tps}, AvgUS: 1e6 / tps},
				Intervals: []result.Interval{{SpanS: 1, Telemetry: result.TelemetryOf(tel)}}})
		}
	}
	r.Parity = &result.Parity{VariablesDiff: []result.VariableDiff{
		{Name: "innodb_buffer_pool_size", Values: map[string]string{"mem2g": "134217728", "tuned": "6442450944"}, Rank: 0},
		{Name: "innodb_flush_log_at_trx_commit", Values: map[string]string{"mem2g": "1", "tuned": "2"}, Rank: 1},
		{Name: "thread_cache_size", Values: map[string]string{"mem2g": "8", "tuned": "16"}, Rank: 2},
	}}
	stats.Analyze(r)
	Annotate(r)
	c := For(r, "tuned", 0)
	want := "differs: memory limit 2GiB → 8GiB (with a 6GiB buffer pool), configuration innodb_buffer_pool_size 128MiB → 6GiB, innodb_flush_log_at_trx_commit 1 → 2, 1 more setting(s) (parity.variables_diff)"
	if !strings.HasPrefix(c, want) || !strings.HasSuffix(c, "; both sides behind docker-proxy") || strings.Contains(c, "docker-proxy used") {
		t.Fatalf("cause %q\nwant it to start %q", c, want)
	}
}

// A cpuset of every CPU is no limit: a container reads back "0-1" on two
// CPUs unasked, and that is not a difference from native.
func TestCpusetOfEveryCPUIsNoDifference(t *testing.T) {
	r := &result.Result{Environment: map[string]string{"cpu_count": "2"}}
	n := result.Target{Name: "n"}
	c := result.Target{Name: "c", Described: result.Described{Cpuset: "0-1"}}
	if d := differences(r, c, n); len(d) != 0 {
		t.Fatalf("differences %q", d)
	}
	c.Described.Cpuset = "0"
	if d := differences(r, c, n); len(d) != 1 || d[0] != "cpuset none → 0" {
		t.Fatalf("differences %q", d)
	}
}

// The cause names each network path it differs by: Podman's published
// port (no proxy), the container's own loopback, a remote engine's port,
// a pod's address, Service and NodePort (docker-proxy is named with its
// cost, measured alongside); a pod on the node's network is direct.
func TestCauseNamesTheNetworkPath(t *testing.T) {
	for _, c := range []struct {
		d    result.Described
		want string
	}{
		{result.Described{NetworkPath: "bridge-direct", NetworkMode: "bridge", Engine: "podman"}, "network path direct → Podman's published port (NAT, no proxy)"},
		{result.Described{NetworkPath: "rootlessport", NetworkMode: "bridge", Engine: "podman", Rootless: true}, "network path direct → rootless Podman's rootlessport (a userland proxy)"},
		{result.Described{NetworkPath: "remote-published", NetworkMode: "bridge", Engine: "docker", Host: "10.254.77.2"}, "network path direct → the engine host's published port"},
		{result.Described{NetworkPath: "bridge-direct", NetworkMode: "bridge", Engine: "docker", ClientPlacement: "netns"}, "network path direct → the container's own loopback"},
		{result.Described{NetworkPath: "pod-ip", NetworkMode: "pod", Engine: "kubernetes", ClientPlacement: "here"}, "network path direct → the pod IP (the node's bridge)"},
		{result.Described{NetworkPath: "cluster-ip", NetworkMode: "pod", Engine: "kubernetes", ClientPlacement: "here"}, "network path direct → the Service's ClusterIP (kube-proxy's NAT)"},
		{result.Described{NetworkPath: "node-port", NetworkMode: "pod", Engine: "kubernetes", ClientPlacement: "here"}, "network path direct → the node's NodePort (kube-proxy's NAT)"},
		{result.Described{NetworkPath: "direct", NetworkMode: "host", Engine: "kubernetes", ClientPlacement: "beside"}, "client in dbduel's process → dbduel's agent beside the server"},
		{result.Described{NetworkPath: "pod-loopback", NetworkMode: "pod", Engine: "kubernetes", ClientPlacement: "netns"}, "network path direct → the pod's own loopback"},
		{result.Described{NetworkPath: "direct", NetworkMode: "host", Engine: "kubernetes", ClientPlacement: "beside", ClientAgents: 3}, "client in dbduel's process → dbduel's 3 agents beside the server"},
		{result.Described{NetworkPath: "direct", NetworkMode: "host", Engine: "kubernetes", ClientPlacement: "beside", Node: "n1", ClientNodes: []string{"n1"}}, "client in dbduel's process → dbduel's agent beside the server"},
		{result.Described{NetworkPath: "direct", NetworkMode: "host", Engine: "kubernetes", ClientPlacement: "beside", Node: "n1", ClientNodes: []string{"n2"}}, "client in dbduel's process → dbduel's agent on another node (n2)"},
		{result.Described{NetworkPath: "direct", NetworkMode: "host", Engine: "kubernetes", ClientPlacement: "beside", ClientAgents: 2, Node: "n1", ClientNodes: []string{"n1", "n2"}}, "client in dbduel's process → dbduel's 2 agents over nodes n1, n2"},
	} {
		r := threeTargets()
		r.Targets[1].Described = c.d
		stats.Analyze(r)
		Annotate(r)
		if got := For(r, "bridge", 0); !strings.Contains(got, "differs: "+c.want) {
			t.Errorf("%+v: cause %q, want it to name %q", c.d, got, c.want)
		}
		if got := For(r, "host", 0); strings.Contains(got, "network path") {
			t.Errorf("host network vs native: %q names a path difference", got)
		}
	}
}

// A block whose idle CPU was not read makes every pair gross, on both
// sides, and the line says so: falling back block by block paired one
// side's marginal CPU with the other's gross (here +67% from identical
// marginal work, 100 µs against 167 µs with the idle CPU in).
func TestServerCPUPairsAreOneKind(t *testing.T) {
	r := &result.Result{Complete: true, Plan: result.Plan{Runs: 3}}
	for _, name := range []string{"native", "c"} {
		r.Targets = append(r.Targets, result.Target{Name: name})
		for b := 1; b <= 3; b++ {
			tps := 1000 * (1 + 0.01*float64(b))
			tel := map[string]float64{"server_cpu_cores": 0.1 + tps*100e-6, "server_idle_cpu_cores": 0.1}
			if name == "c" && b == 2 {
				delete(tel, "server_idle_cpu_cores")
			}
			r.Runs = append(r.Runs, result.Run{Target: name, Block: b, Index: b, Complete: true,
				Summary:   result.Summary{Figures: result.Figures{Events: uint64(tps * 10), TPS: tps, QPS: tps}, AvgUS: 1e6 / tps, DurationS: 10},
				Intervals: []result.Interval{{Figures: result.Figures{TPS: tps}, SpanS: 10, Telemetry: result.TelemetryOf(tel)}}})
		}
	}
	p, marginal := ServerCPUPerTxn(r, "c", "native", 0)
	if marginal || p.N != 3 || math.Abs(p.Ratio-1) > 0.001 {
		t.Fatalf("marginal %v, %+v: want every pair gross, ratio 1", marginal, p)
	}
	stats.Analyze(r)
	Annotate(r)
	if c := For(r, "c", 0); strings.Contains(c, "CPU per transaction") {
		t.Fatalf("identical work named as a CPU difference: %q", c)
	}
}

// "Within noise" is --margin's equivalence (TOST) and nothing else: a −3%
// whose 95% CI is [−6.1%, +0.3%] has a 90% CI reaching below −5%, so the
// verdict's "inconclusive at ±5%" is never beside a cause line's "within
// noise" (the half-width, 3.4%, once said it was).
func TestWithinNoiseIsTheEquivalenceTest(t *testing.T) {
	c := &result.Comparison{Target: "c", Baseline: "n", Metric: "tps", Primary: true, HasCI: true, N: 5,
		Ratio: 0.97, DeltaPct: -3, CILowPct: -6.1, CIHighPct: 0.3, HalfWidthPct: 3.4,
		SELog: 0.01205, Interval: &result.IntervalRule{Rule: "paired-t", DF: 4}}
	r := &result.Result{Plan: result.Plan{MarginPct: 5}}
	p := stats.Paired{Ratio: c.Ratio, HasCI: true, N: 5, SE: c.SELog, DF: 4, SD: c.SELog * math.Sqrt(5)}
	eq := stats.Equivalence(p, 5)
	status, narrow := standing(r, c)
	if !strings.HasPrefix(eq, "inconclusive at ±5%") || narrow || strings.Contains(status, "within noise") {
		t.Fatalf("equivalence %q beside standing %q", eq, status)
	}
	// Without --margin, ±5% is the margin "within noise" is tested at.
	r.Plan.MarginPct = 0
	if status, narrow := standing(r, c); narrow || !strings.Contains(status, "not within ±5%") {
		t.Fatalf("without --margin: %q", status)
	}
	// Equivalent at ±10%: within noise, and the same words as --margin 10%.
	r.Plan.MarginPct = 10
	if status, narrow := standing(r, c); !narrow || !strings.HasPrefix(stats.Equivalence(p, 10), "equivalent within ±10%") ||
		!strings.Contains(status, "equivalent within ±10%") {
		t.Fatalf("at ±10%%: %q", status)
	}
	// A CI excluding 0 that Holm's family did not find significant is not
	// a gap to explain.
	c.CIHighPct, c.Family = -0.2, &result.Family{Size: 4, Method: "holm", Alpha: 0.05, PAdjusted: 0.12}
	if status, _ := standing(r, c); status == "" {
		t.Fatal("a gap explained that the verdict did not declare")
	}
}

// A gap with nothing one-sided, nothing alongside and nothing different
// says so in one sentence, and names the absences it checked.
func TestCauseOfAGapNothingExplains(t *testing.T) {
	r := threeTargets()
	r.Targets[1].Described = r.Targets[0].Described
	for i := range r.Runs {
		if run := &r.Runs[i]; run.Target == "bridge" {
			// The server's CPU per transaction as native's: 500 µs.
			run.Intervals[0].Telemetry = result.TelemetryOf(map[string]float64{"server_cpu_cores": run.Summary.TPS * 500e-6})
		}
	}
	stats.Analyze(r)
	Annotate(r)
	want := "not in the telemetry: no docker-proxy or CPU throttling measured on one side only, the server's CPU per transaction within 10%, nothing read back differs (limits, configuration, network path, client, datadir, version)"
	if got := For(r, "bridge", 0); got != want {
		t.Fatalf("cause %q", got)
	}
}
