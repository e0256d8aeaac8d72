// Package machine is the `host` target: this machine itself, natively, for
// the system micro-benchmarks (cpu, memory, fileio). They run in dbduel's
// own process; fileio's files live in a directory of dbduel's state
// directory (or --file-dir).
package machine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/host"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/state"
	"github.com/dbduel/dbduel/targets/sysfacts"
)

// Host is this machine as a target.
type Host struct {
	name       string
	dir        string
	defaultDir bool // in the state directory: removed at Stop when empty
}

// New returns the host target; dir holds fileio's files ("" : the state
// directory's fileio/NAME).
func New(name, dir string) *Host {
	if dir == "" {
		return &Host{name: name, dir: filepath.Join(state.Dir(), "fileio", name), defaultDir: true}
	}
	return &Host{name: name, dir: dir}
}

func (h *Host) Name() string               { return h.name }
func (h *Host) Kind() string               { return "native" }
func (h *Host) SpecRedacted() string       { return "host" }
func (h *Host) Endpoint() targets.Endpoint { return targets.Endpoint{Protocol: host.Protocol} }

// Start makes the file directory.
func (h *Host) Start(context.Context) error { return os.MkdirAll(h.dir, 0o755) }

// Open gives the engine the machine as a DB.
func (h *Host) Open(ctx context.Context, maxConns int) (driver.DB, error) {
	return host.Opener(h.dir)(ctx, maxConns)
}

// Describe reads the facts that explain a figure, as this process sees them.
func (h *Host) Describe(context.Context) (result.Target, error) {
	f := sysfacts.Read(h.dir)
	return result.Target{Name: h.name, Kind: "native", SpecRedacted: "host",
		Described: result.Described{Datadir: &result.Datadir{Kind: "dir", FSType: f["fs_type"], Path: h.dir}, System: f}}, nil
}

// Sample reads dbduel's own CPU: the benchmark runs in this process.
func (h *Host) Sample(context.Context) (targets.Sample, error) {
	ns := targets.ProcCPU(os.Getpid())
	if ns == 0 {
		return targets.Sample{}, errors.New("own CPU not readable")
	}
	return targets.Sample{At: time.Now(), CPUNS: ns}, nil
}

// Restart has no server to restart.
func (h *Host) Restart(context.Context) error { return nil }

// Stop leaves the files to the workload's cleanup (or --keep) and removes
// the state directory's fileio directories once they are empty.
func (h *Host) Stop(context.Context) error {
	if h.defaultDir && os.Remove(h.dir) == nil {
		os.Remove(filepath.Dir(h.dir))
	}
	return nil
}
