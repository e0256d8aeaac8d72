package engine

import (
	"context"
)

// intervalMerger sends interval events without ever blocking the engine:
// when the consumer is behind, intervals wait in a backlog that is sent as
// soon as there is room. Counts are exact; the UI simply sees them later.
type intervalMerger struct {
	out     chan<- Event
	backlog []Event
}

func newIntervalMerger(out chan<- Event) *intervalMerger { return &intervalMerger{out: out} }

func (m *intervalMerger) send(e Event) {
	m.backlog = append(m.backlog, e)
	for len(m.backlog) > 0 {
		select {
		case m.out <- m.backlog[0]:
			m.backlog = m.backlog[1:]
		default:
			return
		}
	}
}

// flush delivers the backlog at the end of a run, blocking until it is taken.
func (m *intervalMerger) flush(ctx context.Context) {
	for _, e := range m.backlog {
		select {
		case m.out <- e:
		case <-ctx.Done():
			m.backlog = nil
			return
		}
	}
	m.backlog = nil
}
