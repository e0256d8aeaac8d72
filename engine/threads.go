package engine

import (
	"context"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// Threads are a target's connected and prepared threads kept from one run
// to the next (dbduel live's slices): a run given them (Config.Threads
// kept) pays no connect or prepare cost, and between runs the threads are
// parked, their connections open and idle. They are rebuilt when the
// thread count or the workload changes.
type Threads struct {
	conns   []driver.Conn
	workers []workload.Worker
	wl      workload.Workload
}

// fits says whether the kept threads serve a run of n threads of wl.
func (t *Threads) fits(n int, wl workload.Workload) bool {
	return len(t.conns) == n && t.wl == wl && !t.partial()
}

func (t *Threads) partial() bool {
	for i := range t.conns {
		if t.conns[i] == nil || t.workers[i] == nil {
			return true
		}
	}
	return false
}

// Close finishes every worker and closes its connection.
func (t *Threads) Close() {
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
