package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/explain"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
)

// runVerb starts the targets rc and the verb's flags name, does the verb,
// stops the targets, and turns the outcome into an exit code.
func runVerb(ctx context.Context, state *State, rc *runConfig, v familyVerb) error {
	o := v.shared()
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if o.memProfile != "" {
		// Written once now: a path that cannot be written is refused
		// before anything runs.
		if err := writeHeapProfile(o.memProfile); err != nil {
			return usageErr("--memprofile: %v", err)
		}
	}
	ts, err := buildTargets(o.targets, newTargetContext(state, rc, o), state.Stderr)
	if err != nil {
		return err
	}
	return conduct(ctx, state, rc, v, ts)
}

// conduct starts the targets, does the verb and stops the targets on
// every exit path.
func conduct(ctx context.Context, state *State, rc *runConfig, v familyVerb, ts []targets.Target) error {
	stderr, o := state.Stderr, v.shared()
	// Managed targets are removed on every exit path unless --keep, which
	// says where each kept one is.
	defer stopTargets(ctx, ts, o.keep, stderr)
	if o.keep {
		defer announceKept(ts, rc.runID, stderr)
	}
	st, err := startTargets(ctx, ts, rc, stderr)
	if err != nil {
		return err
	}
	if hosts := st.hosts(); len(hosts) > 1 && !o.allowMixedHosts {
		return usageErr("the targets run on different machines (%s): the comparison would measure two machines, not where the server runs; --allow-mixed-hosts runs it anyway", strings.Join(hosts, ", "))
	}
	if o.strictParity && st.differ() {
		return &exitError{code: exitParity, err: errors.New("--strict-parity: the targets differ in version or configuration (see above); nothing was run")}
	}
	return v.do(ctx, state, rc, st)
}

// play runs sess with the TUI or headless and says how it ended; the
// verb finishes it (finish, and its own judgement).
func play(ctx context.Context, state *State, rc *runConfig, o *commonOptions, sess engine.Session, st *startedTargets, scr screen) outcome {
	stdout, stderr := state.Stdout, state.Stderr
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	events := make(chan engine.Event, 64)
	go engine.Run(runCtx, sess, st.engine, events) // its last event carries the result
	var out outcome
	if o.format == "" && !o.noTUI && isTerminal(stdout) {
		out = runTUI(ctx, rc, o, st, scr, events, cancelRun, stdout, stderr)
	} else {
		out = runHeadless(ctx, rc, o, st, events, stdout, stderr)
	}
	out.err = explainFailure(ctx, out, st)
	if out.res != nil && out.res.Explain != nil && o.format != "json" {
		fmt.Fprint(stdout, "\n"+explain.Waterfall(out.res.Explain))
	}
	return out
}

// explainFailure turns how a plan ended into words that name the cause: who
// stopped it and where, or what became of a managed server that failed
// (a container that exited or was OOM-killed, a process that died), instead
// of only what the client saw ("lost the connection").
func explainFailure(ctx context.Context, out outcome, st *startedTargets) error {
	var te *engine.TargetError
	if !errors.As(out.err, &te) {
		return out.err
	}
	if errors.Is(out.err, context.Canceled) {
		who := "by the user (q)"
		switch {
		case errors.Is(context.Cause(ctx), ErrStdioClosed):
			who = "because stdout or stderr was closed"
		case !out.userStopped:
			who = "by a signal"
		}
		return &exitError{code: exitInterrupted, err: fmt.Errorf("stopped %s during %s of target %s; that run is partial and left out of the verdict", who, te.Where, te.Target)}
	}
	if out.diagnosis != "" && !strings.Contains(te.Err.Error(), out.diagnosis) {
		return fmt.Errorf("target %s, %s: %s (the client saw: %v)", te.Target, te.Where, out.diagnosis, te.Err)
	}
	return out.err
}

// outcome is how a plan ended: the final result, the error that ended it
// early, whether the user stopped it, and what became of the failed target.
type outcome struct {
	res         *result.Result
	err         error
	userStopped bool
	diagnosis   string
}

// diagnose asks the target a failure names what became of it (while it
// still exists: before the targets are stopped).
func diagnose(ctx context.Context, err error, st *startedTargets) string {
	var te *engine.TargetError
	if !errors.As(err, &te) || errors.Is(err, context.Canceled) {
		return ""
	}
	for _, t := range st.all {
		if d, ok := t.(targets.Diagnoser); ok && t.Name() == te.Target {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			return d.Diagnose(dctx)
		}
	}
	return ""
}

// finish writes --out and maps the outcome to an exit code.
func finish(out outcome, o *commonOptions, stderr io.Writer) error {
	res := out.res
	if o.out != "" {
		if err := result.WriteFile(o.out, res); err != nil {
			return err
		}
		if !res.Complete {
			fmt.Fprintf(stderr, "dbduel: partial result (complete: false) written to %s\n", o.out)
		}
	}
	var refused *engine.ErrTablesRefused
	switch {
	case errors.As(out.err, &refused):
		return &exitError{code: exitFailed, err: out.err}
	case out.userStopped && !res.Complete && out.err == nil:
		return &exitError{code: exitInterrupted, err: errors.New("stopped by the user before the plan finished")}
	}
	return out.err
}

