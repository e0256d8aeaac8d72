// Package targets is where a database runs: an existing server (native), a
// server process dbduel manages (local) or a container (container). It knows
// nothing of workloads or screens; the engine sees a target only through its
// Endpoint.
package targets

import (
	"context"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
)

// Endpoint is how to reach a started target's server (a loopback address
// for managed targets).
type Endpoint = driver.Endpoint

// Sample is one reading of a target's resource use.
type Sample struct {
	At         time.Time
	CPUNS      uint64 // cumulative CPU time of the server (its process or its container's cgroup)
	MemBytes   uint64
	ProxyCPUNS uint64 // cumulative CPU time of the docker-proxy serving its port (0: none)
	// ProxyUnmeasured says a proxy may serve the port where dbduel cannot
	// read it (an engine on another host): not measured, never zero.
	ProxyUnmeasured bool
	// ThrottledNS is the cumulative time a CPU quota held the server back
	// (summed over its CPUs: it can exceed wall time); Periods and
	// ThrottledPeriods are the quota's enforcement periods and how many
	// throttled it.
	ThrottledNS               uint64
	Periods, ThrottledPeriods uint64
	// ClientCPUNS is the cumulative CPU of a benchmark client the target
	// runs itself (dbduel's agent in the server's network namespace; 0: none).
	ClientCPUNS uint64
	// ClientAt is when ClientCPUNS was read, when not At: an engine's
	// stats API may hand back its last collection, older than the server's.
	ClientAt time.Time
	// NetRxBytes and NetTxBytes are the cumulative bytes the server's
	// network interfaces received and sent, loopback aside (as the
	// engine's stats API counts them), when NetMeasured: a container with
	// a network of its own (on the host network they would be the host's).
	NetRxBytes, NetTxBytes uint64
	NetMeasured            bool
}

// Target is one database under test.
type Target interface {
	Name() string
	Kind() string // native|local|container
	// SpecRedacted is the SPEC with any password replaced.
	SpecRedacted() string
	// Start makes the server available (starts it if managed) and waits until it accepts connections.
	Start(ctx context.Context) error
	Endpoint() Endpoint
	// Describe reads back what is running.
	Describe(ctx context.Context) (result.Target, error)
	// Sample reads resource use; targets that cannot say return an error.
	Sample(ctx context.Context) (Sample, error)
	// Restart gives a fresh server process on the same data.
	Restart(ctx context.Context) error
	// Stop removes everything the target created (idempotent).
	Stop(ctx context.Context) error
}

// Preparer is a target with work to do before any target starts (an
// image to pull and check): dbduel prepares every target first, so one it
// cannot run is refused before another's server starts.
type Preparer interface {
	Prepare(ctx context.Context) error
}

// SelfOpener is a target that gives the engine its DB itself (the machine,
// an agent container) instead of an endpoint to dial.
type SelfOpener interface {
	Open(ctx context.Context, maxConns int) (driver.DB, error)
}

// VariablesReader is a target that reads its server's settings itself
// instead of through its protocol (the fake target).
type VariablesReader interface {
	Variables(ctx context.Context) (map[string]string, error)
}

// Reconfigurer is a managed target whose configuration files (cnf=) a
// user may edit while it runs (dbduel live --watch): Reconfigure restarts
// it on its data with what the files say now.
type Reconfigurer interface {
	ConfigFiles() []string // absolute paths
	Reconfigure(ctx context.Context) error
}

// Respecer is a managed target whose SPEC may change while it runs (dbduel
// live's SPEC editor): Respec applies the keys that can change in place
// and restarts it on its data; a SPEC that changes others is refused.
type Respecer interface {
	CheckRespec(spec string) error // Respec's refusal, without doing it
	Respec(ctx context.Context, spec string) error
}

// Diagnoser is a target that can say what became of its server after a
// failure (a managed container or process): "" when it looks fine.
type Diagnoser interface {
	Diagnose(ctx context.Context) string
}

// HealthChecker is a target whose host can lose it during a run (a
// container whose engine stops answering): Health says so.
type HealthChecker interface {
	Health(ctx context.Context) error
}

// ClientTime is when the sample's client CPU was read.
func (s Sample) ClientTime() time.Time {
	if s.ClientAt.IsZero() {
		return s.At
	}
	return s.ClientAt
}
