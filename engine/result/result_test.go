package result

import (
	"fmt"
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
