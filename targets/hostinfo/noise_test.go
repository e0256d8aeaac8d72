package hostinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
)

func write(t *testing.T, root string, files map[string]string) {
	for p, text := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Two recorded readings of /proc a second apart (clock ticks of 10 ms):
// steal and other processes' CPU come out of the deltas, and raise the flag.
func TestSampleFromRecordedProc(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"proc/stat":         "cpu  1000 0 500 8000 0 0 0 100 0 0\ncpu0 1 0 0 0 0 0 0 0 0 0\ncpu1 1 0 0 0 0 0 0 0 0 0\n",
		"proc/self/stat":    "42 (dbduel) S 1 1 1 0 -1 0 0 0 0 0 300 100 0 0\n",
		"proc/pressure/cpu": "some avg10=1.00 avg60=1.00 avg300=1.00 total=5000000\n",
	})
	clock := time.Unix(1000, 0)
	s := &NoiseSampler{root: root, now: func() time.Time { return clock }}
	s.ncores = s.cores()
	s.Sample(result.Telemetry{})
	// One second later on 2 CPUs (200 ticks): busy +150 (user 100, system
	// 50), steal +10, idle +40; dbduel used 40 ticks; PSI +200 ms.
	write(t, root, map[string]string{
		"proc/stat":         "cpu  1100 0 550 8040 0 0 0 110 0 0\n",
		"proc/self/stat":    "42 (dbduel) S 1 1 1 0 -1 0 0 0 0 0 330 110 0 0\n",
		"proc/pressure/cpu": "some avg10=1.00 avg60=1.00 avg300=1.00 total=5200000\n",
	})
	clock = clock.Add(time.Second)
	got := s.Sample(result.TelemetryOf(map[string]float64{"server_cpu_cores": 0.6, "proxy_cpu_cores": 0.2}))
	// steal 10/200 = 5%; busy 1.5 cores - dbduel 0.4 - server 0.6 - proxy 0.2 = 0.3 cores.
	if st, _ := got.Get("steal_pct"); st != 5 {
		t.Errorf("steal %v, want 5", st)
	}
	if o, _ := got.Get("other_cpu_cores"); o < 0.29 || o > 0.31 {
		t.Errorf("other cpu %v, want 0.3", o)
	}
	if p, _ := got.Get("psi_cpu_some_pct"); p < 19.9 || p > 20.1 {
		t.Errorf("psi %v, want 20", p)
	}
	if !got.Flagged {
		t.Errorf("5%% steal must flag the interval: %v", got)
	}
	// Without the target's telemetry, other processes' CPU is not known.
	write(t, root, map[string]string{"proc/stat": "cpu  1100 0 550 8240 0 0 0 110 0 0\n"})
	clock = clock.Add(time.Second)
	got = s.Sample(result.Telemetry{})
	if _, ok := got.Get("other_cpu_cores"); ok || got.Flagged || got.IsZero() {
		t.Errorf("an idle second without telemetry: %v", got)
	}
}

// The benchmark's own kernel work (irq, softirq, ksoftirqd) is shown apart
// and is not "other processes' CPU"; the threshold is a share of the
// cores: 0.3 other cores flag an interval on 2 CPUs, not on 8.
func TestNoiseLeavesOwnKernelWorkOutAndScalesWithCores(t *testing.T) {
	for _, c := range []struct {
		cpus    int
		flagged bool
	}{{2, true}, {8, false}} {
		root := t.TempDir()
		percpu := strings.Repeat("cpu0 1 0 0 0 0 0 0 0 0 0\n", c.cpus)
		total := c.cpus * 100
		write(t, root, map[string]string{
			"proc/stat":      "cpu  1000 0 500 8000 0 0 0 0 0 0\n" + percpu,
			"proc/self/stat": "42 (dbduel) S 1 1 1 0 -1 0 0 0 0 0 300 100 0 0\n",
			"proc/9/comm":    "ksoftirqd/0\n",
			"proc/9/stat":    "9 (ksoftirqd/0) S 2 0 0 0 -1 0 0 0 0 0 0 50 0 0\n",
		})
		clock := time.Unix(1000, 0)
		s := &NoiseSampler{root: root, now: func() time.Time { return clock }}
		s.ncores = s.cores()
		s.Sample(result.Telemetry{})
		// A second later: user +120, system +50 of which ksoftirqd 20,
		// softirq +30, irq +10; dbduel 40 ticks; the server 0.6 cores.
		write(t, root, map[string]string{
			"proc/stat":      fmt.Sprintf("cpu  1120 0 550 %d 0 10 30 0 0 0\n", 8000+total-210) + percpu,
			"proc/self/stat": "42 (dbduel) S 1 1 1 0 -1 0 0 0 0 0 330 110 0 0\n",
			"proc/9/stat":    "9 (ksoftirqd/0) S 2 0 0 0 -1 0 0 0 0 0 0 70 0 0\n",
		})
		clock = clock.Add(time.Second)
		got := s.Sample(result.TelemetryOf(map[string]float64{"server_cpu_cores": 0.6}))
		// other: user+system 1.7 cores, less ksoftirqd 0.2, dbduel 0.4 and
		// the server 0.6 = 0.5 cores.
		if o, _ := got.Get("other_cpu_cores"); o < 0.49 || o > 0.51 {
			t.Errorf("%d cpus: other %v, want 0.5 (softirq, irq and ksoftirqd left out)", c.cpus, o)
		}
		if k, _ := got.Get("kernel_cpu_cores"); k < 0.59 || k > 0.61 {
			t.Errorf("%d cpus: kernel %v, want 0.6 (irq 0.1 + softirq 0.3 + ksoftirqd 0.2)", c.cpus, k)
		}
		if got.Flagged != c.flagged {
			t.Errorf("%d cpus: flagged %v, want %v", c.cpus, got.Flagged, c.flagged)
		}
	}
}
