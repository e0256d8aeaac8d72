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

	"github.com/dbduel/dbduel/engine/result"
)

// Thresholds of a flagged interval.
const (
	StealPct = 2.0 // % of the machine's CPU time
	// OtherCPUShare is the share of the machine's cores other processes may
	// use before an interval is flagged (0.2 cores on 2, 1.6 on 16).
	OtherCPUShare  = 0.1
	clockTicksPerS = 100 // USER_HZ
)

// NoiseSampler reads /proc (under root) at each interval.
type NoiseSampler struct {
	root     string
	ncores   int
	prev     cpuTimes
	prevSelf uint64
	prevKT   uint64 // kernel threads' ticks
	prevPSI  uint64
	prevAt   time.Time
	hasPrev  bool
	now      func() time.Time // the clock (tests set their own)
}

// NewNoiseSampler returns a sampler of the machine at root ("/"), started now.
func NewNoiseSampler(root string) *NoiseSampler {
	s := &NoiseSampler{root: root, now: time.Now}
	s.ncores = s.cores()
	s.Sample(result.Telemetry{})
	return s
}

// cpuTimes are /proc/stat's first line: busy is user, nice and system
// time (processes' work), kernel the irq and softirq time (mostly the
// benchmark's own network and disk work: shown apart, never "other").
type cpuTimes struct{ busy, kernel, steal, total uint64 }

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
	t := cpuTimes{steal: v[7], kernel: v[5] + v[6], busy: v[0] + v[1] + v[2]}
	for _, x := range v {
		t.total += x
	}
	return t, true
}

// cores is how many CPUs /proc/stat lists.
func (s *NoiseSampler) cores() int {
	n := 0
	for _, l := range strings.Split(s.read("proc/stat"), "\n") {
		if strings.HasPrefix(l, "cpu") && len(l) > 3 && l[3] >= '0' && l[3] <= '9' {
			n++
		}
	}
	return max(n, 1)
}

// kernelThreadTicks is the user+system time of the kernel threads that do
// the benchmark's own work outside any process it knows of: ksoftirqd
// (network softirqs deferred there) and the writeback kworkers.
func (s *NoiseSampler) kernelThreadTicks() uint64 {
	entries, err := os.ReadDir(filepath.Join(s.root, "proc"))
	if err != nil {
		return 0
	}
	var sum uint64
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		comm := strings.TrimSpace(s.read("proc/" + e.Name() + "/comm"))
		if strings.HasPrefix(comm, "ksoftirqd/") || (strings.HasPrefix(comm, "kworker/") && (strings.Contains(comm, "flush") || strings.Contains(comm, "writeback"))) {
			sum += StatTicks(s.read("proc/" + e.Name() + "/stat"))
		}
	}
	return sum
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
// says what its server and proxy used), kernel_cpu_cores (irq, softirq,
// ksoftirqd and writeback: the benchmark's own kernel work, apart), and
// flagged (steal, or other processes over OtherCPUShare of the cores).
func (s *NoiseSampler) Sample(telemetry result.Telemetry) result.Noise {
	now := s.now()
	cur, ok := s.cpu()
	self := s.selfTicks()
	kt := s.kernelThreadTicks()
	psi, psiOK := s.psiTotal()
	var out result.Noise
	if ok && s.hasPrev && cur.total > s.prev.total {
		dt := now.Sub(s.prevAt).Seconds()
		total := float64(cur.total - s.prev.total)
		steal := float64(cur.steal-s.prev.steal) / total * 100
		busyCores := float64(cur.busy-s.prev.busy) / clockTicksPerS / dt
		selfCores := float64(self-s.prevSelf) / clockTicksPerS / dt
		ktCores := float64(kt-min(kt, s.prevKT)) / clockTicksPerS / dt
		kernelCores := float64(cur.kernel-s.prev.kernel)/clockTicksPerS/dt + ktCores
		out.Set(result.NoiseStealPct, round(steal))
		out.Set(result.NoiseKernelCPUCores, round(kernelCores))
		server, known := telemetry.Get(result.TelServerCPUCores)
		proxy, _ := telemetry.Get(result.TelProxyCPUCores)
		client, _ := telemetry.Get(result.TelClientCPUCores) // dbduel's agent, when it is the client
		other := 0.0
		if known {
			other = math.Max(0, busyCores-ktCores-selfCores-server-proxy-client)
			out.Set(result.NoiseOtherCPUCores, round(other))
		}
		if psiOK && s.prevPSI > 0 && psi >= s.prevPSI {
			out.Set(result.NoisePSICPUSomePct, round(float64(psi-s.prevPSI)/1e6/dt*100))
		}
		// Other processes' CPU is known only when the targets' own is.
		// A quota at work is recorded, not flagged: it is the limit asked for.
		if th, ok := telemetry.Get(result.TelCPUThrottledPct); ok {
			out.Set(result.NoiseThrottledPct, th)
		}
		out.Flagged = steal > StealPct || other > OtherCPUShare*float64(s.ncores)
	}
	s.prev, s.prevSelf, s.prevKT, s.prevPSI, s.prevAt, s.hasPrev = cur, self, kt, psi, now, ok
	return out
}

func round(x float64) float64 { return math.Round(x*1000) / 1000 }
