package result

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// Measured leaves out warm-ups and other targets and points, and keeps a
// cut-short run; Completed also leaves that out. AnyTarget and AnyPoint
// widen them.
func TestMeasuredAndCompleted(t *testing.T) {
	r := &Result{Runs: []Run{
		{Target: "a", Point: 0, Block: 1, Complete: true, Warmup: true},
		{Target: "a", Point: 0, Block: 1, Complete: true},
		{Target: "b", Point: 0, Block: 1, Complete: true},
		{Target: "a", Point: 1, Block: 2, Complete: true},
		{Target: "a", Point: 0, Block: 3, Complete: false},
	}}
	ids := func(runs []Run) string {
		s := ""
		for _, run := range runs {
			s += fmt.Sprintf("%s%d%d%v ", run.Target, run.Point, run.Block, run.Complete)
		}
		return s
	}
	for _, c := range []struct{ got, want string }{
		{ids(r.Measured("a", 0)), "a01true a03false "},
		{ids(r.Completed("a", 0)), "a01true "},
		{ids(r.Completed(AnyTarget, 0)), "a01true b01true "},
		{ids(r.Completed("a", AnyPoint)), "a01true a12true "},
		{ids(r.Measured(AnyTarget, AnyPoint)), "a01true b01true a12true a03false "},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// Summary and Interval share their figures by embedding, and their JSON
// keeps every name at the top level, as before.
func TestFiguresKeepTheirJSONNames(t *testing.T) {
	f := Figures{Events: 1, Reads: 2, Writes: 3, Other: 4, Errors: 5, Reconnects: 6, TPS: 7, QPS: 8, P50US: 9, P95US: 10, P99US: 11, MaxUS: 12, PctUS: 13}
	for name, v := range map[string]any{"summary": Summary{DurationS: 1, Figures: f, Queries: 9}, "interval": Interval{TS: 1, SpanS: 1, Figures: f}} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]float64{"events": 1, "reads": 2, "writes": 3, "other": 4, "errors": 5, "reconnects": 6, "tps": 7, "qps": 8,
			"p50_us": 9, "p95_us": 10, "p99_us": 11, "max_us": 12, "pct_us": 13} {
			if m[k] != want {
				t.Errorf("%s: %s = %v, want %v (%s)", name, k, m[k], want, data)
			}
		}
		if _, nested := m["Figures"]; nested {
			t.Errorf("%s: figures nested: %s", name, data)
		}
	}
}

// A snapshot shares the runs' contents with the result it was taken from
// and nothing else: what a reader changes in it never reaches the result.
func TestCloneSharingRunsCopiesAllButTheRuns(t *testing.T) {
	r := &Result{
		Targets:     []Target{{Name: "native"}},
		Warnings:    []string{"versions differ"},
		Stats:       map[string]TargetStats{"native": {}},
		Environment: map[string]string{"kernel": "6.1"},
		Runs: []Run{{Target: "native", Complete: true, Histogram: "HISTFAAAA",
			Intervals: []Interval{{TS: 1, SpanS: 1, Telemetry: TelemetryOf(map[string]float64{"server_cpu_cores": 1.5})}}}},
	}
	c := r.CloneSharingRuns()
	if !reflect.DeepEqual(c, r.Clone()) {
		t.Fatalf("the copy differs from a whole copy:\n%+v\n%+v", c, r.Clone())
	}
	if &c.Runs[0].Intervals[0] != &r.Runs[0].Intervals[0] {
		t.Error("the runs' intervals were copied, not shared")
	}
	c.Targets[0].Name = "changed"
	c.Warnings = append(c.Warnings[:0], "changed")
	c.Stats["other"] = TargetStats{}
	c.Environment["kernel"] = "changed"
	c.Runs[0] = Run{Target: "changed"}
	c.Runs = append(c.Runs, Run{Target: "added"})
	if r.Targets[0].Name != "native" || r.Warnings[0] != "versions differ" || len(r.Stats) != 1 ||
		r.Environment["kernel"] != "6.1" || len(r.Runs) != 1 || r.Runs[0].Target != "native" {
		t.Errorf("a change to the copy reached the result: %+v", r)
	}
}
