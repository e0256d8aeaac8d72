package sys

import (
	"context"
	"math"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
)

// cpuTest is sysbench's cpu test: each event counts the primes below
// --cpu-max-prime by trial division, in 64-bit integers.
type cpuTest struct{ base }

func (t *cpuTest) Options() map[string]any { return map[string]any{"cpu_max_prime": t.o.CPUMaxPrime} }

func (t *cpuTest) NewWorker(context.Context, driver.Conn, int, int, uint64) (workload.Worker, error) {
	return &cpuWorker{max: uint64(t.o.CPUMaxPrime)}, nil
}

type cpuWorker struct {
	max    uint64
	primes uint64 // kept so that the search is not optimised away
}

// Event is sysbench's cpu_execute_event, operation for operation.
func (w *cpuWorker) Event(context.Context, *workload.Counts) error {
	// Signed integers convert to float64 in one instruction; the values
	// stay far below 2^63, so the arithmetic is sysbench's exactly.
	var n uint64
	for c := int64(3); c < int64(w.max); c++ {
		t := math.Sqrt(float64(c))
		l := int64(2)
		for ; float64(l) <= t; l++ {
			if uint64(c)%uint64(l) == 0 {
				break
			}
		}
		if float64(l) > t {
			n++
		}
	}
	w.primes = n
	return nil
}

func (w *cpuWorker) Close(context.Context, *workload.Counts) error { return nil }

// primesBelow is what one event finds (for tests).
func primesBelow(max int) uint64 {
	w := &cpuWorker{max: uint64(max)}
	_ = w.Event(context.Background(), nil)
	return w.primes
}
