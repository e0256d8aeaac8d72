package engine

import "testing"

// flipping is a recorder whose warm-up ends at its first reading: the
// moment a second reading would see otherwise.
type flipping struct{ reads int }

func (f *flipping) Measuring() bool { f.reads++; return f.reads > 1 }

// An event begun as the warm-up ends is either the warm-up's (no budget
// spent) or measured (budget spent), never measured for free: with
// --events 1 only one measured event starts.
func TestStartEventReadsTheWarmUpOnce(t *testing.T) {
	s := &runState{cfg: Config{Load: Load{Events: 1}}}
	s.remaining.Store(1)
	warm, ok := s.startEvent(&flipping{}, true)
	if !ok {
		t.Fatal("the first event did not start")
	}
	spent := s.remaining.Load() == 0
	if warm == spent {
		t.Fatalf("warm %v with the budget spent %v: an event is the warm-up's or spends the budget", warm, spent)
	}
	// Measuring from now on: one event's budget, then no more.
	budget := s.remaining.Load()
	started := 0
	for range 3 {
		if _, ok := s.startEvent(&flipping{reads: 1}, true); ok {
			started++
		}
	}
	if started != int(budget) {
		t.Fatalf("%d measured events started on a budget of %d", started, budget)
	}
	// Without a warm-up every event is measured, none warm.
	s.remaining.Store(2)
	if warm, ok := s.startEvent(&flipping{}, false); warm || !ok || s.remaining.Load() != 1 {
		t.Fatalf("no warm-up: warm %v ok %v remaining %d", warm, ok, s.remaining.Load())
	}
}
