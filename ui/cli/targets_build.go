package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/agent"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/existing"
	"github.com/dbduel/dbduel/targets/host"
	"github.com/dbduel/dbduel/targets/kube"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/local"
	"github.com/dbduel/dbduel/targets/specs"
)

// targetContext is what building a target needs besides its SPEC.
type targetContext struct {
	runID string
	// onHost: the workload runs on the machine (cpu, memory, fileio), so
	// `host` is this machine and docker: an agent container.
	onHost       bool
	fileDir      string   // --file-dir
	workloadArgs []string // the workload's flags, for a client agent (client=netns)
	// agentBinary is the dbduel copied into agent containers.
	agentBinary func() (string, error)
	keep        bool // --keep: managed servers outlive dbduel
	// insecureEngine (--insecure-engine) lets an engine on another host
	// be reached over plain TCP.
	insecureEngine bool
	pullStall      time.Duration // --pull-stall-timeout
}

func newTargetContext(st *State, rc *runConfig, o *commonOptions) targetContext {
	return targetContext{runID: rc.runID, onHost: rc.onHost(), fileDir: o.fileDir, workloadArgs: o.workloadArgs(), agentBinary: st.agentBinary,
		keep: o.keep, insecureEngine: o.insecureEngine, pullStall: o.pullStall}
}

