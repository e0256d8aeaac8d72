// Package cause reads back why a target's throughput differs from the
// baseline's, from what the run already measured: the path its queries
// took, where CPU per transaction went (server, docker-proxy, a client in
// the namespace), CPU throttling, the machine's noise and the parity
// differences. explain's rungs and every run's cause line read it.
package cause

import (
	"math"

	"github.com/dbduel/dbduel/engine/result"
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
	add := func(key string, v any) {
		f, ok := v.(float64)
		if !ok || math.IsNaN(f) {
			return
		}
		if means[key] == nil {
			means[key] = &mean{}
		}
		means[key].add(f)
	}
	var tpsSum float64
	var runs int
	for _, run := range r.Completed(t.Name, point) {
		tpsSum += run.Summary.TPS
		runs++
		if st := run.ServerTime; st != nil {
			// Where each statement's time goes: the server, or between.
			add("server_us_per_statement", st.AvgUS)
			add("client_us_per_statement", st.ClientAvgUS)
			add("between_us_per_statement", st.BetweenUS)
		}
		for _, iv := range run.Intervals {
			if iv.Warmup {
				continue
			}
			for _, k := range []string{"server_cpu_cores", "proxy_cpu_cores", "client_cpu_cores", "cpu_throttled_pct", "server_mem_bytes"} {
				add(k, iv.Telemetry[k])
			}
			for _, k := range []string{"steal_pct", "psi_cpu_some_pct", "other_cpu_cores"} {
				add(k, iv.Noise[k])
			}
		}
	}
	for k, m := range means {
		ev[k] = round(m.value(), 3)
	}
	if runs > 0 && tpsSum > 0 {
		tps := tpsSum / float64(runs)
		// CPU per transaction: where a rung's cost lands (server or proxy).
		if m := means["server_cpu_cores"]; m != nil {
			ev["server_cpu_us_per_txn"] = round(m.value()/tps*1e6, 1)
		}
		if m := means["proxy_cpu_cores"]; m != nil {
			ev["proxy_cpu_us_per_txn"] = round(m.value()/tps*1e6, 1)
		}
		if m := means["client_cpu_cores"]; m != nil {
			ev["client_cpu_us_per_txn"] = round(m.value()/tps*1e6, 1)
		}
	}
	return ev
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
