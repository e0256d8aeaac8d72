package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/ui/tui"
)

// liveOptions are dbduel live's own flags.
type liveOptions struct {
	slice, settle  float64 // seconds
	exportScenario string
	watch          []string
	iter           *liveIterations
	specs          []string // NAME=SPEC of each target, as last applied
}

func bindLiveFlags(fs *pflag.FlagSet, o *runOptions) {
	o.live = &liveOptions{}
	fs.Float64Var(&o.live.slice, "slice", 3, "`SECONDS` each target runs per round before the next takes its turn")
	fs.Float64Var(&o.live.settle, "settle", 1, "`SECONDS` at the start of each slice run but not counted")
	fs.StringArrayVar(&o.live.watch, "watch", nil, "`PATH` of a cnf= file (or its directory) to watch: an edit restarts the targets using it and starts an iteration (repeatable)")
	fs.StringVar(&o.live.exportScenario, "export-scenario", "", "on quit (and on x), write the explored segments as a scenario `FILE.yaml` for dbduel run -f")
}

// liveWorkloads are the workloads live runs and w cycles through: the OLTP
// scripts over sysbench's tables (bulk_insert makes tables of its own).
func liveWorkloads() []string {
	var out []string
	for _, n := range workload.Names() {
		if strings.HasPrefix(n, "oltp_") && n != "oltp_bulk_insert" {
			out = append(out, n)
		}
	}
	return out
}

// checkLive refuses what live cannot do, before any target starts.
func checkLive(st *State, wlName string, o *runOptions) error {
	if o.format != "" || o.noTUI || !isTerminal(st.Stdout) {
		return usageErr("dbduel live needs a terminal (its keys drive the load); headless, use dbduel run with --runs N and a --threads list")
	}
	return checkLiveOptions(wlName, o)
}

// checkLiveOptions is checkLive less the terminal.
func checkLiveOptions(wlName string, o *runOptions) error {
	if !slices.Contains(liveWorkloads(), wlName) {
		return usageErr("dbduel live runs the OLTP workloads (%s), not %s; use dbduel run", strings.Join(liveWorkloads(), ", "), wlName)
	}
	if strings.Contains(o.threads, ",") {
		return usageErr("dbduel live takes one --threads number (↑/↓ change it while it runs)")
	}
	if o.runsFlag != "1" || len(o.failIf) > 0 || o.warmupRuns > 0 || o.restartBetween {
		return usageErr("dbduel live runs rounds until q: --runs, --fail-if, --warmup-runs and --restart-between-runs are dbduel run's")
	}
	if o.live.slice <= 0 || o.live.settle < 0 || o.live.settle >= o.live.slice {
		return usageErr("--slice must be positive and --settle shorter than it")
	}
	o.timeS, o.warmupTime = o.live.slice, o.live.settle // what validate checks and the header shows
	return nil
}

// session makes the engine's live session from the flags, and starts
// --watch (until ctx ends).
func (l *liveOptions) session(ctx context.Context, rc *runConfig, st *startedTargets) (*engine.Live, error) {
	l.iter = newLiveIterations()
	live := &engine.Live{Slice: seconds(l.slice), Settle: seconds(l.settle),
		Control: engine.NewLiveControl(rc.threads[0], rc.engine.Rate), Restart: liveRestarter(st, l.iter)}
	if len(l.watch) > 0 {
		w, err := newConfigWatch(l.watch, st.all, l.iter)
		if err != nil {
			return nil, err
		}
		go w.run(ctx, live.Control)
	}
	return live, nil
}

// tuiLive is what the TUI's live keys need.
func (l *liveOptions) tuiLive(ctl *engine.LiveControl, o *runOptions, rc *runConfig, st *startedTargets) *tui.Live {
	names := liveWorkloads()
	// The session's workload first: w goes on from it.
	if i := slices.Index(names, rc.workload.Name()); i > 0 {
		names = append(names[i:], names[:i]...)
	}
	tl := &tui.Live{Control: ctl, Workloads: names, Workload: func(name string) (workload.Workload, error) { return o.newWorkload(name) }}
	l.specs = slices.Clone(o.targets)
	tl.Respec = func(name, spec string) error {
		return l.respec(ctl, st, name, spec)
	}
	if l.exportScenario != "" {
		tl.Export = func(r *result.Result) (string, error) {
			return l.exportScenario, writeScenario(l.exportScenario, r, o.targets, l, o.workloadArgs())
		}
	}
	return tl
}