// restarter restarts a managed target before each of its runs
// (--restart-between-runs).
func restarter(st *startedTargets) func(context.Context, string) error {
	return func(ctx context.Context, name string) error {
		for _, t := range st.all {
			if t.Name() == name && t.Kind() != "native" {
				return t.Restart(ctx)
			}
		}
		return nil // an existing server is not dbduel's to restart
	}
}

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, usageErr("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeHeapProfile replaces path with the heap as of the last collection
// (in use and allocated since the start), through result.WriteAtomic (a
// link at path is replaced, never followed).
func writeHeapProfile(path string) error {
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return err
	}
	return result.WriteAtomic(path, buf.Bytes(), 0o600)
}

// checkThresholds turns --fail-if conditions into an exit code: 3 when a
// target is found past a threshold (Holm's step-down at family-wise alpha
// over the comparisons it judges; a crossed one wins over any other), 5
// when a CI straddles one or lies past it only unadjusted (inconclusive:
// more blocks would settle it), 0 otherwise.
func checkThresholds(ths []stats.Threshold, cs []result.Comparison, alpha float64, stderr io.Writer) error {
	var crossed, straddled []string
	for _, th := range ths {
		j := th.Judge(cs, alpha)
		for _, u := range j.Unjudged {
			fmt.Fprintf(stderr, "dbduel: --fail-if %s: %s has no confidence interval (use --runs 2 or more); not judged\n", th.Text, u.Target)
		}
		for _, x := range j.Crossed {
			crossed = append(crossed, fmt.Sprintf("%s %s %+.1f%% [%+.1f%%, %+.1f%%] crosses %s", x.Target, x.Metric, x.DeltaPct, x.CILowPct, x.CIHighPct, th.Text))
		}
		for _, x := range j.Straddled {
			straddled = append(straddled, fmt.Sprintf("inconclusive: %s %s %+.1f%%, the CI [%+.1f%%, %+.1f%%] straddles %s; %s",
				x.Target, x.Metric, x.DeltaPct, x.CILowPct, x.CIHighPct, th.Text, th.Settle(x)))
		}
		for _, x := range j.Unsettled {
			straddled = append(straddled, fmt.Sprintf("inconclusive: %s %s %+.1f%%, the CI [%+.1f%%, %+.1f%%] lies past %s alone, but not after Holm's adjustment over %d comparisons at α %g; %s",
				x.Target, x.Metric, x.DeltaPct, x.CILowPct, x.CIHighPct, th.Text, j.Family, alpha, th.Settle(x)))
		}
	}
	if len(crossed) > 0 {
		for _, s := range straddled {
			fmt.Fprintf(stderr, "dbduel: --fail-if: %s\n", s)
		}
		return &exitError{code: exitThreshold, err: fmt.Errorf("--fail-if: %s", strings.Join(crossed, "; "))}
	}
	if len(straddled) > 0 {
		return &exitError{code: exitUndecided, err: fmt.Errorf("--fail-if: %s", strings.Join(straddled, "; "))}
	}
	return nil
}

// checkWritable fails early when --out cannot be written, without leaving a file.
func checkWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("is a directory")
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".dbduel-check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// removeHostFiles removes the system tests' files from every target that
// started (the agent's, before its container goes).
func removeHostFiles(ctx context.Context, rc *runConfig, st *startedTargets, stderr io.Writer) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, t := range st.engine {
		if _, err := engine.Cleanup(cctx, rc.workload, rc.threads(), t); err != nil {
			fmt.Fprintf(stderr, "dbduel: %s: removing the test files: %v\n", t.Name, err)
		}
	}
}

// announceKept says, for each managed target --keep left running, how to
// reach it (its URL, password redacted; the whole URL in a file of mode
// 0600) and how to remove it.
func announceKept(ts []targets.Target, runID string, stderr io.Writer) {
	for _, t := range ts {
		if t.Kind() != "local" && t.Kind() != "container" {
			continue
		}
		ep := t.Endpoint()
		if ep.Host == "" || ep.Port == 0 {
			continue
		}
		path, err := ledger.Keep(runID, t.Name(), ep.URL())
		if err != nil {
			fmt.Fprintf(stderr, "dbduel: kept %s, but could not write its URL: %v\n", t.Name(), err)
			continue
		}
		fmt.Fprintf(stderr, "dbduel: kept %s running: %s (with its password in %s; --target NAME=kept:%s/%s reaches it; dbduel clean --run %s removes it)\n",
			t.Name(), ep.Redacted(), path, runID, t.Name(), runID)
	}
}
