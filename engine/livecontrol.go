package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/dbduel/dbduel/engine/workload"
)

// MaxLiveThreads bounds dbduel live's threads per target (the pools are
// opened for it at the start).
const MaxLiveThreads = 512

// LiveSettings are the load of a dbduel live segment.
type LiveSettings struct {
	Threads  int
	Rate     float64           // events/s, open loop; 0: closed loop
	Workload workload.Workload // nil: the session's
	Paused   bool
}

// LiveControl is what dbduel live's keys change, for every target at
// once; the engine reads it before each round, so a change applies from
// the next round and starts a segment named by what changed.
type LiveControl struct {
	mu      sync.Mutex
	set     LiveSettings
	changes []string
	wake    chan struct{}
}

// NewLiveControl starts with threads and rate (the run flags').
func NewLiveControl(threads int, rate float64) *LiveControl {
	return &LiveControl{set: LiveSettings{Threads: threads, Rate: rate}, wake: make(chan struct{}, 1)}
}

// Settings are the load the next round runs.
func (l *LiveControl) Settings() LiveSettings {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set
}

func (l *LiveControl) change(what string, apply func(*LiveSettings)) {
	l.mu.Lock()
	apply(&l.set)
	if what != "" {
		l.changes = append(l.changes, what)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// SetThreads sets the threads (1..MaxLiveThreads).
func (l *LiveControl) SetThreads(n int) {
	n = min(max(n, 1), MaxLiveThreads)
	if old := l.Settings().Threads; n != old {
		l.change(fmt.Sprintf("threads %d→%d", old, n), func(s *LiveSettings) { s.Threads = n })
	}
}

// SetRate sets the open loop's rate (0: closed loop).
func (l *LiveControl) SetRate(r float64) {
	old := l.Settings().Rate
	if r == old {
		return
	}
	what := fmt.Sprintf("rate %s→%s", rateWords(old), rateWords(r))
	l.change(what, func(s *LiveSettings) { s.Rate = r })
}

func rateWords(r float64) string {
	if r == 0 {
		return "closed loop"
	}
	return fmt.Sprintf("%.0f/s", r)
}

// SetWorkload runs wl from the next round.
func (l *LiveControl) SetWorkload(wl workload.Workload) {
	old := l.Settings().Workload
	from := "?"
	if old != nil {
		from = old.Name()
	}
	l.change(fmt.Sprintf("workload %s→%s", from, wl.Name()), func(s *LiveSettings) { s.Workload = wl })
}

// SetPaused stops the load after the round under way (and goes on).
func (l *LiveControl) SetPaused(p bool) {
	l.change("", func(s *LiveSettings) { s.Paused = p })
}

// next waits while paused and returns the settings of the next round and
// what changed since the last (empty: nothing); paused says it waited.
func (l *LiveControl) next(ctx context.Context) (set LiveSettings, change string, paused bool, err error) {
	for {
		l.mu.Lock()
		set = l.set
		if !set.Paused {
			for i, c := range l.changes {
				if i > 0 {
					change += ", "
				}
				change += c
			}
			l.changes = nil
			l.mu.Unlock()
			return set, change, paused, nil
		}
		l.mu.Unlock()
		paused = true
		select {
		case <-ctx.Done():
			return set, "", paused, ctx.Err()
		case <-l.wake:
		}
	}
}