// respec asks for a target's new SPEC from the next round: the SPEC is
// checked now (its kind, its keys), applied by the restart.
func (l *liveOptions) respec(ctl *engine.LiveControl, st *startedTargets, name, spec string) error {
	old, at := "", -1
	for i, s := range l.specs {
		if n, sp, _ := strings.Cut(s, "="); n == name {
			old, at = sp, i
		}
	}
	i := slices.IndexFunc(st.all, func(t targets.Target) bool { return t.Name() == name })
	rs, ok := targets.Target(nil), false
	if i >= 0 {
		_, ok = st.all[i].(targets.Respecer)
		rs = st.all[i]
	}
	if !ok || at < 0 {
		return fmt.Errorf("only a managed container's SPEC changes here (docker:IMAGE,memory=...)")
	}
	if err := rs.(targets.Respecer).CheckRespec(spec); err != nil {
		return err
	}
	l.iter.setSpec(name, spec)
	l.specs[at] = name + "=" + spec
	ctl.Reconfigure([]string{name}, fmt.Sprintf("iteration %d: %s %s", l.iter.next(), name, specChange(old, spec)))
	return nil
}

// specChange names the keys that differ between two SPECs ("memory=2g→4g").
func specChange(old, cur string) string {
	keys := func(s string) map[string]string {
		m := map[string]string{}
		for _, kv := range strings.Split(s, ",")[1:] {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		return m
	}
	o, c := keys(old), keys(cur)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		if o[k] != c[k] {
			out = append(out, fmt.Sprintf("%s=%s→%s", k, orNone(o[k]), c[k]))
		}
	}
	if len(out) == 0 {
		return "restarted (SPEC unchanged)"
	}
	return strings.Join(out, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// writeLiveExport writes --export-scenario on quit.
func writeLiveExport(o *runOptions, r *result.Result, say func(string, ...any)) {
	if o.live == nil || o.live.exportScenario == "" || r == nil || len(r.Segments) == 0 {
		return
	}
	if err := writeScenario(o.live.exportScenario, r, o.targets, o.live, o.workloadArgs()); err != nil {
		say("dbduel: --export-scenario: %v\n", err)
		return
	}
	say("dbduel: the explored segments are in %s (dbduel run -f %s repeats them)\n", o.live.exportScenario, o.live.exportScenario)
}

// maxExportRuns bounds an exported plan's blocks: a long live session
// would otherwise become an hours-long headless plan (--runs overrides).
const maxExportRuns = 10

// writeScenario writes the segments of a live result as a scenario file:
// the threads they ran as a sweep, a run per slice and a block per round
// (the most rounds a segment had, 2 to maxExportRuns), the workload options set on the command
// line. A plan has one workload and one rate: the first segment's, and the
// others are listed in comments.
func writeScenario(path string, r *result.Result, specs []string, l *liveOptions, wlArgs []string) error {
	var b strings.Builder
	first := r.Segments[0]
	fmt.Fprintf(&b, "# Exported by dbduel live (%s): the segments it explored, as a plan for\n# dbduel run -f %s\n", r.StartedAt.Format("2006-01-02 15:04"), path)
	var threads []string
	rounds := 2
	for k, s := range r.Segments {
		fmt.Fprintf(&b, "#   segment %d: %s · %s · %d threads", k+1, s.WhatChanged, s.Workload, s.Threads)
		if s.Rate > 0 {
			fmt.Fprintf(&b, " · rate %.0f/s", s.Rate)
		}
		fmt.Fprintf(&b, " · %d round(s)\n", s.Rounds)
		if s.Workload != first.Workload || s.Rate != first.Rate {
			b.WriteString("#     (not in this plan: its workload or rate differs from segment 1's)\n")
			continue
		}
		if t := fmt.Sprint(s.Threads); !slices.Contains(threads, t) {
			threads = append(threads, t)
		}
		rounds = max(rounds, s.Rounds)
	}
	fmt.Fprintf(&b, "workload: %s\ntargets:\n", first.Workload)
	for _, t := range specs {
		fmt.Fprintf(&b, "  - %s\n", strconv.Quote(t))
	}
	if len(wlArgs) > 0 {
		b.WriteString("options:\n")
		for _, a := range wlArgs {
			k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			fmt.Fprintf(&b, "  %s: %s\n", strings.ReplaceAll(k, "-", "_"), strconv.Quote(v))
		}
	}
	rounds = min(rounds, maxExportRuns)
	fmt.Fprintf(&b, "plan:\n  threads: [%s]\n  time: %g\n  warmup_time: %g\n  runs: %d\n", strings.Join(threads, ", "), l.slice, l.settle, rounds)
	if first.Rate > 0 {
		fmt.Fprintf(&b, "  rate: %g\n", first.Rate)
	}
	// The targets may carry passwords: the file is the user's alone.
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
