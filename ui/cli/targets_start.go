package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/explain"
	"github.com/dbduel/dbduel/engine/parity"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/hostinfo"
)

// startedTargets are the run's targets once they accept connections:
// what each really is (read back) and how the engine reaches it.
type startedTargets struct {
	all []targets.Target
	// described is each target as read back; dbduel live reads a target
	// back anew after a restart (under mu: snapshots read it meanwhile).
	mu        sync.Mutex
	described []result.Target
	engine    []engine.Target
	warnings  []string
	parity    *result.Parity
	env       map[string]string
	ladder    []explain.Rung // dbduel explain: analysed at every annotation
}

// startTargets starts every target in order and reads each back. The
// caller stops them (stopTargets) on every exit path, also after an error.
func startTargets(ctx context.Context, ts []targets.Target, rc *runConfig, stderr io.Writer) (*startedTargets, error) {
	opts := rc.openOptions
	st := &startedTargets{all: ts}
	for i, t := range ts {
		if p, ok := t.(targets.Preparer); ok {
			if err := p.Prepare(ctx); err != nil {
				// Nothing started yet: what Prepare opened (an engine's
				// connection, a private Podman service) goes now, --keep or not.
				stopTargets(ctx, ts[:i+1], false, stderr)
				if ctx.Err() != nil {
					return st, &exitError{code: exitInterrupted, err: fmt.Errorf("stopped while target %s was being prepared; nothing was measured", t.Name())}
				}
				return st, fmt.Errorf("target %s: %w", t.Name(), err)
			}
		}
	}
	for i, t := range ts {
		if rc.prestart != nil {
			if err := rc.prestart(ctx, t, ts[:i]); err != nil {
				return st, fmt.Errorf("target %s: %w", t.Name(), err)
			}
		}
		fmt.Fprintf(stderr, "dbduel: starting %s (%s)\n", t.Name(), t.SpecRedacted())
		if err := t.Start(ctx); err != nil {
			if ctx.Err() != nil {
				return st, &exitError{code: exitInterrupted, err: fmt.Errorf("stopped while target %s was starting; nothing was measured", t.Name())}
			}
			return st, fmt.Errorf("target %s: %w", t.Name(), err)
		}
		d, err := t.Describe(ctx)
		if err != nil {
			return st, fmt.Errorf("target %s: describe: %w", t.Name(), err)
		}
		st.described = append(st.described, d)
		// The endpoint as it is when opened: dbduel live may give the
		// target a new container (another port, another password).
		open := func(ctx context.Context, maxConns int) (driver.DB, error) {
			return driver.OpenerFor(t.Endpoint(), opts)(ctx, maxConns)
		}
		if so, ok := t.(targets.SelfOpener); ok {
			open = so.Open
		}
		if sys := d.Described.System; sys != nil {
			fmt.Fprintf(stderr, "dbduel: %s runs on cpus %s (quota %s, memory.max %s), governor %s at %s MHz; files on %s (%s), O_DIRECT %s\n",
				t.Name(), sys["cpus_allowed"], sys["cpu_quota"], sys["memory_max"], sys["cpu_governor"], sys["cpu_mhz"],
				sys["fs_type"], sys["mount_options"], sys["o_direct"])
		}
		et := engine.Target{Name: t.Name(), Open: open}
		if h, ok := t.(targets.HealthChecker); ok {
			et.Health = h.Health
		}
		st.engine = append(st.engine, et)
	}
	// Every target's idle CPU over one shared wait, not one wait each: a
	// plan of four targets started 3 s later than it had to.
	for i, read := range idleTelemetry(ctx, ts) {
		st.engine[i].Telemetry = read
	}
	if err := checkProtocols(ts, rc.workload); err != nil {
		return st, err
	}
	st.warnings = append(versionWarnings(st.described), placementWarnings(st.described)...)
	if p := protocols(ts); len(p) > 1 {
		st.warnings = append(st.warnings, fmt.Sprintf("the targets run different database engines (%s): the comparison measures the engines too, not only where they run; their settings are not compared", strings.Join(p, " and ")))
	}
	for _, w := range st.warnings {
		fmt.Fprintf(stderr, "dbduel: warning: %s\n", w)
	}
	var err error
	if st.parity, err = readParity(ctx, ts, st.described); err != nil {
		return st, err
	}
	if p := st.parity; p != nil {
		printParity(p, stderr)
	}
	st.env = fingerprint(ctx, st.described)
	return st, nil
}

