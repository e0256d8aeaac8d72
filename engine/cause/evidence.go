// Package cause reads back why a target's throughput differs from the
// baseline's, from what the run already measured: the path its queries
// took, where CPU per transaction went (server, docker-proxy, a client in
// the namespace), CPU throttling, the machine's noise and the parity
// differences. explain's rungs and every run's cause line read it.
package cause

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// Evidence is what the run read back about target t at a sweep point
// (AllPoints: every point): the path a client's queries took, the proxy's
// and the server's CPU (per transaction too), the datadir, the syscall
// filter, the CPU limits and their throttling, and the machine's noise
// while it ran. Means are over complete measured runs' intervals.
func Evidence(r *result.Result, t result.Target, point int) map[string]any {
	d := t.Described
	ev := map[string]any{"network_path": d.NetworkPath, "seccomp_mode": d.SeccompMode}
	if d.Datadir != nil {
		ev["datadir_kind"], ev["datadir_fstype"] = d.Datadir.Kind, d.Datadir.FSType
	}
	if d.Engine != "" {
		ev["engine"] = d.Engine
	}
	if d.Rootless {
		ev["rootless"] = true
	}
	if d.ClientPlacement != "" {
		ev["client_placement"] = d.ClientPlacement
		if d.ClientAgents > 1 {
			ev["client_agents"] = d.ClientAgents
		}
		if len(d.ClientNodes) > 0 {
			ev["client_nodes"], ev["node"] = strings.Join(d.ClientNodes, ","), d.Node
		}
	}
	if d.CPUs > 0 {
		ev["cpus"] = d.CPUs
	}
	if d.Cpuset != "" {
		ev["cpuset"] = d.Cpuset
	}
	if d.MemoryLimitBytes > 0 {
		ev["memory_limit_bytes"] = float64(d.MemoryLimitBytes)
	}
	means := map[string]*mean{}
	add := func(key string, f float64, ok bool) {
		if !ok || math.IsNaN(f) {
			return
		}
		if means[key] == nil {
			means[key] = &mean{}
		}
		means[key].add(f)
	}
	var cpu cpuTotals
	for _, run := range r.Completed(t.Name, point) {
		cpu.add(run)
		if st := run.ServerTime; st != nil {
			// Where each statement's time goes: the server, or between.
			add("server_us_per_statement", st.AvgUS, true)
			add("client_us_per_statement", st.ClientAvgUS, true)
			add("between_us_per_statement", st.BetweenUS, true)
		}
		for _, iv := range run.Intervals {
			if iv.Warmup {
				continue
			}
			for _, k := range []string{result.TelServerCPUCores, result.TelProxyCPUCores, result.TelClientCPUCores, result.TelCPUThrottledPct, result.TelServerMemBytes} {
				v, ok := iv.Telemetry.Get(k)
				add(k, v, ok)
			}
			for _, k := range []string{result.NoiseStealPct, result.NoisePSICPUSomePct, result.NoiseOtherCPUCores, result.NoiseKernelCPUCores} {
				v, ok := iv.Noise.Get(k)
				add(k, v, ok)
			}
		}
	}
	for k, m := range means {
		ev[k] = round(m.value(), 3)
	}
	// CPU per transaction, where a rung's cost lands (server, proxy, a
	// client in the namespace): ΣCPU-seconds ÷ Σtransactions, the server's
	// less its idle CPU (marginal: the slower side's idle CPU is not
	// divided by its fewer transactions).
	for key, v := range cpu.perTxn() {
		ev[key] = round(v, 1)
	}
	if d.CPUScope != "" {
		ev["cpu_scope"] = d.CPUScope
	}
	return ev
}

// cpuTotals add runs' CPU-seconds (cores × span of each measured
// interval) by telemetry key, and their transactions.
type cpuTotals struct {
	seconds map[string]float64 // server_cpu_cores, server_idle_cpu_cores, proxy_cpu_cores, client_cpu_cores
	txn     float64
}

func (c *cpuTotals) add(run result.Run) {
	if c.seconds == nil {
		c.seconds = map[string]float64{}
	}
	for _, iv := range run.Intervals {
		if iv.Warmup {
			continue
		}
		for _, k := range []string{result.TelServerCPUCores, result.TelServerIdleCPUCores, result.TelProxyCPUCores, result.TelClientCPUCores} {
			if v, ok := iv.Telemetry.Get(k); ok {
				c.seconds[k] += v * iv.SpanS
			}
		}
	}
	c.txn += float64(run.Summary.Events)
}

// perTxn are the µs of CPU per transaction by evidence key; the server's
// marginal figure has its idle CPU taken off.
func (c cpuTotals) perTxn() map[string]float64 {
	out := map[string]float64{}
	if c.txn <= 0 {
		return out
	}
	per := func(s float64) float64 { return s / c.txn * 1e6 }
	for k, name := range map[string]string{result.TelServerCPUCores: "server", result.TelProxyCPUCores: "proxy", result.TelClientCPUCores: "client"} {
		if s, ok := c.seconds[k]; ok {
			out[name+"_cpu_us_per_txn"] = per(s)
		}
	}
	if idle, ok := c.seconds[result.TelServerIdleCPUCores]; ok {
		if s, ok := c.seconds[result.TelServerCPUCores]; ok {
			out["server_marginal_cpu_us_per_txn"] = per(math.Max(0, s-idle))
		}
	}
	return out
}

// ServerCPUPerTxn compares the server's CPU per transaction of target and
// baseline block by block, paired: the estimate and CI of their ratio.
// Every pair is of one kind: marginal (idle CPU subtracted) on both sides
// when every paired block of both read its idle CPU, gross on both
// otherwise — a block falling back alone would pair marginal with gross.
// marginal says which kind it is.
func ServerCPUPerTxn(r *result.Result, target, baseline string, point int) (p stats.Paired, marginal bool) {
	per := func(name string) (m, g map[int]float64) {
		m, g = map[int]float64{}, map[int]float64{}
		for _, run := range r.InCompleteBlocks(name, point) {
			var c cpuTotals
			c.add(run)
			p := c.perTxn()
			if v, ok := p["server_marginal_cpu_us_per_txn"]; ok && v > 0 {
				m[run.Block] = v
			}
			if v, ok := p["server_cpu_us_per_txn"]; ok && v > 0 {
				g[run.Block] = v
			}
		}
		return m, g
	}
	tm, tg := per(target)
	bm, bg := per(baseline)
	pairs := func(t, b map[int]float64) (tv, bv []float64) {
		for _, blk := range slices.Sorted(maps.Keys(t)) {
			if v, ok := b[blk]; ok {
				tv, bv = append(tv, t[blk]), append(bv, v)
			}
		}
		return tv, bv
	}
	gt, gb := pairs(tg, bg)
	mt, mb := pairs(tm, bm)
	if len(mt) > 0 && len(mt) == len(gt) {
		return stats.ComparePaired(mt, mb), true
	}
	return stats.ComparePaired(gt, gb), false
}

// AllPoints asks Evidence for every sweep point's runs.
const AllPoints = result.AnyPoint

type mean struct {
	sum float64
	n   int
}

func (m *mean) add(v float64)  { m.sum += v; m.n++ }
func (m *mean) value() float64 { return m.sum / float64(m.n) }

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// Str is an evidence value that is a string ("" otherwise).
func Str(v any) string {
	s, _ := v.(string)
	return s
}
