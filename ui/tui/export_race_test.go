package tui

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/plan"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/internal/fakesql"
)

// quick is a workload of instant events on any connection.
type quick struct{}

func (quick) Name() string                                              { return "quick" }
func (quick) Protocols() []string                                       { return []string{"fake"} }
func (quick) Shape() workload.Shape                                     { return workload.Shape{} }
func (quick) Options() map[string]any                                   { return map[string]any{} }
func (quick) Validate(int) error                                        { return nil }
func (quick) Cleanup(context.Context, driver.DB, int) ([]string, error) { return nil, nil }
func (quick) Prepare(context.Context, driver.DB, int, func(workload.Progress)) error {
	return nil
}
func (quick) Check(context.Context, driver.DB, int) (workload.TableState, error) {
	return workload.TableState{Reusable: true}, nil
}
func (quick) NewWorker(context.Context, driver.Conn, int, int, uint64) (workload.Worker, error) {
	return quickWorker{}, nil
}

type quickWorker struct{}

func (quickWorker) Event(_ context.Context, c *workload.Counts) error {
	time.Sleep(50 * time.Microsecond)
	c.Reads++
	return nil
}
func (quickWorker) Close(context.Context, *workload.Counts) error { return nil }

// Pressing `e` again and again while the engine appends runs and annotates
// snapshots: each export marshals the snapshot the model holds while the
// engine works on its own result (go test -race catches any sharing).
func TestExportDuringAMultiRunPlan(t *testing.T) {
	open := func(context.Context, int) (driver.DB, error) {
		db, _ := fakesql.Open(false)
		return &driver.SQLPool{DB: db, Protocol: "fake"}, nil
	}
	targets := []engine.Target{{Name: "a", Open: open}, {Name: "b", Open: open}}
	sched, err := engine.NewPlan(plan.New([]string{"a", "b"}, 1, 4, 0, 1), []engine.Point{{Workload: quick{}, Threads: 2}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := engine.Session{
		Load:     engine.Load{Time: 150 * time.Millisecond, ReportInterval: 50 * time.Millisecond, Percentile: 95},
		Schedule: sched,
		Annotate: func(r *result.Result) {
			r.Targets = []result.Target{{Name: "a"}, {Name: "b"}}
			stats.Analyze(r)
		},
	}
	events := make(chan engine.Event, 4)
	go engine.Run(context.Background(), sess, targets, events)
	var exports atomic.Int64
	m := New(Info{Targets: []result.Target{{Name: "a"}, {Name: "b"}}}, events, func() {}, func(r *result.Result) (string, error) {
		if r == nil {
			return "", nil
		}
		if _, err := json.Marshal(r); err != nil {
			return "", err
		}
		exports.Add(1)
		return "x.json", nil
	}, false)
	for e := range events {
		m.Update(EventMsg(e))
		// The export runs in a command, as the program would run it.
		if _, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("e")}); cmd != nil {
			m.Update(cmd())
		}
	}
	if !m.done || m.res == nil || !m.res.Complete || exports.Load() < 8 {
		t.Fatalf("done %v, complete result %v, %d exports", m.done, m.res != nil && m.res.Complete, exports.Load())
	}
}
