package sys

import (
	"context"
	"fmt"
	"sync"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
)

// memoryTest is sysbench's memory test: each event reads or writes one
// block of --memory-block-size bytes, a machine word at a time, in order
// or at random offsets; each thread stops after its share of
// --memory-total-size.
type memoryTest struct {
	base
	once   sync.Once
	global []uint64 // the one buffer of --memory-scope global
}

func newMemory(o Options) (*memoryTest, error) {
	switch {
	case o.MemBlockSize < 8 || o.MemBlockSize&(o.MemBlockSize-1) != 0:
		return nil, fmt.Errorf("invalid value for --memory-block-size: %d (want a power of 2, at least 8)", o.MemBlockSize)
	case o.MemScope != "global" && o.MemScope != "local":
		return nil, fmt.Errorf("invalid value for --memory-scope: %s (want global or local)", o.MemScope)
	case o.MemOper != "read" && o.MemOper != "write" && o.MemOper != "none":
		return nil, fmt.Errorf("invalid value for --memory-oper: %s (want read, write or none)", o.MemOper)
	case o.MemAccessMode != "seq" && o.MemAccessMode != "rnd":
		return nil, fmt.Errorf("invalid value for --memory-access-mode: %s (want seq or rnd)", o.MemAccessMode)
	}
	return &memoryTest{base: base{"memory", o}}, nil
}

func (t *memoryTest) Options() map[string]any {
	return map[string]any{"memory_block_size": t.o.MemBlockSize, "memory_total_size": t.o.MemTotalSize,
		"memory_scope": t.o.MemScope, "memory_oper": t.o.MemOper, "memory_access_mode": t.o.MemAccessMode}
}

// BlockBytes is what one read or write event moves.
func (t *memoryTest) BlockBytes() int64 { return t.o.MemBlockSize }

func (t *memoryTest) NewWorker(_ context.Context, _ driver.Conn, _, threads int, seed uint64) (workload.Worker, error) {
	words := int(t.o.MemBlockSize / 8)
	var buf []uint64
	if t.o.MemScope == "global" {
		t.once.Do(func() { t.global = make([]uint64, words) })
		buf = t.global
	} else {
		buf = make([]uint64, words)
	}
	w := &memoryWorker{buf: buf, rnd: t.o.MemAccessMode == "rnd", oper: t.o.MemOper, left: -1,
		rng: sbrand.New(sbrand.DefaultParams(), seed)}
	if t.o.MemTotalSize > 0 {
		w.left = t.o.MemTotalSize / t.o.MemBlockSize / int64(threads)
	}
	return w, nil
}

type memoryWorker struct {
	buf  []uint64
	rnd  bool
	oper string
	left int64 // events this thread may still run (-1: no limit)
	rng  *sbrand.Rand
	sink uint64 // what reads load, kept so that they are not optimised away
}

func (w *memoryWorker) Event(_ context.Context, c *workload.Counts) error {
	if w.left == 0 {
		return workload.ErrEndOfEvents
	}
	if w.left > 0 {
		w.left--
	}
	buf := w.buf
	n := uint64(len(buf))
	switch {
	case w.oper == "write" && !w.rnd:
		for i := range buf {
			buf[i] = n - uint64(i)
		}
		c.Writes++
	case w.oper == "read" && !w.rnd:
		var s uint64
		for _, v := range buf {
			s += v
		}
		w.sink += s
		c.Reads++
	case w.oper == "write":
		for i := uint64(0); i < n; i++ {
			buf[uint64(w.rng.Float64()*float64(n))] = i
		}
		c.Writes++
	case w.oper == "read":
		var s uint64
		for i := uint64(0); i < n; i++ {
			s += buf[uint64(w.rng.Float64()*float64(n))]
		}
		w.sink += s
		c.Reads++
	case w.rnd: // none: the offsets are drawn, nothing is accessed
		var s uint64
		for i := uint64(0); i < n; i++ {
			s += uint64(w.rng.Float64() * float64(n))
		}
		w.sink += s
		c.Other++
	default: // none, seq: the loop alone
		var s uint64
		for i := range buf {
			s += uint64(i)
		}
		w.sink += s
		c.Other++
	}
	return nil
}

func (w *memoryWorker) Close(context.Context, *workload.Counts) error { return nil }
