package engine

import (
	"context"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
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
