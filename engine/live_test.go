package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/internal/fakesql"
)

// dbduel live's rounds: each target's threads are connected and prepared
// once per segment (parked between slices), a change of threads starts a
// segment of its own, a pause runs nothing, and a quit keeps only whole
// rounds.
func TestLiveRoundsSegmentsAndPause(t *testing.T) {
	w := &scripted{sleep: time.Millisecond}
	open := func(context.Context, int) (driver.DB, error) {
		db, _ := fakesql.Open(false)
		return &driver.SQLPool{DB: db, Protocol: "fake"}, nil
	}
	ctl := NewLiveControl(Point{Workload: w, Threads: 2})
	sess := Session{
		Load:     Load{Time: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, ReportInterval: 100 * time.Millisecond, Percentile: 95},
		Schedule: NewLive(ctl, nil, 7),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 16)
	go Run(ctx, sess, []Target{{Name: "a", Open: open}, {Name: "b", Open: open}}, events)
	var final *result.Result
	changed, pausedAt, runsWhilePaused := false, time.Time{}, 0
	for e := range events {
		switch e.Kind {
		case EventSnapshot:
			// Snapshots follow each slice (the newest pending one only):
			// the rounds they hold say how far the session is.
			switch rounds := e.Snapshot.Plan.Runs; {
			case rounds >= 2 && !changed:
				changed = true
				ctl.SetThreads(4)
			case rounds >= 6 && pausedAt.IsZero():
				ctl.SetPaused(true)
				pausedAt = time.Now()
				go func() { time.Sleep(2500 * time.Millisecond); cancel() }()
			}
		case EventRunDone:
			// The round under way at the pause ends (two 0.4-s slices);
			// nothing after it.
			if !pausedAt.IsZero() && time.Since(pausedAt) > 1200*time.Millisecond {
				runsWhilePaused++
			}
		case EventFinished:
			final = e.Result
		}
	}
	if final == nil || !final.Complete || final.Live == nil {
		t.Fatalf("final result: %+v", final)
	}
	if runsWhilePaused > 0 {
		t.Fatalf("%d slices ran while paused", runsWhilePaused)
	}
	segs := final.Segments
	if len(segs) != 2 || segs[0].Threads != 2 || segs[1].Threads != 4 || segs[1].WhatChanged != "threads 2→4" || segs[1].Point != 1 {
		t.Fatalf("segments: %+v", segs)
	}
	if segs[0].Rounds < 2 || segs[1].Rounds < 2 {
		t.Fatalf("rounds %d and %d, want at least 2 each (a key applies from the next round to begin)", segs[0].Rounds, segs[1].Rounds)
	}
	// Two targets × (2 threads + 4 threads): each thread made once.
	if n := w.workers.Load(); n != 12 {
		t.Fatalf("%d workers made, want 12: the threads were not kept between slices", n)
	}
	if len(final.Runs) != 2*(segs[0].Rounds+segs[1].Rounds) || len(final.Plan.Blocks) != segs[0].Rounds+segs[1].Rounds {
		t.Fatalf("%d runs and %d blocks for %d+%d rounds of 2 targets", len(final.Runs), len(final.Plan.Blocks), segs[0].Rounds, segs[1].Rounds)
	}
	for _, r := range final.Runs {
		if !r.Complete || r.Summary.DurationS < 0.25 || r.Summary.DurationS > 0.4 || r.Point != map[int]int{2: 0, 4: 1}[final.Plan.Points[r.Point].Threads] {
			t.Fatalf("slice %+v: want a complete 0.3-s measured slice on its segment's point", r.Summary)
		}
	}
	// Switches: every slice after a segment's first, less none.
	if l := final.Live; l.Switches != len(final.Runs)-2 || l.SwitchMs <= 0 || l.SwitchMaxMs < l.SwitchMs {
		t.Fatalf("switches %d (mean %.2f ms, max %.2f ms) for %d slices", l.Switches, l.SwitchMs, l.SwitchMaxMs, len(final.Runs))
	}
}

