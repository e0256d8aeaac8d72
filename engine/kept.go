package engine

import (
	"context"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// KeptThreads are a target's connected and prepared threads kept from one
// run to the next (dbduel live's slices): a run given them (Config.Kept)
// pays no connect or prepare cost, and between runs the threads are
// parked, their connections open and idle. They are rebuilt when the
// thread count or the workload changes.
type KeptThreads struct {
	conns   []driver.Conn
	workers []workload.Worker
	wl      workload.Workload
}

// fits says whether the kept threads serve a run of n threads of wl.
func (t *KeptThreads) fits(n int, wl workload.Workload) bool {
	return len(t.conns) == n && t.wl == wl && !t.partial()
}

func (t *KeptThreads) partial() bool {
	for i := range t.conns {
		if t.conns[i] == nil || t.workers[i] == nil {
			return true
		}
	}
	return false
}

// Close finishes every worker and closes its connection.
func (t *KeptThreads) Close() {
	for i, c := range t.conns {
		if w := t.workers[i]; w != nil {
			var n workload.Counts
			_ = w.Close(context.Background(), &n)
		}
		if c != nil {
			c.Close()
		}
	}
	t.conns, t.workers, t.wl = nil, nil, nil
}

// keeper keeps each target's threads from one of its runs to the next
// and times the switches: the idle time from one run's last statement to
// the next run's first (dbduel live's slices). A nil keeper keeps
// nothing: each run connects its own threads.
type keeper struct {
	kept     map[string]*KeptThreads
	lastEnd  time.Time       // when the last run's statements ended (zero: no switch to time)
	switches []time.Duration // timed since the owner last took them
}

// threads are target name's kept threads (nil for a nil keeper).
func (k *keeper) threads(name string) *KeptThreads {
	if k == nil {
		return nil
	}
	if k.kept[name] == nil {
		k.kept[name] = &KeptThreads{}
	}
	return k.kept[name]
}

// ready is a run's first statement about to start: the switch ends.
func (k *keeper) ready() {
	if k != nil && !k.lastEnd.IsZero() {
		k.switches = append(k.switches, time.Since(k.lastEnd))
	}
}

// ended is a run's last statement done: a switch starts.
func (k *keeper) ended() {
	if k != nil {
		k.lastEnd = time.Now()
	}
}

// noSwitch says the next run's start is not a switch (a pause, a
// restart, a new segment came between).
func (k *keeper) noSwitch() { k.lastEnd = time.Time{} }

// forget closes target name's kept threads (its server restarts).
func (k *keeper) forget(name string) {
	if t := k.kept[name]; t != nil {
		t.Close()
		delete(k.kept, name)
	}
}

func (k *keeper) closeAll() {
	for name := range k.kept {
		k.forget(name)
	}
}
