package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/dbduel/dbduel/engine/workload"
)

// MaxLiveThreads bounds dbduel live's threads per target (the pools are
// opened for it at the start).
const MaxLiveThreads = 512

// LiveSettings are the load of a dbduel live segment, and whether the
// load is paused.
type LiveSettings struct {
	Point
	Paused bool
}

// LiveControl is what dbduel live's keys change, for every target at
// once; the engine reads it before each round, so a change applies from
// the next round and starts a segment named by what changed.
type LiveControl struct {
	mu       sync.Mutex
	set      LiveSettings
	changes  []string
	restarts []string // targets to restart before the next round
	notes    []string // messages for the screen, sent with the next round
	wake     chan struct{}
}

// NewLiveControl starts with the point the flags give.
func NewLiveControl(first Point) *LiveControl {
	return &LiveControl{set: LiveSettings{Point: first}, wake: make(chan struct{}, 1)}
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
	from := l.Settings().Workload.Name()
	l.change(fmt.Sprintf("workload %s→%s", from, wl.Name()), func(s *LiveSettings) { s.Workload = wl })
}

// Reconfigure restarts the targets named (their configuration changed:
// an edited cnf) before the next round, which starts an iteration.
func (l *LiveControl) Reconfigure(targets []string, what string) {
	l.mu.Lock()
	l.restarts = append(l.restarts, targets...)
	l.mu.Unlock()
	l.change(what, func(*LiveSettings) {})
}

// Note shows msg on the screen with the next round (a watched file's
// change that could not be applied).
func (l *LiveControl) Note(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, msg)
}

// takeNotes are the notes since the last call.
func (l *LiveControl) takeNotes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.notes
	l.notes = nil
	return n
}

// SetPaused stops the load after the round under way (and goes on).
func (l *LiveControl) SetPaused(p bool) {
	l.change("", func(s *LiveSettings) { s.Paused = p })
}

// liveRequest is what the next round runs: its settings, what changed
// since the last (empty: nothing), the targets to restart first, and
// whether a pause was waited out.
type liveRequest struct {
	set     LiveSettings
	change  string
	restart []string
	paused  bool
}

// next waits while paused and returns the next round's step.
func (l *LiveControl) next(ctx context.Context) (liveRequest, error) {
	var st liveRequest
	for {
		l.mu.Lock()
		st.set = l.set
		if !st.set.Paused {
			st.change = strings.Join(l.changes, ", ")
			st.restart = l.restarts
			l.changes, l.restarts = nil, nil
			l.mu.Unlock()
			return st, nil
		}
		l.mu.Unlock()
		st.paused = true
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-l.wake:
		}
	}
}
