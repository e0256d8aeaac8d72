package sys

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/workload"
)

func build(t *testing.T, name string, args ...string) workload.Workload {
	t.Helper()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	mk := family{}.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	w, err := mk(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// One cpu event is sysbench's prime search: the primes from 3 to the
// limit (2 is not searched), e.g. 1228 below 10000.
func TestCPUEventCountsSysbenchsPrimes(t *testing.T) {
	for limit, want := range map[int]uint64{10: 3, 100: 24, 10000: 1228} {
		if got := primesBelow(limit); got != want {
			t.Errorf("primes below %d: %d, want %d", limit, got, want)
		}
	}
}

// memory's total size ends each thread after its share, exactly: the run
// has total/block events however long --time allows.
func TestMemoryStopsAfterTotalSize(t *testing.T) {
	w := build(t, "memory", "--memory-total-size=4M", "--memory-block-size=1K", "--memory-oper=read", "--memory-access-mode=rnd")
	run, err := engine.Measure(context.Background(), engine.Config{Point: engine.Point{Workload: w, Threads: 2}, Load: engine.Load{Time: time.Minute, Percentile: 95}}, "h", system.New(t.TempDir()), nil)
	if err != nil || !run.Complete {
		t.Fatalf("%v", err)
	}
	if run.Summary.Events != 4096 || run.Summary.Reads != 4096 || run.Summary.Writes != 0 {
		t.Fatalf("events %d reads %d writes %d, want 4096 reads", run.Summary.Events, run.Summary.Reads, run.Summary.Writes)
	}
	// MiB/s is reads x block over the run's time: 4 MiB in duration_s.
	if want := 4 / run.Summary.DurationS; run.Summary.ReadMiBPerS < want*0.999 || run.Summary.ReadMiBPerS > want*1.001 {
		t.Fatalf("read MiB/s %.3f, want %.3f", run.Summary.ReadMiBPerS, want)
	}
}

func TestBadOptionsAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--memory-block-size=1000"}, {"--memory-scope=nope"}, {"--memory-oper=copy"},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		mk := family{}.BindFlags(fs)
		_ = fs.Parse(args)
		if _, err := mk("memory"); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	for _, args := range [][]string{
		{"--file-io-mode=async"}, {"--file-test-mode=rnd"}, {"--file-total-size=1000", "--file-num=3"},
		{"--file-extra-flags=fast"}, {"--file-merged-requests=2"},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		mk := family{}.BindFlags(fs)
		_ = fs.Parse(args)
		if _, err := mk("fileio"); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// Args rebuild the same workload elsewhere (the agent's side).
func TestArgsRebuildTheSameOptions(t *testing.T) {
	w := build(t, "fileio", "--file-num=3", "--file-total-size=3M", "--file-test-mode=seqrd", "--file-fsync-all", "--file-rw-ratio=2.5", "--file-extra-flags=direct")
	again := build(t, "fileio", w.(workload.Portable).Args()...)
	if a, b := w.(*fileioTest).o, again.(*fileioTest).o; a != b {
		t.Fatalf("rebuilt %+v, want %+v", b, a)
	}
}

// The request generator is sysbench's: after every --file-fsync-freq
// requests that dirtied the files, each file is fsynced once; rndrw keeps
// reads/writes at --file-rw-ratio.
func TestFileRequestsFollowSysbench(t *testing.T) {
	w := build(t, "fileio", "--file-num=4", "--file-total-size=4M", "--file-block-size=4K", "--file-fsync-freq=10").(*fileioTest)
	fw := &fileWorker{t: w, r: &fileRun{}, rng: nil}
	fw.rng = newTestRand()
	var ops []fileOp
	reads, writes := 0, 0
	for i := 0; i < 1000; i++ {
		op, file, pos := fw.next()
		ops = append(ops, op)
		switch op {
		case opRead:
			reads++
			fw.r.reads++
		case opWrite:
			writes++
			fw.r.writes++
		}
		if op != opFsync && (pos%4096 != 0 || pos >= w.fileSize || file >= 4) {
			t.Fatalf("request %d: file %d pos %d", i, file, pos)
		}
	}
	// Requests 1..10, then 4 fsyncs (one per file), then 10 more ...
	for i := 0; i < 10; i++ {
		if ops[i] == opFsync {
			t.Fatalf("fsync among the first 10 requests: %v", ops[:14])
		}
	}
	for i := 10; i < 14; i++ {
		if ops[i] != opFsync {
			t.Fatalf("no fsync cycle after 10 requests: %v", ops[:14])
		}
	}
	if r := float64(reads) / float64(writes); r < 1.45 || r > 1.55 {
		t.Fatalf("reads/writes %.2f, want 1.5", r)
	}
}

// Sequential modes walk every block of every file in order, then wrap.
func TestSequentialRequestsWalkTheFiles(t *testing.T) {
	w := build(t, "fileio", "--file-num=2", "--file-total-size=16K", "--file-block-size=4K", "--file-test-mode=seqrd").(*fileioTest)
	fw := &fileWorker{t: w, r: &fileRun{}, rng: newTestRand()}
	var got []string
	for i := 0; i < 5; i++ {
		_, f, p := fw.next()
		got = append(got, filepath.Join(fileName(f), string(rune('0'+p/4096))))
	}
	if want := "test_file.0/0 test_file.0/1 test_file.1/0 test_file.1/1 test_file.0/0"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// Files are found, refused when short or partial, and cleanup removes
// test_file.N only, never another file of the directory.
func TestFileStatesAndCleanup(t *testing.T) {
	dir := t.TempDir()
	db := system.New(dir)
	ctx := context.Background()
	w := build(t, "fileio", "--file-num=2", "--file-total-size=64K", "--file-block-size=4K")
	if st, _ := w.Check(ctx, db, 1); !st.Missing {
		t.Fatalf("empty dir: %+v", st)
	}
	if err := w.Prepare(ctx, db, 1, func(workload.Progress) {}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if fi, err := os.Stat(filepath.Join(dir, fileName(i))); err != nil || fi.Size() != 32<<10 {
			t.Fatalf("file %d: %v %v", i, fi, err)
		}
	}
	if st, _ := w.Check(ctx, db, 1); !st.Reusable {
		t.Fatalf("prepared: %+v", st)
	}
	bigger := build(t, "fileio", "--file-num=2", "--file-total-size=128K", "--file-block-size=4K")
	if st, _ := bigger.Check(ctx, db, 1); st.Reusable || st.Missing || !strings.Contains(st.Reason, "want at least") {
		t.Fatalf("short files: %+v", st)
	}
	more := build(t, "fileio", "--file-num=4", "--file-total-size=128K", "--file-block-size=4K")
	if st, _ := more.Check(ctx, db, 1); st.Reusable || !strings.Contains(st.Reason, "2 of 4") {
		t.Fatalf("partial set: %+v", st)
	}
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("x"), 0o600)
	removed, err := more.Cleanup(ctx, db, 1)
	if err != nil || len(removed) != 2 {
		t.Fatalf("cleanup: %v %v", removed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mine.txt")); err != nil {
		t.Fatal("cleanup removed a file that is not the workload's")
	}
}

// A run counts reads, writes and fsyncs as sysbench's report does, and the
// end-of-test fsyncs (one per file per thread) are in the totals.
func TestFileioRunCounts(t *testing.T) {
	dir := t.TempDir()
	db := system.New(dir)
	w := build(t, "fileio", "--file-num=2", "--file-total-size=1M", "--file-block-size=4K", "--file-test-mode=rndwr", "--file-fsync-freq=0")
	if err := w.Prepare(context.Background(), db, 2, func(workload.Progress) {}); err != nil {
		t.Fatal(err)
	}
	run, err := engine.Measure(context.Background(), engine.Config{Point: engine.Point{Workload: w, Threads: 2}, Load: engine.Load{Events: 300, Percentile: 95}}, "h", db, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	if s.Events != 300 || s.Writes != 300 || s.Reads != 0 || s.Other != 4 {
		t.Fatalf("events %d writes %d reads %d fsyncs %d; want 300 writes and 2x2 end fsyncs", s.Events, s.Writes, s.Reads, s.Other)
	}
	if want := 300 * 4.0 / 1024 / s.DurationS; s.WrittenMiBPerS < want*0.999 || s.WrittenMiBPerS > want*1.001 {
		t.Fatalf("written MiB/s %.3f, want %.3f", s.WrittenMiBPerS, want)
	}
}

func TestFileioOutsideTheHostIsRefused(t *testing.T) {
	w := build(t, "fileio")
	if _, err := w.NewWorker(context.Background(), nil, 0, 1, 1); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a worker without a directory: %v", err)
	}
}

func newTestRand() *sbrandRand { return newRand(42) }

// The unrolled loops store and load every word of any block size sysbench
// accepts (1 word, 2, 4, 1024), with sysbench's values.
func TestSequentialLoopsTouchEveryWord(t *testing.T) {
	for _, words := range []int{1, 2, 3, 4, 5, 1024} {
		buf := make([]uint64, words)
		writeSeq(buf)
		var want uint64
		for i, v := range buf {
			if v != uint64(words-i) {
				t.Fatalf("%d words: word %d = %d, want %d", words, i, v, words-i)
			}
			want += v
		}
		if got := readSeq(buf); got != want {
			t.Fatalf("%d words: read sum %d, want %d", words, got, want)
		}
	}
}

// fileio's progress counts blocks in files, reaches its total once, and
// never twice (its 100% line was printed twice).
func TestFileioProgressOnceToTheEnd(t *testing.T) {
	w := build(t, "fileio", "--file-num=2", "--file-total-size=2M", "--file-block-size=4K")
	var seen []uint64
	var total uint64
	if err := w.Prepare(context.Background(), system.New(t.TempDir()), 1, func(p workload.Progress) { seen = append(seen, p.Rows); total = p.TotalRows }); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("progress repeats or goes back: %v", seen)
		}
	}
	if len(seen) == 0 || seen[len(seen)-1] != total || total != 512 {
		t.Fatalf("progress %v of %d", seen, total)
	}
	if n, ok := w.(workload.Nouns); !ok {
		t.Fatal("fileio does not name its units")
	} else if unit, container := n.Nouns(); unit != "blocks" || container != "file" {
		t.Fatalf("nouns %s, %s", unit, container)
	}
}
