// Package host is the `host` target: this machine itself, natively, for
// the system micro-benchmarks (cpu, memory, fileio). They run in dbduel's
// own process; fileio's files live in a directory of dbduel's state
// directory (or --file-dir).
package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/hostinfo"
	"github.com/dbduel/dbduel/targets/ledger"
)

// Machine is this machine as a target.
type Machine struct {
	name       string
	dir        string
	defaultDir bool // in the state directory: removed at Stop when empty
}

// New returns the host target; dir holds fileio's files ("" : the state
// directory's fileio/NAME).
func New(name, dir string) *Machine {
	if dir == "" {
		return &Machine{name: name, dir: filepath.Join(ledger.Dir(), "fileio", name), defaultDir: true}
	}
	return &Machine{name: name, dir: dir}
}

func (h *Machine) Name() string               { return h.name }
func (h *Machine) Kind() string               { return "native" }
func (h *Machine) SpecRedacted() string       { return "host" }
func (h *Machine) Endpoint() targets.Endpoint { return targets.Endpoint{Protocol: system.Protocol} }

// Start makes the file directory: in the state directory (checked: no
// one else may have put a link there), or --file-dir.
func (h *Machine) Start(context.Context) error {
	if h.defaultDir {
		if _, err := ledger.Ensure(); err != nil {
			return err
		}
	}
	return os.MkdirAll(h.dir, 0o755)
}

// Open gives the engine the machine as a DB.
func (h *Machine) Open(ctx context.Context, maxConns int) (driver.DB, error) {
	return system.Opener(h.dir)(ctx, maxConns)
}

// Describe reads the facts that explain a figure, as this process sees them.
func (h *Machine) Describe(context.Context) (result.Target, error) {
	f := hostinfo.ReadFacts(h.dir)
	return result.Target{Name: h.name, Kind: "native", SpecRedacted: "host",
		Described: result.Described{Datadir: &result.Datadir{Kind: "dir", FSType: f["fs_type"], Path: h.dir}, System: f}}, nil
}

// Sample reads dbduel's own CPU: the benchmark runs in this process.
func (h *Machine) Sample(context.Context) (targets.Sample, error) {
	ns := hostinfo.ProcCPU(os.Getpid())
	if ns == 0 {
		return targets.Sample{}, errors.New("own CPU not readable")
	}
	return targets.Sample{At: time.Now(), CPUNS: ns}, nil
}

// Restart has no server to restart.
func (h *Machine) Restart(context.Context) error { return nil }

// Stop leaves the files to the workload's cleanup (or --keep) and removes
// the state directory's fileio directories once they are empty.
func (h *Machine) Stop(context.Context) error {
	if h.defaultDir && os.Remove(h.dir) == nil {
		os.Remove(filepath.Dir(h.dir))
	}
	return nil
}