// buildTargets parses every --target NAME=SPEC; names must be unique.
func buildTargets(flags []string, tc targetContext, stderr io.Writer) ([]targets.Target, error) {
	seen := map[string]bool{}
	var out []targets.Target
	for _, f := range flags {
		name, spec, err := specs.SplitTargetFlag(f)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, usageErr("--target name %q is used twice", name)
		}
		seen[name] = true
		var t targets.Target
		if tc.onHost {
			t, err = newHostTarget(name, spec, tc)
		} else {
			t, err = newTarget(name, spec, tc, stderr)
		}
		if err == nil {
			err = checkEngineLink(t, tc.insecureEngine, stderr)
		}
		if err != nil {
			return nil, namedTargetErr(name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// checkEngineLink refuses an engine on another host reached over plain
// TCP, or says what crosses the link when --insecure-engine lets it.
func checkEngineLink(t targets.Target, insecure bool, stderr io.Writer) error {
	pe, ok := t.(interface{ PlainRemoteEngine() string })
	if !ok || pe.PlainRemoteEngine() == "" {
		return nil
	}
	if !insecure {
		return container.ErrPlainEngine(pe.PlainRemoteEngine())
	}
	fmt.Fprintf(stderr, "dbduel: warning: %s: %s\n", t.Name(), container.PlainEngineWarning(pe.PlainRemoteEngine()))
	return nil
}

func newTarget(name, spec string, tc targetContext, stderr io.Writer) (targets.Target, error) {
	runID := tc.runID
	switch {
	case isServerURL(spec):
		// Keys after the URL: a client beside the server, on its host's engine.
		url, keys := splitURLKeys(spec)
		bk, beside, err := container.ParseBesideKeys(keys)
		if err != nil {
			return nil, &specs.UsageError{Msg: err.Error()}
		}
		n, err := existing.New(name, url)
		if err != nil {
			return nil, err
		}
		n.SetNotices(stderr)
		if beside {
			bin, err := tc.agentBinary()
			if err != nil {
				return nil, err
			}
			return container.NewBesideClient(n, bk, keys, runID, bin, tc.workloadArgs, dialAgent), nil
		}
		return n, nil
	case strings.HasPrefix(spec, "docker:"), strings.HasPrefix(spec, "podman:"):
		var c *container.Server
		var err error
		if rest, ok := strings.CutPrefix(spec, "podman:"); ok {
			c, err = container.NewPodman(name, rest, runID)
		} else {
			c, err = container.New(name, strings.TrimPrefix(spec, "docker:"), runID)
		}
		if err != nil {
			return nil, err
		}
		c.SetProgress(stderr)
		c.SetPullStallTimeout(tc.pullStall)
		if c.ClientInNetns() {
			bin, err := tc.agentBinary()
			if err != nil {
				return nil, err
			}
			return container.NewNetnsClient(c, bin, tc.workloadArgs, dialAgent), nil
		}
		return c, nil
	case strings.HasPrefix(spec, "k8s:"):
		k, err := kube.New(name, strings.TrimPrefix(spec, "k8s:"), runID)
		if err != nil {
			return nil, err
		}
		k.SetProgress(stderr)
		// The agent pod on the server's node reads its cgroup, and runs
		// the load when the client is beside it.
		bin, err := tc.agentBinary()
		if err != nil {
			return nil, err
		}
		k.SetAgent(bin, dialAgent, groupAgents)
		if !k.ClientInCluster() {
			return k, nil
		}
		return kube.NewBesideClient(k, tc.workloadArgs), nil
	case spec == "host":
		return nil, usageErr("--target %s: host is this machine itself, for the system micro-benchmarks (cpu, memory, fileio); a database needs mysql://, postgres://, mongodb://, local: or docker:", name)
	case strings.HasPrefix(spec, "local:"):
		l, err := local.New(name, strings.TrimPrefix(spec, "local:"), runID)
		if err != nil {
			return nil, err
		}
		l.SetNotices(stderr)
		l.SetKeep(tc.keep)
		return l, nil
	case strings.HasPrefix(spec, "kept:"):
		// A target an earlier --keep run left running: its URL from the
		// state directory (password included there, redacted everywhere else).
		runID, kname, ok := strings.Cut(strings.TrimPrefix(spec, "kept:"), "/")
		if !ok || runID == "" || kname == "" {
			return nil, usageErr("--target %s: want kept:RUNID/NAME (printed by a --keep run)", name)
		}
		url, err := ledger.Kept(runID, kname)
		if err != nil {
			return nil, usageErr("--target %s: %v", name, err)
		}
		n, err := existing.New(name, url)
		if err != nil {
			return nil, err
		}
		n.SetNotices(stderr)
		return n, nil
	}
	return nil, usageErr("--target %s: unknown SPEC %q: want mysql://..., postgres://..., mongodb://..., local:BIN[,k=v], docker:IMAGE[,k=v], podman:IMAGE[,k=v], k8s:IMAGE[,k=v] or kept:RUNID/NAME", name, specs.Redact(spec))
}

// newHostTarget is a target of the system micro-benchmarks: this machine,
// or an agent container made from the image.
func newHostTarget(name, spec string, tc targetContext) (targets.Target, error) {
	switch {
	case spec == "host":
		return host.New(name, tc.fileDir), nil
	case strings.HasPrefix(spec, "docker:"):
		bin, err := tc.agentBinary()
		if err != nil {
			return nil, err
		}
		return container.NewAgent(name, strings.TrimPrefix(spec, "docker:"), tc.runID, bin, dialAgent)
	}
	return nil, usageErr("--target %s: the system micro-benchmarks (cpu, memory, fileio) run on host or docker:IMAGE[,k=v], not on %q", name, specs.Redact(spec))
}

// splitURLKeys splits a server URL from the ",key=value" keys after it:
// at the first comma after its user information, so that a password may
// hold commas (a comma after the host is written %2C).
func splitURLKeys(spec string) (url, keys string) {
	at := strings.LastIndex(spec, "@") + 1
	i := strings.Index(spec[at:], ",")
	if i < 0 {
		return spec, ""
	}
	return spec[:at+i], spec[at+i+1:]
}

// isServerURL says spec is a URL of a registered protocol (an existing server).
func isServerURL(spec string) bool {
	_, err := driver.ForURL(spec)
	return err == nil
}

// dialAgent makes the engine's client of an agent container from its
// attached stdio.
func dialAgent(ctx context.Context, stdin io.Writer, stdout io.Reader, dir string, timeout time.Duration, lost func() string) (container.AgentClient, error) {
	return agent.NewClient(ctx, stdin, stdout, dir, timeout, lost)
}

// groupAgents makes one client of a k8s: target's agents=N.
func groupAgents(members []container.AgentClient, counter container.AgentClient) (container.AgentClient, error) {
	var cs []*agent.Client
	for _, m := range append(members, counter) {
		c, ok := m.(*agent.Client)
		if !ok {
			return nil, fmt.Errorf("agents=N groups dbduel's own agents, not %T", m)
		}
		cs = append(cs, c)
	}
	return agent.NewGroup(cs[:len(members)], cs[len(members)])
}

// namedTargetErr puts the target's name in front of a SPEC error, keeping
// its kind (a usage error stays exit code 2).
func namedTargetErr(name string, err error) error {
	var ue *specs.UsageError
	if errors.As(err, &ue) {
		return &specs.UsageError{Msg: "--target " + name + ": " + ue.Msg}
	}
	return fmt.Errorf("--target %s: %w", name, err)
}
