package engine

import (
	"slices"
	"sync"

	"github.com/dbduel/dbduel/engine/result"
)

// snapshotter annotates and sends the session's snapshots off the
// conductor's goroutine (a snapshot's copy and analysis must not lengthen
// the switch between runs); only the newest pending one is made.
type snapshotter struct {
	c       *conductor
	mu      sync.Mutex
	pending *result.Result
	wake    chan struct{}
	done    chan struct{}
	exited  chan struct{}
}

func newSnapshotter(c *conductor) *snapshotter {
	s := &snapshotter{c: c, wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	go func() { defer close(s.exited); s.loop() }()
	return s
}

// offer takes a shallow copy of the result now: the conductor and the
// schedules only append runs, segments and blocks, which nobody changes
// once appended, and replace the other fields they change.
func (s *snapshotter) offer() {
	r := *s.c.res
	r.Runs = slices.Clone(r.Runs)
	r.Segments = slices.Clone(r.Segments)
	r.Plan.Points = slices.Clone(r.Plan.Points)
	r.Plan.Blocks = slices.Clone(r.Plan.Blocks)
	r.Plan.Stein = slices.Clone(r.Plan.Stein)
	if r.Live != nil {
		live := *r.Live
		r.Live = &live
	}
	s.mu.Lock()
	s.pending = &r
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *snapshotter) loop() {
	for {
		select {
		case <-s.done:
			return
		case <-s.wake:
		}
		s.mu.Lock()
		r := s.pending
		s.pending = nil
		s.mu.Unlock()
		if r == nil {
			continue
		}
		snap := r.CloneSharingRuns()
		if s.c.s.Annotate != nil {
			s.c.s.Annotate(snap)
		}
		if s.c.s.OnSnapshot != nil {
			s.c.s.OnSnapshot(snap)
		}
		s.c.send(Event{Kind: EventSnapshot, Snapshot: snap})
	}
}

// stop waits for the snapshot being made (its event is sent before the
// stream closes).
func (s *snapshotter) stop() {
	close(s.done)
	<-s.exited
}
