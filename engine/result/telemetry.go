package result

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// The keys of an interval's telemetry (what was measured of the target
// while it ran) and of its noise (what else took the machine): one list,
// read by everyone who writes or reads them. Their units are in their names.
const (
	TelServerCPUCores     = "server_cpu_cores"      // the server's CPU (its process, or its container's cgroup)
	TelServerIdleCPUCores = "server_idle_cpu_cores" // the server's CPU before the load (its background work)
	TelServerMemBytes     = "server_mem_bytes"
	TelProxyCPUCores      = "proxy_cpu_cores"      // docker-proxy's or rootlessport's CPU
	TelProxyCPUCoresNote  = "proxy_cpu_cores_note" // why the proxy's CPU was not measured (text)
	TelClientCPUCores     = "client_cpu_cores"     // an agent's (client=netns|beside) CPU
	TelNetRxBytesPerS     = "server_net_rx_bytes_per_s"
	TelNetTxBytesPerS     = "server_net_tx_bytes_per_s"
	TelCPUThrottledPct    = "cpu_throttled_pct" // CFS periods throttled
	TelCPUThrottledS      = "cpu_throttled_s"
)

const (
	NoiseStealPct       = "steal_pct"
	NoiseKernelCPUCores = "kernel_cpu_cores"
	NoiseOtherCPUCores  = "other_cpu_cores" // other processes' CPU
	NoisePSICPUSomePct  = "psi_cpu_some_pct"
	NoiseThrottledPct   = "throttled_pct"
	NoiseFlagged        = "flagged" // a bool: the interval was noisy
)

// telemetryKeys and noiseKeys are the figures each holds, in the order of
// their slots.
var (
	telemetryKeys = []string{TelServerCPUCores, TelServerIdleCPUCores, TelServerMemBytes, TelProxyCPUCores,
		TelClientCPUCores, TelNetRxBytesPerS, TelNetTxBytesPerS, TelCPUThrottledPct, TelCPUThrottledS}
	noiseKeys = []string{NoiseStealPct, NoiseKernelCPUCores, NoiseOtherCPUCores, NoisePSICPUSomePct, NoiseThrottledPct}
)

// figureSlots holds up to len(figureSlots.v) named figures in fixed slots,
// with a bit for each one set. A result holds one telemetry and one noise
// record per interval (7,200 in a half-hour plan of 1-s intervals at four
// targets, kept in memory while it runs): slots cost about 90 bytes where
// a map of boxed figures cost about 500.
type figureSlots struct {
	set uint16     // bit i: v[i] was measured
	v   [9]float64 // as many as the longer list of keys (a test holds them to it)
	// extra keeps figures of names this build does not know (a newer
	// build's file read back): written again as they came.
	extra map[string]any
}

func (s *figureSlots) put(keys []string, k string, v float64) {
	i := slices.Index(keys, k)
	if i < 0 {
		panic(fmt.Sprintf("result: %q is not one of %v", k, keys))
	}
	s.v[i] = v
	s.set |= 1 << i
}

func (s figureSlots) get(keys []string, k string) (float64, bool) {
	i := slices.Index(keys, k)
	if i < 0 || s.set&(1<<i) == 0 {
		return 0, false
	}
	return s.v[i], true
}

// object is the figures as the file has them: one name each.
func (s figureSlots) object(keys []string) map[string]any {
	m := make(map[string]any, len(keys)+len(s.extra))
	for k, v := range s.extra {
		m[k] = v
	}
	for i, k := range keys {
		if s.set&(1<<i) != 0 {
			m[k] = s.v[i]
		}
	}
	return m
}

