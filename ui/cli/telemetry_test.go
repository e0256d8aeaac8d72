package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
)

// sampled is a target whose samples are scripted.
type sampled struct {
	*targets.Fake
	samples []targets.Sample
}

func (s *sampled) Sample(context.Context) (targets.Sample, error) {
	x := s.samples[0]
	if len(s.samples) > 1 {
		s.samples = s.samples[1:]
	}
	return x, nil
}

// Throttling is the share of the quota's periods that throttled the server
// and the throttled seconds (throttled time over wall time exceeded 100%
// with two CPUs' worth of quota); the idle CPU read before the run rides
// along in every interval.
func TestTelemetryThrottlingAndIdle(t *testing.T) {
	defer func(d time.Duration) { idleSample = d }(idleSample)
	idleSample = 0
	t0 := time.Unix(1000, 0)
	tg := &sampled{Fake: &targets.Fake{TargetName: "c"}, samples: []targets.Sample{
		{At: t0, CPUNS: 0},
		{At: t0.Add(time.Second), CPUNS: 2e8}, // idle: 0.2 cores
		{At: t0.Add(2 * time.Second), CPUNS: 4e8, Periods: 100, ThrottledPeriods: 10, ThrottledNS: 5e8},
		{At: t0.Add(3 * time.Second), CPUNS: 16e8, Periods: 110, ThrottledPeriods: 15, ThrottledNS: 17e8},
	}}
	read := idleTelemetry(context.Background(), []targets.Target{tg})[0]
	read() // the run's first window starts
	m := figures(read())
	if m["cpu_throttled_pct"] != 50.0 || m["cpu_throttled_s"] != 1.2 || m["server_idle_cpu_cores"] != 0.2 || m["server_cpu_cores"] != 1.2 {
		t.Fatalf("telemetry %v", m)
	}
}

// The server's network bytes per second are the counters' differences over
// the window's own span; a window whose either end is unmeasured gets none.
func TestTelemetryNetworkBytes(t *testing.T) {
	defer func(d time.Duration) { idleSample = d }(idleSample)
	idleSample = 0
	t0 := time.Unix(1000, 0)
	tg := &sampled{Fake: &targets.Fake{TargetName: "c"}, samples: []targets.Sample{
		{At: t0},
		{At: t0.Add(time.Second)},
		{At: t0.Add(2 * time.Second), NetMeasured: true, NetRxBytes: 1000, NetTxBytes: 5000},
		{At: t0.Add(4 * time.Second), NetMeasured: true, NetRxBytes: 9000, NetTxBytes: 25000},
	}}
	read := idleTelemetry(context.Background(), []targets.Target{tg})[0]
	if m := figures(read()); m["server_net_rx_bytes_per_s"] != nil {
		t.Fatalf("unmeasured window got network bytes: %v", m)
	}
	m := figures(read())
	// (9000-1000)/2 s and (25000-5000)/2 s.
	if m["server_net_rx_bytes_per_s"] != 4000.0 || m["server_net_tx_bytes_per_s"] != 10000.0 {
		t.Fatalf("telemetry %v", m)
	}
}

// A client reading handed back again (an engine's stats API returns its
// last collection) spans no time: that window has no client figure, and
// the next spans both, at the readings' own times, not the server's.
func TestTelemetryStaleClientReading(t *testing.T) {
	defer func(d time.Duration) { idleSample = d }(idleSample)
	idleSample = 0
	t0 := time.Unix(1000, 0)
	tg := &sampled{Fake: &targets.Fake{TargetName: "c"}, samples: []targets.Sample{
		{At: t0, ClientCPUNS: 1e9, ClientAt: t0},
		{At: t0.Add(time.Second / 2), ClientCPUNS: 1e9, ClientAt: t0}, // the idle reading before the run
		{At: t0.Add(time.Second), ClientCPUNS: 1e9, ClientAt: t0},     // stale
		{At: t0.Add(2 * time.Second), ClientCPUNS: 2e9, ClientAt: t0.Add(2 * time.Second)},
		{At: t0.Add(3 * time.Second), ClientCPUNS: 2.6e9}, // read with the server's
		{At: t0.Add(4 * time.Second), ClientCPUNS: 0.1e9}, // a new client: its counter starts again
		{At: t0.Add(5 * time.Second), ClientCPUNS: 0.4e9},
	}}
	read := idleTelemetry(context.Background(), []targets.Target{tg})[0]
	if m := figures(read()); m["client_cpu_cores"] != nil {
		t.Fatalf("a stale client reading gave a figure: %v", m)
	}
	if m := figures(read()); m["client_cpu_cores"] != 0.5 { // 1 s of CPU over 2 s
		t.Fatalf("telemetry %v", m)
	}
	if m := figures(read()); m["client_cpu_cores"] != 0.6 {
		t.Fatalf("telemetry %v", m)
	}
	if m := figures(read()); m["client_cpu_cores"] != nil {
		t.Fatalf("a client whose counter went back gave a figure: %v", m)
	}
	if m := figures(read()); m["client_cpu_cores"] != 0.3 {
		t.Fatalf("the new client's first window: %v", m)
	}
}

// logged is a target that notes when it is sampled.
type logged struct {
	*targets.Fake
	log *[]string
}

func (l *logged) Sample(context.Context) (targets.Sample, error) {
	*l.log = append(*l.log, l.TargetName)
	return targets.Sample{At: time.Now(), CPUNS: uint64(len(*l.log)) * 1e6}, nil
}

// The targets' idle CPU is read over one shared wait: every target's first
// sample comes before any target's idle reading, and the targets that
// cannot be sampled get no telemetry.
func TestIdleCPUIsReadOverOneWait(t *testing.T) {
	defer func(d time.Duration) { idleSample = d }(idleSample)
	idleSample = 10 * time.Millisecond
	var log []string
	ts := []targets.Target{&logged{&targets.Fake{TargetName: "a"}, &log}, &targets.Fake{TargetName: "x"}, &logged{&targets.Fake{TargetName: "b"}, &log}}
	reads := idleTelemetry(context.Background(), ts)
	if got := strings.Join(log, ","); got != "a,b,a,b" {
		t.Fatalf("samples in the order %s, want a,b,a,b (both firsts, then both idle readings)", got)
	}
	if reads[0] == nil || reads[1] != nil || reads[2] == nil {
		t.Fatalf("telemetry per target: %v", reads)
	}
}

// figures is telemetry as the result file has it.
func figures(t result.Telemetry) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(t.String()), &m); err != nil {
		panic(err)
	}
	return m
}
