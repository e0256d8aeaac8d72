package sys

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
)

// fileioTest is sysbench's fileio test in its synchronous mode: --file-num
// files test_file.N of --file-total-size in all, and one request (a read, a
// write or an fsync) per event, generated as sysbench generates them.
type fileioTest struct {
	base
	fileSize  int64
	openFlags int
	mu        sync.Mutex
	run       *fileRun // the run whose threads are being made
}

var testModes = []string{"seqwr", "seqrewr", "seqrd", "rndrd", "rndwr", "rndrw"}

func newFileIO(o Options) (*fileioTest, error) {
	switch {
	case o.FileNum <= 0:
		return nil, fmt.Errorf("invalid value for --file-num: %d", o.FileNum)
	case o.FileTotalSize <= 0:
		return nil, fmt.Errorf("invalid value for --file-total-size: %d", o.FileTotalSize)
	case o.FileBlockSize <= 0:
		return nil, fmt.Errorf("invalid value for --file-block-size: %d", o.FileBlockSize)
	case !contains(testModes, o.FileTestMode):
		return nil, fmt.Errorf("invalid --file-test-mode %q: want one of %s", o.FileTestMode, strings.Join(testModes, ", "))
	case o.FileIOMode != "sync":
		return nil, fmt.Errorf("--file-io-mode %s is not offered: dbduel does synchronous I/O only (sysbench's async and mmap modes are not implemented)", o.FileIOMode)
	case o.FileMergedRequests != 0:
		return nil, fmt.Errorf("--file-merged-requests is not offered: dbduel issues one request per block")
	case o.FileFsyncFreq < 0:
		return nil, fmt.Errorf("invalid value for --file-fsync-freq: %d", o.FileFsyncFreq)
	case o.FileFsyncMode != "fsync" && o.FileFsyncMode != "fdatasync":
		return nil, fmt.Errorf("invalid --file-fsync-mode %q: want fsync or fdatasync", o.FileFsyncMode)
	case o.FileRWRatio < 0:
		return nil, fmt.Errorf("invalid value for --file-rw-ratio: %g", o.FileRWRatio)
	}
	t := &fileioTest{base: base{"fileio", o}, fileSize: o.FileTotalSize / int64(o.FileNum)}
	// Every request moves exactly one block, so MiB/s is ops x block: a file
	// size that is not a whole number of blocks would need a short request.
	if t.fileSize < o.FileBlockSize || t.fileSize%o.FileBlockSize != 0 {
		return nil, fmt.Errorf("--file-total-size / --file-num = %d bytes per file, not a whole number of %d-byte blocks", t.fileSize, o.FileBlockSize)
	}
	if o.FileExtraFlags != "" {
		for _, f := range strings.Split(o.FileExtraFlags, ",") {
			switch strings.TrimSpace(f) {
			case "sync":
				t.openFlags |= os.O_SYNC
			case "dsync":
				t.openFlags |= syscall.O_DSYNC
			case "direct":
				t.openFlags |= syscall.O_DIRECT
			default:
				return nil, fmt.Errorf("invalid value for --file-extra-flags: %s (want sync, dsync, direct)", f)
			}
		}
	}
	// --file-fsync-all overrides --file-fsync-end and --file-fsync-freq.
	if t.o.FileFsyncAll {
		t.o.FileFsyncEnd, t.o.FileFsyncFreq = false, 0
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (t *fileioTest) Options() map[string]any {
	return map[string]any{"file_num": t.o.FileNum, "file_block_size": t.o.FileBlockSize, "file_total_size": t.o.FileTotalSize,
		"file_test_mode": t.o.FileTestMode, "file_io_mode": t.o.FileIOMode, "file_extra_flags": t.o.FileExtraFlags,
		"file_fsync_freq": t.o.FileFsyncFreq, "file_fsync_all": t.o.FileFsyncAll, "file_fsync_end": t.o.FileFsyncEnd,
		"file_fsync_mode": t.o.FileFsyncMode, "file_rw_ratio": t.o.FileRWRatio}
}

// BlockBytes is what one read or write request moves.
func (t *fileioTest) BlockBytes() int64 { return t.o.FileBlockSize }

// Direct says whether the files are opened with O_DIRECT.
func (t *fileioTest) Direct() bool { return t.openFlags&syscall.O_DIRECT != 0 }

func fileName(i int) string { return "test_file." + strconv.Itoa(i) }

func dirOf(x any) (string, error) {
	p, ok := x.(system.Placed)
	if !ok {
		return "", errors.New("fileio runs on host targets (host, or docker:IMAGE with dbduel's agent)")
	}
	return p.Dir(), nil
}

// Check says whether every file exists with at least its size (seqwr
// makes its own files when it starts, as sysbench's does).
func (t *fileioTest) Check(_ context.Context, db driver.DB, _ int) (workload.TableState, error) {
	dir, err := dirOf(db)
	if err != nil {
		return workload.TableState{}, err
	}
	if t.o.FileTestMode == "seqwr" {
		return workload.TableState{Reusable: true, Nothing: true}, nil
	}
	found := 0
	for i := 0; i < t.o.FileNum; i++ {
		fi, err := os.Lstat(filepath.Join(dir, fileName(i)))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return workload.TableState{}, err
		}
		found++
		if !fi.Mode().IsRegular() {
			return workload.TableState{Reason: fileName(i) + " is not a regular file"}, nil
		}
		if fi.Size() < t.fileSize {
			return workload.TableState{Reason: fmt.Sprintf("%s is %s, want at least %s (prepared with another --file-total-size or --file-num?)",
				fileName(i), workload.FormatSize(fi.Size()), workload.FormatSize(t.fileSize))}, nil
		}
	}
	switch found {
	case 0:
		return workload.TableState{Missing: true}, nil
	case t.o.FileNum:
		return workload.TableState{Reusable: true, Objects: "test files"}, nil
	}
	return workload.TableState{Reason: fmt.Sprintf("%d of %d test files exist (an interrupted prepare?)", found, t.o.FileNum)}, nil
}

// Prepare writes the files block by block and fsyncs each, as sysbench's
// prepare does; an existing file is extended.
func (t *fileioTest) Prepare(ctx context.Context, db driver.DB, _ int, progress func(workload.Progress)) error {
	dir, err := dirOf(db)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	buf := alignedBuffer(int(t.o.FileBlockSize))
	blocks := uint64(t.fileSize / t.o.FileBlockSize)
	total := blocks * uint64(t.o.FileNum)
	done := uint64(0)
	for i := 0; i < t.o.FileNum; i++ {
		name := filepath.Join(dir, fileName(i))
		f, err := t.open(name, os.O_CREATE|os.O_WRONLY)
		if err != nil {
			return err
		}
		off, err := f.Seek(0, 2)
		if err == nil {
			// Reuse what is there; write whole blocks from the last whole one.
			off -= off % t.o.FileBlockSize
			for ; off < t.fileSize && err == nil; off += t.o.FileBlockSize {
				_, err = f.WriteAt(buf, off)
				done++
				if done%256 == 0 {
					if ctx.Err() != nil {
						err = ctx.Err()
						break
					}
					progress(workload.Progress{Rows: done, TotalRows: total, Table: fileName(i)})
				}
			}
		}
		if err == nil {
			err = f.Sync() // as sysbench: the page cache does not hold the test's writes
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if whole := uint64(i+1) * blocks; whole != done || done%256 != 0 {
			done = whole
			progress(workload.Progress{Rows: done, TotalRows: total, Table: fileName(i)})
		}
	}
	return nil
}

// open opens a test file with --file-extra-flags; a filesystem that
// refuses O_DIRECT is named, not left as a bare EINVAL.
func (t *fileioTest) open(name string, flags int) (*os.File, error) {
	f, err := os.OpenFile(name, flags|t.openFlags, 0o600)
	if err != nil && t.Direct() && errors.Is(err, syscall.EINVAL) {
		return nil, fmt.Errorf("%s: the filesystem (%s) refuses O_DIRECT (--file-extra-flags=direct); use another datadir or drop the flag", filepath.Dir(name), FSType(filepath.Dir(name)))
	}
	return f, err
}

// Cleanup removes test_file.0 .. test_file.N-1 (regular files only).
func (t *fileioTest) Cleanup(_ context.Context, db driver.DB, _ int) ([]string, error) {
	dir, err := dirOf(db)
	if err != nil {
		return nil, err
	}
	var removed []string
	for i := 0; i < t.o.FileNum; i++ {
		name := filepath.Join(dir, fileName(i))
		if fi, err := os.Lstat(name); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(name); err != nil {
			return removed, err
		}
		removed = append(removed, fileName(i))
	}
	return removed, nil
}

// fileRun is the state sysbench keeps under its one mutex, for one run:
// the open files, the request generator's position and the fsync cycle.
type fileRun struct {
	mu            sync.Mutex
	files         []*os.File
	reqPerformed  uint64
	dirty         bool
	fsyncedFile   int
	currentFile   int
	position      int64
	reads, writes uint64 // done so far, for --file-rw-ratio
	open          int    // workers not yet closed
}

// NewWorker opens the files for the run when thread 0 is made (the engine
// makes threads in order) and gives every thread its own buffer.
func (t *fileioTest) NewWorker(_ context.Context, conn driver.Conn, thread, _ int, seed uint64) (workload.Worker, error) {
	dir, err := dirOf(conn)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if thread == 0 || t.run == nil {
		r := &fileRun{}
		for i := 0; i < t.o.FileNum; i++ {
			name := filepath.Join(dir, fileName(i))
			flags := os.O_RDWR
			if t.o.FileTestMode == "seqwr" {
				os.Remove(name) // sysbench's seqwr starts from empty files
				flags |= os.O_CREATE
			}
			f, err := t.open(name, flags)
			if err != nil {
				r.close()
				return nil, fmt.Errorf("%w (did the prepare step run?)", err)
			}
			r.files = append(r.files, f)
		}
		t.run = r
	}
	t.run.open++
	return &fileWorker{t: t, r: t.run, buf: alignedBuffer(int(t.o.FileBlockSize)),
		rng: sbrand.New(sbrand.DefaultParams(), seed)}, nil
}

func (r *fileRun) close() {
	for _, f := range r.files {
		f.Close()
	}
	r.files = nil
}

type fileOp int

const (
	opRead fileOp = iota
	opWrite
	opFsync
)

type fileWorker struct {
	t   *fileioTest
	r   *fileRun
	buf []byte
	rng *sbrand.Rand
}

// next is sysbench's file_get_seq_request / file_get_rnd_request.
func (w *fileWorker) next() (op fileOp, file int, pos int64) {
	t, r := w.t, w.r
	r.mu.Lock()
	defer r.mu.Unlock()
	mode := t.o.FileTestMode
	seq := strings.HasPrefix(mode, "seq")
	if seq {
		op = opRead
		if mode != "seqrd" {
			op = opWrite
		}
	} else {
		op = opRead
		switch mode {
		case "rndwr":
			op = opWrite
		case "rndrw":
			if float64(r.reads+1)/float64(r.writes+1) >= t.o.FileRWRatio {
				op = opWrite
			}
		}
	}
	// Time to fsync: each file once, then the cycle waits for a new write.
	if t.o.FileFsyncFreq != 0 && r.dirty && r.reqPerformed%uint64(t.o.FileFsyncFreq) == 0 && (!seq || op == opWrite) {
		file = r.fsyncedFile
		r.fsyncedFile++
		if r.fsyncedFile == t.o.FileNum {
			r.fsyncedFile, r.dirty = 0, false
		}
		return opFsync, file, 0
	}
	r.reqPerformed++
	if op == opWrite {
		r.dirty = true
	}
	if seq {
		if r.currentFile == t.o.FileNum {
			r.currentFile, r.position = 0, 0
		}
		file, pos = r.currentFile, r.position
		r.position += t.o.FileBlockSize
		if r.position == t.fileSize {
			r.currentFile++
			r.position = 0
		}
		return op, file, pos
	}
	total := t.fileSize * int64(t.o.FileNum)
	p := int64(w.rng.Float64() * float64(total))
	p -= p % t.o.FileBlockSize
	return op, int(p / t.fileSize), p % t.fileSize
}

func (w *fileWorker) Event(_ context.Context, c *workload.Counts) error {
	op, file, pos := w.next()
	f := w.r.files[file]
	switch op {
	case opFsync:
		if err := w.sync(f); err != nil {
			return err
		}
		c.Other++
	case opRead:
		if _, err := f.ReadAt(w.buf, pos); err != nil {
			return fmt.Errorf("read %s at %d: %w", f.Name(), pos, err)
		}
		w.r.mu.Lock()
		w.r.reads++
		w.r.mu.Unlock()
		c.Reads++
	case opWrite:
		if _, err := f.WriteAt(w.buf, pos); err != nil {
			return fmt.Errorf("write %s at %d: %w", f.Name(), pos, err)
		}
		if w.t.o.FileFsyncAll {
			if err := w.sync(f); err != nil {
				return err
			}
			c.Other++
		}
		w.r.mu.Lock()
		w.r.writes++
		w.r.mu.Unlock()
		c.Writes++
	}
	return nil
}

func (w *fileWorker) sync(f *os.File) error {
	var err error
	if w.t.o.FileFsyncMode == "fdatasync" {
		err = unix.Fdatasync(int(f.Fd()))
	} else {
		err = f.Sync()
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return nil
}

// Close fsyncs every file at the end of a writing test (--file-fsync-end,
// each thread, as sysbench's thread_done); the last thread closes the files.
func (w *fileWorker) Close(_ context.Context, c *workload.Counts) error {
	var err error
	if w.t.o.FileFsyncEnd && w.t.o.FileTestMode != "seqrd" && w.t.o.FileTestMode != "rndrd" {
		for _, f := range w.r.files {
			if err = w.sync(f); err != nil {
				break
			}
			c.Other++
		}
	}
	w.t.mu.Lock()
	w.r.open--
	if w.r.open == 0 {
		w.r.close()
		if w.t.run == w.r {
			w.t.run = nil
		}
	}
	w.t.mu.Unlock()
	return err
}

// alignedBuffer is n zero bytes at a page boundary (O_DIRECT needs it).
func alignedBuffer(n int) []byte {
	const page = 4096
	b := make([]byte, n+page)
	off := 0
	if r := int(uintptrOf(b) % page); r != 0 {
		off = page - r
	}
	return b[off : off+n : off+n]
}

// Nouns: fileio's data is blocks in files.
func (t *fileioTest) Nouns() (unit, container string) { return "blocks", "file" }