// fill sets the figures of m with known names and numbers, and keeps the
// rest as they came (a figure that is not a number reads as unmeasured, as
// it did when the record was a map), without control characters: the
// file's strings are text, never a terminal's escape sequence (sanitize
// cannot reach this unexported map).
func (s *figureSlots) fill(keys []string, m map[string]any) {
	for k, v := range m {
		if f, ok := v.(float64); ok && slices.Contains(keys, k) {
			s.put(keys, k, f)
			continue
		}
		if s.extra == nil {
			s.extra = map[string]any{}
		}
		s.extra[k] = v
	}
	if s.extra != nil {
		cleanMap(reflect.ValueOf(s.extra))
	}
}

// decode reads a file's object into the slots, after take has taken (and
// deleted) the record's own fields from it.
func (s *figureSlots) decode(b []byte, keys []string, take func(map[string]any)) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	take(m)
	s.fill(keys, m)
	return nil
}

// Telemetry is what was measured of a target over one interval: figures
// named by the Tel* keys, and why the proxy's CPU was not measured. Its
// JSON is an object of those names ("telemetry" in the result file).
type Telemetry struct {
	figureSlots
	ProxyNote string // TelProxyCPUCoresNote
}

// Set records figure k (one of the Tel* keys but the note).
func (t *Telemetry) Set(k string, v float64) { t.put(telemetryKeys, k, v) }

// Get is figure k and whether it was measured.
func (t Telemetry) Get(k string) (float64, bool) { return t.get(telemetryKeys, k) }

// IsZero says nothing was measured (the field is left out of the file).
func (t Telemetry) IsZero() bool { return t.set == 0 && t.ProxyNote == "" && len(t.extra) == 0 }

func (t Telemetry) MarshalJSON() ([]byte, error) {
	m := t.object(telemetryKeys)
	if t.ProxyNote != "" {
		m[TelProxyCPUCoresNote] = t.ProxyNote
	}
	return json.Marshal(m)
}

func (t *Telemetry) UnmarshalJSON(b []byte) error {
	*t = Telemetry{}
	return t.decode(b, telemetryKeys, func(m map[string]any) {
		if note, ok := m[TelProxyCPUCoresNote].(string); ok {
			t.ProxyNote = note
			delete(m, TelProxyCPUCoresNote)
		}
	})
}

// Noise is what else took the machine over one interval: figures named
// by the Noise* keys, and whether that made the interval noisy.
type Noise struct {
	figureSlots
	Flagged bool // NoiseFlagged
}

// Set records figure k (one of the Noise* keys but flagged).
func (n *Noise) Set(k string, v float64) { n.put(noiseKeys, k, v) }

// Get is figure k and whether it was measured.
func (n Noise) Get(k string) (float64, bool) { return n.get(noiseKeys, k) }

// IsZero says nothing was measured (the field is left out of the file).
func (n Noise) IsZero() bool { return n.set == 0 && !n.Flagged && len(n.extra) == 0 }

func (n Noise) MarshalJSON() ([]byte, error) {
	m := n.object(noiseKeys)
	if !n.IsZero() {
		m[NoiseFlagged] = n.Flagged // said of every interval that was read, noisy or not
	}
	return json.Marshal(m)
}

func (n *Noise) UnmarshalJSON(b []byte) error {
	*n = Noise{}
	return n.decode(b, noiseKeys, func(m map[string]any) {
		if f, ok := m[NoiseFlagged].(bool); ok {
			n.Flagged = f
			delete(m, NoiseFlagged)
		}
	})
}

// TelemetryOf is a telemetry record of figures m (Tel* keys).
func TelemetryOf(m map[string]float64) Telemetry {
	var t Telemetry
	for k, v := range m {
		t.Set(k, v)
	}
	return t
}

// NoiseOf is a noise record of figures m (Noise* keys) and flagged.
func NoiseOf(m map[string]float64, flagged bool) Noise {
	n := Noise{Flagged: flagged}
	for k, v := range m {
		n.Set(k, v)
	}
	return n
}

// String is the record as the file has it.
func (t Telemetry) String() string { b, _ := t.MarshalJSON(); return string(b) }

// String is the record as the file has it.
func (n Noise) String() string { b, _ := n.MarshalJSON(); return string(b) }