// printParity names the configuration differences most likely to move
// performance first, with their values (the result keeps all of them), and
// the build differences apart.
func printParity(p *result.Parity, stderr io.Writer) {
	const shown = 6
	if n := len(p.VariablesDiff); n > 0 {
		var parts []string
		for _, d := range p.VariablesDiff[:min(n, shown)] {
			var vals []string
			for _, t := range slices.Sorted(maps.Keys(d.Values)) {
				vals = append(vals, t+"="+d.Values[t])
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", d.Name, strings.Join(vals, ", ")))
		}
		more := ""
		if n > shown {
			more = fmt.Sprintf("; %d more in the result's parity.variables_diff", n-shown)
		}
		fmt.Fprintf(stderr, "dbduel: parity: %d server variable(s) differ between targets, likeliest to matter first: %s%s\n", n, strings.Join(parts, "; "), more)
	}
	if len(p.BuildDiff) > 0 {
		var names []string
		for _, d := range p.BuildDiff {
			names = append(names, d.Name)
		}
		fmt.Fprintf(stderr, "dbduel: parity: the servers were built differently (not a configuration difference): %s\n", strings.Join(names, ", "))
	}
}

// differ says whether the targets differ in version or configuration.
func (st *startedTargets) differ() bool {
	return len(st.warnings) > 0 || (st.parity != nil && len(st.parity.VariablesDiff) > 0)
}

// annotate adds what the engine does not know to a result (once per
// snapshot, once at the end): the targets as read back, parity, analysis.
func (st *startedTargets) annotate(r *result.Result) {
	r.DbduelVersion = Version
	st.mu.Lock()
	r.Targets = slices.Clone(st.described)
	st.mu.Unlock()
	r.Warnings = append(r.Warnings[:0], st.warnings...)
	r.Parity = st.parity
	r.Environment = st.env
	stats.Analyze(r)
	cause.Annotate(r)
	if st.ladder != nil {
		explain.Analyze(r, st.ladder)
	}
}

// stopTargets removes what the managed targets created (unless keep).
func stopTargets(ctx context.Context, ts []targets.Target, keep bool, stderr io.Writer) {
	if keep {
		return
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
	defer cancel()
	for _, t := range ts {
		if err := t.Stop(stopCtx); err != nil {
			fmt.Fprintf(stderr, "dbduel: stopping %s: %v\n", t.Name(), err)
		}
	}
}

// idleTelemetry gives each of ts its telemetry: a reader that turns the
// target's cumulative samples into per-interval figures (server CPU in
// cores, memory, the docker-proxy's CPU when there is one, the bytes per
// second the server's own network carried when it has one), with the idle
// CPU read before the run, every target's over one wait of idleSample.
// Targets that cannot be sampled (an existing server) get nil.
func idleTelemetry(ctx context.Context, ts []targets.Target) []func() result.Telemetry {
	firsts := make([]*targets.Sample, len(ts))
	for i, t := range ts {
		if s, err := t.Sample(ctx); err == nil {
			firsts[i] = &s
		}
	}
	out := make([]func() result.Telemetry, len(ts))
	if !slices.ContainsFunc(firsts, func(s *targets.Sample) bool { return s != nil }) {
		return out
	}
	select {
	case <-ctx.Done():
	case <-time.After(idleSample):
	}
	for i, t := range ts {
		if firsts[i] != nil {
			out[i] = sampledTelemetry(ctx, t, *firsts[i], idleCores(ctx, t, *firsts[i]))
		}
	}
	return out
}

// sampledTelemetry is telemetry from its first sample prev and the idle
// CPU read after it.
func sampledTelemetry(ctx context.Context, t targets.Target, prev targets.Sample, idle float64) func() result.Telemetry {
	// The client's reading keeps its own time: a stale one (the same
	// collection handed back again) spans no time and waits for the next.
	prevClientNS, prevClientAt := prev.ClientCPUNS, prev.ClientTime()
	return func() result.Telemetry {
		var m result.Telemetry
		cur, err := t.Sample(ctx)
		if err != nil {
			return m
		}
		dt := cur.At.Sub(prev.At).Seconds()
		m.Set(result.TelServerMemBytes, float64(cur.MemBytes))
		if dt > 0 && cur.CPUNS >= prev.CPUNS {
			m.Set(result.TelServerCPUCores, math.Round(float64(cur.CPUNS-prev.CPUNS)/1e9/dt*1000)/1000)
		}
		if cur.ProxyUnmeasured {
			m.ProxyNote = "not measured: a proxy on the engine's host is out of reach"
		}
		if cur.ProxyCPUNS > 0 && dt > 0 && cur.ProxyCPUNS >= prev.ProxyCPUNS {
			m.Set(result.TelProxyCPUCores, math.Round(float64(cur.ProxyCPUNS-prev.ProxyCPUNS)/1e9/dt*1000)/1000)
		}
		if cdt := cur.ClientTime().Sub(prevClientAt).Seconds(); cur.ClientCPUNS > 0 && cdt > 0 {
			// A newer reading that went back is a new client (its
			// container made again): it starts the next window, no figure.
			if cur.ClientCPUNS >= prevClientNS {
				m.Set(result.TelClientCPUCores, math.Round(float64(cur.ClientCPUNS-prevClientNS)/1e9/cdt*1000)/1000)
			}
			prevClientNS, prevClientAt = cur.ClientCPUNS, cur.ClientTime()
		}
		if cur.NetMeasured && prev.NetMeasured && dt > 0 && cur.NetRxBytes >= prev.NetRxBytes && cur.NetTxBytes >= prev.NetTxBytes {
			m.Set(result.TelNetRxBytesPerS, math.Round(float64(cur.NetRxBytes-prev.NetRxBytes)/dt))
			m.Set(result.TelNetTxBytesPerS, math.Round(float64(cur.NetTxBytes-prev.NetTxBytes)/dt))
		}
		if cur.Periods > prev.Periods {
			// The share of the quota's periods that throttled the server,
			// and the throttled time (summed over CPUs: not a share of wall time).
			m.Set(result.TelCPUThrottledPct, math.Round(float64(cur.ThrottledPeriods-prev.ThrottledPeriods)/float64(cur.Periods-prev.Periods)*100*10)/10)
			m.Set(result.TelCPUThrottledS, math.Round(float64(cur.ThrottledNS-prev.ThrottledNS)/1e9*1000)/1000)
		}
		if idle >= 0 {
			m.Set(result.TelServerIdleCPUCores, idle)
		}
		prev = cur
		return m
	}
}

// readParity reads every target's global variables and lists the
// differences (nil with a single target).
func readParity(ctx context.Context, ts []targets.Target, described []result.Target) (*result.Parity, error) {
	if len(ts) < 2 {
		return nil, nil
	}
	// A MySQL and a PostgreSQL setting share no names; the machine has none.
	if p := protocols(ts); len(p) > 1 || p[0] == system.Protocol {
		versions := map[string]string{}
		for i, t := range ts {
			versions[t.Name()] = described[i].ServerVersion
		}
		return &result.Parity{Versions: versions, VariablesDiff: []result.VariableDiff{}}, nil
	}
	versions := map[string]string{}
	vars := map[string]map[string]string{}
	for i, t := range ts {
		versions[t.Name()] = described[i].ServerVersion
		v, err := readVariables(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("target %s: read variables: %w", t.Name(), err)
		}
		vars[t.Name()] = v
	}
	return parity.Parity(targetNames(ts), versions, vars), nil
}

func targetNames(ts []targets.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

// versionWarnings says when targets run different server versions: a
// comparison across versions measures the versions, not the environment.
func versionWarnings(ts []result.Target) []string {
	if len(ts) < 2 {
		return nil
	}
	base := ts[0]
	var out []string
	for _, t := range ts[1:] {
		if t.ServerVersion != base.ServerVersion {
			out = append(out, fmt.Sprintf("server versions differ: %s runs %s, %s runs %s; the comparison includes the version difference",
				base.Name, base.ServerVersion, t.Name, t.ServerVersion))
		}
	}
	return out
}

// placementWarnings says when the targets' benchmark clients ran in
// different places (dbduel's process, the container's network namespace):
// the comparison then includes where the load was generated.
func placementWarnings(ts []result.Target) []string {
	var out []string
	for _, t := range ts[min(1, len(ts)):] {
		b, p := ts[0].Described.ClientPlacement, t.Described.ClientPlacement
		if b != "" && p != "" && b != p {
			out = append(out, fmt.Sprintf("the clients ran in different places: %s's %s, %s's %s; the comparison includes where the load was generated",
				ts[0].Name, placementWords(b, ts[0].Described.Engine), t.Name, placementWords(p, t.Described.Engine)))
		}
	}
	return out
}

func placementWords(p, engine string) string {
	switch {
	case p == "netns" && engine == "kubernetes":
		return "in the server's pod"
	case p == "beside" && engine == "kubernetes":
		return "beside the server, on its node"
	}
	switch p {
	case "here":
		return "in dbduel's process"
	case "netns":
		return "in the container's network namespace"
	case "inside":
		return "inside its container"
	case "beside":
		return "beside the server, on its host"
	}
	return p
}

// index is where target name is in st.all (-1: nowhere).
func (st *startedTargets) index(name string) int {
	return slices.IndexFunc(st.all, func(t targets.Target) bool { return t.Name() == name })
}

// hosts names each target's machine ("native on local", "c on
// 10.254.77.2") when they are not all on one; nil when they are.
func (st *startedTargets) hosts() []string {
	var distinct, named []string
	for _, t := range st.described {
		h := t.Described.Host
		if h == "" {
			continue
		}
		if !slices.Contains(distinct, h) {
			distinct = append(distinct, h)
		}
		named = append(named, t.Name+" on "+h)
	}
	if len(distinct) < 2 {
		return nil
	}
	return named
}

// protocols lists the targets' protocols, in order of appearance.
func protocols(ts []targets.Target) []string {
	var out []string
	for _, t := range ts {
		if p := t.Endpoint().Protocol; !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// checkProtocols refuses a target whose protocol the workload does not speak.
func checkProtocols(ts []targets.Target, wl workload.Workload) error {
	for _, t := range ts {
		if p := t.Endpoint().Protocol; !slices.Contains(wl.Protocols(), p) {
			return usageErr("target %s speaks %s; workload %s runs on %s only", t.Name(), p, wl.Name(), strings.Join(wl.Protocols(), ", "))
		}
	}
	return nil
}

// fingerprint reads the machine's environment for the result.
func fingerprint(ctx context.Context, described []result.Target) map[string]string {
	var d hostinfo.DockerInfo
	if v, drv, err := container.EngineInfo(ctx); err != nil {
		d.Unreachable = "Docker engine not reachable: " + err.Error()
	} else {
		d.Version, d.StorageDriver = v, drv
	}
	return hostinfo.ReadEnvironment("/", d, Version, described)
}

// idleSample is how long the targets' idle CPU is read before the first run.
var idleSample = time.Second

// idleCores is the server's CPU while no load runs (its background work:
// purge, checkpoints, the agent's own polling), read from first to now
// (idleTelemetry waits idleSample between them): the cause line
// subtracts it to compare marginal CPU per transaction (-1 when it cannot
// be read).
func idleCores(ctx context.Context, t targets.Target, first targets.Sample) float64 {
	if ctx.Err() != nil {
		return -1
	}
	cur, err := t.Sample(ctx)
	if err != nil || cur.CPUNS < first.CPUNS {
		return -1
	}
	dt := cur.At.Sub(first.At).Seconds()
	if dt <= 0 {
		return -1
	}
	return math.Round(float64(cur.CPUNS-first.CPUNS)/1e9/dt*1000) / 1000
}
