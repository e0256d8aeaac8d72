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
		writeSeq(buf)
		c.Writes++
	case w.oper == "read" && !w.rnd:
		w.sink += readSeq(buf)
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

// writeSeq stores one word at a time, as sysbench's event_seq_write, four
// per loop step (what a C compiler makes of sysbench's loop; Go's compiler
// does not unroll, and the loop's own cost would otherwise show in MiB/s).
// The block size is a power of two of at least 8 bytes: 1, 2 or 4k words.
func writeSeq(buf []uint64) {
	n := uint64(len(buf))
	i := 0
	for ; i+4 <= len(buf); i += 4 {
		b := buf[i : i+4 : i+4]
		v := n - uint64(i)
		b[0], b[1], b[2], b[3] = v, v-1, v-2, v-3
	}
	for ; i < len(buf); i++ {
		buf[i] = n - uint64(i)
	}
}

// readSeq loads every word, four per loop step, and returns their sum (so
// that the loads are not optimised away).
func readSeq(buf []uint64) uint64 {
	var s0, s1, s2, s3 uint64
	i := 0
	for ; i+4 <= len(buf); i += 4 {
		b := buf[i : i+4 : i+4]
		s0 += b[0]
		s1 += b[1]
		s2 += b[2]
		s3 += b[3]
	}
	for ; i < len(buf); i++ {
		s0 += buf[i]
	}
	return s0 + s1 + s2 + s3
}