// A restart: the restarted target's first rounds settle (not counted,
// recorded in the segment, its card's phase says so) until it is steady;
// a target that fails to restart sits out, and the others' rounds still
// pair and compare without it.
func TestLiveRestartSettlesAndAFailedTargetSitsOut(t *testing.T) {
	w := &scripted{sleep: time.Millisecond}
	open := func(context.Context, int) (driver.DB, error) {
		db, _ := fakesql.Open(false)
		return &driver.SQLPool{DB: db, Protocol: "fake"}, nil
	}
	restart := func(_ context.Context, name string) (map[string]string, error) {
		if name == "c" {
			return nil, errors.New("the container did not come back")
		}
		return map[string]string{"innodb_buffer_pool_size": "1G"}, nil
	}
	ctl := NewLiveControl(Point{Workload: w, Threads: 1})
	sess := Session{
		Load:     Load{Time: 200 * time.Millisecond, ReportInterval: 100 * time.Millisecond, Percentile: 95},
		Schedule: NewLive(ctl, restart, 7),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 64)
	targets := []Target{{Name: "a", Open: open}, {Name: "b", Open: open}, {Name: "c", Open: open}}
	go Run(ctx, sess, targets, events)
	var final *result.Result
	reconfigured, settlingShown := false, false
	for e := range events {
		switch e.Kind {
		case EventSnapshot:
			if rounds := e.Snapshot.Plan.Runs; rounds >= 3 && !reconfigured {
				reconfigured = true
				ctl.Reconfigure([]string{"b", "c"}, "tuned.cnf changed")
			}
			if segs := e.Snapshot.Segments; len(segs) == 2 && segs[1].Rounds >= 3 {
				cancel()
			}
		case EventPhase:
			if e.Target == "b" && strings.Contains(e.Phase, SettlingPhase) {
				settlingShown = true
			}
		case EventFinished:
			final = e.Result
		}
	}
	if final == nil || len(final.Segments) != 2 {
		t.Fatalf("final: %+v", final)
	}
	s1 := final.Segments[1]
	if s1.SettlingRounds < 2 || s1.SettlingRounds > stats.MaxSettlingRounds || !settlingShown || final.Segments[0].SettlingRounds != 0 {
		t.Fatalf("settling rounds %d (shown %v), first segment %d", s1.SettlingRounds, settlingShown, final.Segments[0].SettlingRounds)
	}
	// Only counted rounds are in the result: 2 targets from the restart on.
	for _, run := range final.Runs {
		if run.Point == s1.Point && run.Target == "c" {
			t.Fatalf("c sat out, yet ran: %+v", run)
		}
	}
	if got := len(final.Completed(result.AnyTarget, s1.Point)); got != 2*s1.Rounds {
		t.Fatalf("%d runs in the second segment for %d counted rounds of a and b", got, s1.Rounds)
	}
	final.Targets = []result.Target{{Name: "a"}, {Name: "b"}, {Name: "c"}} // as the command annotates them
	stats.Analyze(final)                                                   // as the command does with every snapshot and the result
	s1 = final.Segments[1]
	if c := final.Comparison("b", "tps", s1.Point); c == nil || c.N != s1.Rounds || !c.Interim {
		var got []string
		for _, x := range final.Comparisons {
			got = append(got, fmt.Sprintf("%s/%s/%d", x.Target, x.Metric, x.Point))
		}
		t.Fatalf("b's comparison in the second segment: %+v; have %v; complete %v; live %v", c, got, final.CompleteBlocks(s1.Point), final.Live != nil)
	}
	if c := final.Comparison("c", "tps", s1.Point); c != nil {
		t.Fatalf("c has a comparison where it sat out: %+v", c)
	}
	for _, v := range s1.VsIteration1 {
		if v.Target == "c" {
			t.Fatalf("c vs iteration 1 where it sat out: %+v", v)
		}
		if !v.Interim {
			t.Fatalf("vs iteration 1 not interim: %+v", v)
		}
	}
}
