package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
)

// replay sends a saved result's runs as the engine did: each interval
// after its own span over the speed, each run's end with the comparison as
// it stood then (from the runs so far), a live session's segments as they
// began, and the recorded result last.
func TestReplayPlaysTheRunsBack(t *testing.T) {
	r := &result.Result{Complete: true, Targets: []result.Target{{Name: "a"}, {Name: "b"}},
		Plan:     result.Plan{Points: []result.Point{{Threads: 2}, {Threads: 4}}},
		Segments: []result.Segment{{Point: 0, WhatChanged: "start"}, {Point: 1, WhatChanged: "threads 2→4"}}}
	for blk, tps := range [][2]float64{{1000, 800}, {1100, 900}, {1000, 700}} {
		for i, name := range []string{"a", "b"} {
			run := result.Run{Target: name, Block: blk + 1, Index: blk + 1, Point: blk / 2, Complete: true}
			run.Summary.TPS, run.Summary.QPS = tps[i], tps[i]*10
			for k := range 3 {
				run.Intervals = append(run.Intervals, result.Interval{TS: float64(k + 1), SpanS: 1})
			}
			r.Runs = append(r.Runs, run)
		}
	}
	events := make(chan engine.Event)
	go replayEvents(context.Background(), r, 60, events, nil)
	start := time.Now()
	var kinds []string
	var lastSnap *result.Result
	var final *result.Result
	for e := range events {
		switch e.Kind {
		case engine.EventPhase:
			kinds = append(kinds, "phase")
		case engine.EventInterval:
			kinds = append(kinds, "iv")
		case engine.EventSegment:
			kinds = append(kinds, fmt.Sprintf("segment %d: %s", e.Point+1, e.Message))
		case engine.EventRunDone:
			kinds = append(kinds, "done")
			lastSnap = e.Snapshot
			if e.Done == 2 { // block 1 of point 0: b/a = 0.8
				if c := e.Snapshot.Comparison("b", "tps", 0); c == nil || c.N != 1 || c.DeltaPct > -19.9 || c.DeltaPct < -20.1 {
					t.Errorf("after block 1: %+v", c)
				}
			}
		case engine.EventFinished:
			final = e.Result
		}
		if final != nil {
			break
		}
	}
	if elapsed := time.Since(start); elapsed < 18*time.Second/60 {
		t.Errorf("18 one-second intervals at speed 60 took %v, less than 0.3 s", elapsed)
	}
	want := "segment 1: start phase iv iv iv done phase iv iv iv done phase iv iv iv done phase iv iv iv done segment 2: threads 2→4 phase iv iv iv done phase iv iv iv done"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
	if final != r || lastSnap == nil || len(lastSnap.Runs) != 6 || lastSnap.Comparison("b", "tps", 1) == nil {
		t.Errorf("final %p (want %p), last snapshot %+v", final, r, lastSnap)
	}
	if r.Comparisons != nil {
		t.Errorf("the snapshots changed the recorded result: %+v", r.Comparisons)
	}
}

func TestReplayNeedsATerminal(t *testing.T) {
	_, stderr, code := runCLI(t, "replay", "x.json")
	if code != exitUsage || !strings.Contains(stderr, "dbduel report x.json") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// replay --cast records the replay as asciicast v2: a header with the
// terminal's size, output events whose times never go back, the replay's
// note on screen, and the finished screen's verdict at the end; no
// terminal is needed, and a bad --size is one line, exit 2.
func TestReplayCastIsAsciicastV2(t *testing.T) {
	path := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}, "container": {500, 510, 490}}, 100)
	out := filepath.Join(t.TempDir(), "demo.cast")
	_, stderr, code := runCLI(t, "replay", path, "--cast", out, "--size", "80x24", "--speed", "100")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var h struct {
		Version, Width, Height int
	}
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil || h.Version != 2 || h.Width != 80 || h.Height != 24 {
		t.Fatalf("header %q: %+v %v", lines[0], h, err)
	}
	last, all, finished := -1.0, "", ""
	for _, l := range lines[1:] {
		var ev []any
		if err := json.Unmarshal([]byte(l), &ev); err != nil || len(ev) != 3 || ev[1] != "o" {
			t.Fatalf("event %q: %v", l, err)
		}
		at, _ := ev[0].(float64)
		if at < last {
			t.Fatalf("time went back: %v after %v", at, last)
		}
		last = at
		all += ev[2].(string)
		if s := ev[2].(string); strings.Contains(s, "finished") {
			finished = s
		}
	}
	if !strings.Contains(all, "replay of a run measured") || !strings.Contains(finished, "verdict: container is slower by 50.0%") {
		t.Fatalf("the cast lacks the note or ends without the verdict:\n%q", finished)
	}
	if _, stderr, code := runCLI(t, "replay", path, "--cast", out, "--size", "60x10"); code != exitUsage || !strings.Contains(stderr, "invalid --size") {
		t.Fatalf("--size 60x10: exit %d %s", code, stderr)
	}
}
