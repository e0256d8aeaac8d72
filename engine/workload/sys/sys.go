// Package sys is sysbench 1.0.20's system micro-benchmarks: cpu (prime
// search), memory (block reads and writes) and fileio (synchronous file
// I/O), with sysbench's option names, defaults and event semantics. They
// run on the host driver: in dbduel's own process on this machine, or in
// dbduel's agent inside a container.
package sys

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/workload"
)

// Options are the three tests' options, under sysbench's names.
type Options struct {
	CPUMaxPrime int

	MemBlockSize  int64
	MemTotalSize  int64
	MemScope      string
	MemOper       string
	MemAccessMode string

	FileNum            int
	FileBlockSize      int64
	FileTotalSize      int64
	FileTestMode       string
	FileIOMode         string
	FileExtraFlags     string
	FileFsyncFreq      int
	FileFsyncAll       bool
	FileFsyncEnd       bool
	FileFsyncMode      string
	FileMergedRequests int
	FileRWRatio        float64
}

// DefaultOptions are sysbench 1.0.20's defaults, except --file-test-mode,
// which sysbench requires and dbduel defaults to rndrw.
func DefaultOptions() Options {
	return Options{
		CPUMaxPrime:  10000,
		MemBlockSize: 1 << 10, MemTotalSize: 100 << 30, MemScope: "global", MemOper: "write", MemAccessMode: "seq",
		FileNum: 128, FileBlockSize: 16384, FileTotalSize: 2 << 30, FileTestMode: "rndrw", FileIOMode: "sync",
		FileFsyncFreq: 100, FileFsyncEnd: true, FileFsyncMode: "fsync", FileRWRatio: 1.5,
	}
}

// Bind registers the options on fs.
func (o *Options) Bind(fs *pflag.FlagSet) {
	d := DefaultOptions()
	fs.IntVar(&o.CPUMaxPrime, "cpu-max-prime", d.CPUMaxPrime, "cpu: upper limit for primes generator")
	workload.SizeFlag(fs, &o.MemBlockSize, "memory-block-size", d.MemBlockSize, "memory: size of memory block for test")
	workload.SizeFlag(fs, &o.MemTotalSize, "memory-total-size", d.MemTotalSize, "memory: total size of data to transfer")
	fs.StringVar(&o.MemScope, "memory-scope", d.MemScope, "memory: memory access scope {global,local}")
	fs.StringVar(&o.MemOper, "memory-oper", d.MemOper, "memory: type of memory operations {read, write, none}")
	fs.StringVar(&o.MemAccessMode, "memory-access-mode", d.MemAccessMode, "memory: memory access mode {seq,rnd}")
	fs.IntVar(&o.FileNum, "file-num", d.FileNum, "fileio: number of files to create")
	workload.SizeFlag(fs, &o.FileBlockSize, "file-block-size", d.FileBlockSize, "fileio: block size to use in all IO operations")
	workload.SizeFlag(fs, &o.FileTotalSize, "file-total-size", d.FileTotalSize, "fileio: total size of files to create")
	fs.StringVar(&o.FileTestMode, "file-test-mode", d.FileTestMode, "fileio: test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}")
	fs.StringVar(&o.FileIOMode, "file-io-mode", d.FileIOMode, "fileio: file operations mode {sync} (sysbench's async and mmap are not offered)")
	fs.StringVar(&o.FileExtraFlags, "file-extra-flags", d.FileExtraFlags, "fileio: list of additional flags to use to open files {sync,dsync,direct}")
	fs.IntVar(&o.FileFsyncFreq, "file-fsync-freq", d.FileFsyncFreq, "fileio: do fsync() after this number of requests (0 - don't use fsync())")
	workload.BoolFlag(fs, &o.FileFsyncAll, "file-fsync-all", d.FileFsyncAll, "fileio: do fsync() after each write operation")
	workload.BoolFlag(fs, &o.FileFsyncEnd, "file-fsync-end", d.FileFsyncEnd, "fileio: do fsync() at the end of test")
	fs.StringVar(&o.FileFsyncMode, "file-fsync-mode", d.FileFsyncMode, "fileio: which method to use for synchronization {fsync, fdatasync}")
	fs.IntVar(&o.FileMergedRequests, "file-merged-requests", d.FileMergedRequests, "fileio: merge at most this number of IO requests (only 0 is offered)")
	fs.Float64Var(&o.FileRWRatio, "file-rw-ratio", d.FileRWRatio, "fileio: reads/writes ratio for combined test")
}

// args are the options as flags, for the agent that rebuilds the workload.
func (o Options) args() []string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	return []string{
		"--cpu-max-prime=" + strconv.Itoa(o.CPUMaxPrime),
		"--memory-block-size=" + strconv.FormatInt(o.MemBlockSize, 10),
		"--memory-total-size=" + strconv.FormatInt(o.MemTotalSize, 10),
		"--memory-scope=" + o.MemScope,
		"--memory-oper=" + o.MemOper,
		"--memory-access-mode=" + o.MemAccessMode,
		"--file-num=" + strconv.Itoa(o.FileNum),
		"--file-block-size=" + strconv.FormatInt(o.FileBlockSize, 10),
		"--file-total-size=" + strconv.FormatInt(o.FileTotalSize, 10),
		"--file-test-mode=" + o.FileTestMode,
		"--file-io-mode=" + o.FileIOMode,
		"--file-extra-flags=" + o.FileExtraFlags,
		"--file-fsync-freq=" + strconv.Itoa(o.FileFsyncFreq),
		"--file-fsync-all=" + onOff(o.FileFsyncAll),
		"--file-fsync-end=" + onOff(o.FileFsyncEnd),
		"--file-fsync-mode=" + o.FileFsyncMode,
		"--file-merged-requests=" + strconv.Itoa(o.FileMergedRequests),
		"--file-rw-ratio=" + strconv.FormatFloat(o.FileRWRatio, 'g', -1, 64),
	}
}

// base is what the three workloads share: no tables, the host protocol.
type base struct {
	name string
	o    Options
}

func (b base) Name() string               { return b.name }
func (b base) Protocols() []string        { return []string{system.Protocol} }
func (b base) Shape() workload.Shape      { return workload.Shape{} }
func (b base) Args() []string             { return b.o.args() }
func (b base) Validate(threads int) error { return nil }

// Check says cpu and memory have nothing to prepare: always ready.
func (b base) Check(context.Context, driver.DB, int) (workload.TableState, error) {
	return workload.TableState{Reusable: true, Nothing: true}, nil
}

func (b base) Prepare(context.Context, driver.DB, int, func(workload.Progress)) error { return nil }

func (b base) Cleanup(context.Context, driver.DB, int) ([]string, error) { return nil, nil }

// New makes the named test from o.
func New(name string, o Options) (workload.Workload, error) {
	switch name {
	case "cpu":
		if o.CPUMaxPrime <= 0 {
			return nil, fmt.Errorf("invalid value of --cpu-max-prime: %d", o.CPUMaxPrime)
		}
		return &cpuTest{base{name, o}}, nil
	case "memory":
		return newMemory(o)
	case "fileio":
		return newFileIO(o)
	}
	return nil, fmt.Errorf("unknown system test %q", name)
}

type family struct{}

func (family) Names() []string { return []string{"cpu", "memory", "fileio"} }

func (family) BindFlags(fs *pflag.FlagSet) func(string) (workload.Workload, error) {
	o := DefaultOptions()
	o.Bind(fs)
	return func(name string) (workload.Workload, error) { return New(name, o) }
}

func init() { workload.Register(family{}) }
