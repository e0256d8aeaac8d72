// NoiseSampler (noise.go) measures, per report interval, what else took the machine
// while a run was measured: CPU steal (a hypervisor's other guests), CPU
// used by processes that are neither dbduel nor a target's server or
// proxy, and CPU pressure stalls. An interval with steal or with other
// processes' CPU over a threshold is flagged.

package hostinfo

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Thresholds of a flagged interval.
const (
	StealPct       = 2.0 // % of the machine's CPU time
	OtherCPUCores  = 0.2 // cores used by other processes
	clockTicksPerS = 100 // USER_HZ
)

// NoiseSampler reads /proc (under root) at each interval.
type NoiseSampler struct {
	root     string
	prev     cpuTimes
	prevSelf uint64
	prevPSI  uint64
	prevAt   time.Time
	hasPrev  bool
}

// NewNoiseSampler returns a sampler of the machine at root ("/"), started now.
func NewNoiseSampler(root string) *NoiseSampler {
	s := &NoiseSampler{root: root}
	s.Sample(nil)
	return s
}

type cpuTimes struct{ busy, steal, total uint64 }

func (s *NoiseSampler) read(p string) string {
	data, _ := os.ReadFile(filepath.Join(s.root, p))
	return string(data)
}

func (s *NoiseSampler) cpu() (cpuTimes, bool) {
	line, _, _ := strings.Cut(s.read("proc/stat"), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	t := cpuTimes{steal: v[7]}
	for i, x := range v {
		t.total += x
		if i != 3 && i != 4 && i != 7 {
			t.busy += x
		}
	}
	return t, true
}

// selfTicks is dbduel's own user+system time in clock ticks.
func (s *NoiseSampler) selfTicks() uint64 { return StatTicks(s.read("proc/self/stat")) }

// psiTotal is the cumulative µs some task stalled on CPU.
func (s *NoiseSampler) psiTotal() (uint64, bool) {
	line, _, _ := strings.Cut(s.read("proc/pressure/cpu"), "\n")
	_, v, ok := strings.Cut(line, "total=")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// Sample is the interval since the previous call: steal_pct,
// psi_cpu_some_pct, other_cpu_cores (when the running target's telemetry
// says what its server and proxy used), and flagged.
func (s *NoiseSampler) Sample(telemetry map[string]any) map[string]any {
	now := time.Now()
	cur, ok := s.cpu()
	self := s.selfTicks()
	psi, psiOK := s.psiTotal()
	var out map[string]any
	if ok && s.hasPrev && cur.total > s.prev.total {
		dt := now.Sub(s.prevAt).Seconds()
		total := float64(cur.total - s.prev.total)
		steal := float64(cur.steal-s.prev.steal) / total * 100
		busyCores := float64(cur.busy-s.prev.busy) / clockTicksPerS / dt
		selfCores := float64(self-s.prevSelf) / clockTicksPerS / dt
		out = map[string]any{"steal_pct": round(steal)}
		server, known := telemetry["server_cpu_cores"].(float64)
		proxy, _ := telemetry["proxy_cpu_cores"].(float64)
		client, _ := telemetry["client_cpu_cores"].(float64) // dbduel's agent, when it is the client
		other := 0.0
		if known {
			other = math.Max(0, busyCores-selfCores-server-proxy-client)
			out["other_cpu_cores"] = round(other)
		}
		if psiOK && s.prevPSI > 0 && psi >= s.prevPSI {
			out["psi_cpu_some_pct"] = round(float64(psi-s.prevPSI) / 1e6 / dt * 100)
		}
		// Other processes' CPU is known only when the targets' own is.
		// A quota at work is recorded, not flagged: it is the limit asked for.
		if th, ok := telemetry["cpu_throttled_pct"].(float64); ok {
			out["throttled_pct"] = th
		}
		out["flagged"] = steal > StealPct || other > OtherCPUCores
	}
	s.prev, s.prevSelf, s.prevPSI, s.prevAt, s.hasPrev = cur, self, psi, now, ok
	return out
}

func round(x float64) float64 { return math.Round(x*1000) / 1000 }
