package result

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// The records write the objects a map of the same figures wrote (the file
// format did not change with them), keep a measured zero apart from an
// unmeasured figure, and read back what they wrote, names they do not
// know included.
func TestTelemetryAndNoiseReadAsTheMapsDid(t *testing.T) {
	var tel Telemetry
	tel.Set(TelServerCPUCores, 0) // measured: an idle server
	tel.Set(TelServerMemBytes, 123456789)
	tel.Set(TelCPUThrottledS, 1.25)
	tel.ProxyNote = "not measured"
	noise := NoiseOf(map[string]float64{NoiseStealPct: 5, NoiseOtherCPUCores: 0.3}, true)
	iv := Interval{TS: 1, SpanS: 1, Telemetry: tel, Noise: noise}
	got, err := json.Marshal(iv)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(map[string]any{
		"telemetry": map[string]any{TelServerCPUCores: 0.0, TelServerMemBytes: 123456789.0, TelCPUThrottledS: 1.25, TelProxyCPUCoresNote: "not measured"},
		"noise":     map[string]any{NoiseStealPct: 5.0, NoiseOtherCPUCores: 0.3, NoiseFlagged: true},
	})
	for _, part := range []string{`"telemetry":`, `"noise":`} {
		if want := object(string(old), part); object(string(got), part) != want {
			t.Fatalf("%s written as %s, the map wrote %s", part, object(string(got), part), want)
		}
	}
	if v, ok := tel.Get(TelServerCPUCores); !ok || v != 0 {
		t.Fatalf("a measured zero reads %v, %v", v, ok)
	}
	if _, ok := tel.Get(TelProxyCPUCores); ok {
		t.Fatal("an unmeasured figure reads as measured")
	}

	in := `{"t_s":1,"span_s":1,"telemetry":{"server_cpu_cores":0.5,"gpu_cores":2},"noise":{"steal_pct":1,"flagged":false}}`
	var back Interval
	if err := json.Unmarshal([]byte(in), &back); err != nil {
		t.Fatal(err)
	}
	if v, _ := back.Telemetry.Get(TelServerCPUCores); v != 0.5 || back.Noise.Flagged {
		t.Fatalf("read back %v / %v", back.Telemetry, back.Noise)
	}
	again, _ := json.Marshal(back)
	if !strings.Contains(string(again), `"gpu_cores":2`) || !strings.Contains(string(again), `"flagged":false`) {
		t.Fatalf("a figure of an unknown name or the noise's flag was dropped: %s", again)
	}

	// Nothing measured: neither object is written.
	bare, _ := json.Marshal(Interval{TS: 1})
	if strings.Contains(string(bare), "telemetry") || strings.Contains(string(bare), "noise") {
		t.Fatalf("empty records written: %s", bare)
	}
	// A figure that is not a number reads as unmeasured and is written
	// back as it came, its control characters dropped.
	var odd Interval
	if err := json.Unmarshal([]byte(`{"telemetry":{"server_cpu_cores":"high\u001b]52;c;x\u0007","server_mem_bytes":null,"note\u001b":{"a":1}}}`), &odd); err != nil {
		t.Fatal(err)
	}
	if _, ok := odd.Telemetry.Get(TelServerCPUCores); ok {
		t.Fatal("a figure that is not a number reads as measured")
	}
	out, _ := json.Marshal(odd)
	if want := `"telemetry":{"note":{"a":1},"server_cpu_cores":"high]52;c;x","server_mem_bytes":null}`; !strings.Contains(string(out), want) {
		t.Fatalf("written back as %s, want %s", out, want)
	}
}

// Every key has a slot.
func TestEveryKeyHasASlot(t *testing.T) {
	var s figureSlots
	for _, keys := range [][]string{telemetryKeys, noiseKeys} {
		if len(keys) > len(s.v) || len(keys) > 16 {
			t.Fatalf("%d keys, %d slots, 16 bits", len(keys), len(s.v))
		}
	}
}

// object is the JSON object after key in s.
func object(s, key string) string {
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = s[i+len(key):]
	return s[:strings.IndexByte(s, '}')+1]
}

// A figure of a name that is not a telemetry figure is a bug where it is set.
func TestTelemetrySetRefusesAnUnknownName(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a noise figure was set as telemetry")
		}
	}()
	var tel Telemetry
	tel.Set(NoiseStealPct, 1)
}

// What a plan keeps in memory for each interval stays small: the figures
// of a 1-s interval of a Docker target (nine telemetry figures, five of
// noise) in the interval itself, with no allocation of their own (maps of
// boxed figures took about 1 KB more an interval).
func TestIntervalsHoldTheirFiguresInPlace(t *testing.T) {
	const n = 20000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ivs := make([]Interval, n)
	for i := range ivs {
		for _, k := range telemetryKeys {
			ivs[i].Telemetry.Set(k, float64(i))
		}
		for _, k := range noiseKeys {
			ivs[i].Noise.Set(k, float64(i))
		}
		ivs[i].Noise.Flagged = i%2 == 0
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	runtime.KeepAlive(ivs)
	if size := float64(unsafe.Sizeof(Interval{})); per > size*1.1 {
		t.Fatalf("%.0f bytes of heap an interval, %.0f of them the interval itself: its figures allocate", per, size)
	}
}
