// Package targets is where a database runs: an existing server (native), a
// server process dbduel manages (local) or a container (container). It knows
// nothing of workloads or screens; the engine sees a target only through its
// Endpoint.
package targets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"regexp"
	"strings"
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

// HostOf is "local" for a loopback or unix-socket address (a server or an
// engine on this machine), else the address's host.
func HostOf(addr string) string {
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "tcp://"), "unix://")
	if strings.HasPrefix(addr, "/") || addr == "" {
		return "local"
	}
	h := addr
	if hp, _, err := net.SplitHostPort(addr); err == nil {
		h = hp
	}
	if ip := net.ParseIP(h); (ip != nil && ip.IsLoopback()) || h == "localhost" {
		return "local"
	}
	return h
}

// HealthChecker is a target whose host can lose it during a run (a
// container whose engine stops answering): Health says so.
type HealthChecker interface {
	Health(ctx context.Context) error
}

// UsageError is a SPEC or flag the user got wrong (exit code 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error { return &UsageError{Msg: fmt.Sprintf(format, args...)} }

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// SplitTargetFlag splits NAME=SPEC and checks NAME.
func SplitTargetFlag(s string) (name, spec string, err error) {
	name, spec, ok := strings.Cut(s, "=")
	if !ok || spec == "" {
		return "", "", usagef("--target %q: want NAME=SPEC, e.g. native=mysql://root:pw@127.0.0.1:3306/sbtest", RedactSpec(s))
	}
	if !nameRE.MatchString(name) {
		return "", "", usagef("--target name %q: want [a-z][a-z0-9_-]*", name)
	}
	return name, spec, nil
}

// RedactSpec hides a password in a SPEC (for messages).
func RedactSpec(s string) string { return driver.RedactURL(s) }

// OneLine folds a multi-line message (a server's start-up error, a Docker
// error) into one line, whole: dbduel's errors are one line each.
func OneLine(s string) string { return driver.OneLine(s) }

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// NewPassword returns a random password for a generated account.
func NewPassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
