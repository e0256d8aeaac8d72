package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// specs is NAME=SPEC of each target as last applied; the editor and
	// --watch both change it (mu).
	mu    sync.Mutex
	specs []string
}

func bindLiveFlags(fs *pflag.FlagSet, o *runOptions) {
	o.live = &liveOptions{}
	o.live.slice, o.live.settle = 3, 1
	fs.Var((*secondsValue)(&o.live.slice), "slice", "`SECONDS` (or a duration: 3s, 500ms) each target runs per round before the next takes its turn")
	fs.Var((*secondsValue)(&o.live.settle), "settle", "`SECONDS` (or a duration) at the start of each slice run but not counted")
	fs.StringArrayVar(&o.live.watch, "watch", nil, "`PATH` to watch: a cnf= file (or its directory), or the -f scenario or --compose file; an edit restarts the targets it changes and starts an iteration (repeatable)")
	fs.StringVar(&o.live.exportScenario, "export-scenario", "", "on quit (and on x), write the explored segments as a scenario `FILE.yaml` for dbduel run -f")
}

// secondsValue is a flag of seconds that takes a duration too ("3s").
type secondsValue float64

func (v *secondsValue) String() string { return strconv.FormatFloat(float64(*v), 'g', -1, 64) }
func (v *secondsValue) Type() string   { return "seconds" }
func (v *secondsValue) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil {
		*v = secondsValue(d.Seconds())
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want seconds (3) or a duration (3s, 500ms)")
	}
	*v = secondsValue(f)
	return nil
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
	if !o.dryRun && (o.format != "" || o.noTUI || !isTerminal(st.Stdout)) {
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
func (l *liveOptions) session(ctx context.Context, state *State, rc *runConfig, o *runOptions, st *startedTargets) (*engine.Live, error) {
	l.iter = newLiveIterations()
	l.specs = slices.Clone(o.targets)
	live := &engine.Live{Slice: seconds(l.slice), Settle: seconds(l.settle),
		Control: engine.NewLiveControl(rc.threads[0], rc.engine.Rate), Restart: liveRestarter(st, l.iter)}
	if len(l.watch) > 0 {
		specFile, reload := l.specSource(ctx, state, o)
		w, err := newConfigWatch(l.watch, st.all, l.iter, specFile, reload)
		if err != nil {
			return nil, err
		}
		go w.run(ctx, live.Control, func(specs map[string]string, cause string) error {
			return l.respecAll(live.Control, st, specs, cause)
		})
	}
	return live, nil
}

// specSource is the file the session's targets came from (-f, or
// --compose) and how to read their SPECs from it again ("" and nil when
// they came from --target alone).
func (l *liveOptions) specSource(ctx context.Context, state *State, o *runOptions) (string, func() (map[string]string, error)) {
	asMap := func(list []string) map[string]string {
		m := map[string]string{}
		for _, t := range list {
			n, s, _ := strings.Cut(t, "=")
			m[n] = s
		}
		return m
	}
	switch {
	case o.compose != "":
		return o.compose, func() (map[string]string, error) {
			ci, err := loadCompose(ctx, o.compose, o.services, o.flags, state.Environ())
			if err != nil {
				return nil, err
			}
			return asMap(ci.targets), nil
		}
	case o.file != "" && !o.flags.Changed("target"):
		return o.file, func() (map[string]string, error) {
			sc, err := loadScenario(o.file, o.flags, state.LookupEnv)
			if err != nil {
				return nil, err
			}
			return asMap(sc.targets), nil
		}
	}
	return "", nil
}

// tuiLive is what the TUI's live keys need.
func (l *liveOptions) tuiLive(ctl *engine.LiveControl, o *runOptions, rc *runConfig, st *startedTargets) *tui.Live {
	names := liveWorkloads()
	// The session's workload first: w goes on from it.
	if i := slices.Index(names, rc.workload.Name()); i > 0 {
		names = append(names[i:], names[:i]...)
	}
	tl := &tui.Live{Control: ctl, Workloads: names, Workload: func(name string) (workload.Workload, error) { return o.newWorkload(name) }}
	tl.Respec = func(name, spec string) error {
		return l.respecAll(ctl, st, map[string]string{name: spec}, "")
	}
	if l.exportScenario != "" {
		tl.Export = func(r *result.Result) (string, error) {
			return l.exportScenario, writeScenario(l.exportScenario, r, o.targets, l, o.workloadArgs())
		}
	}
	return tl
}

// respecAll asks for targets' new SPECs from the next round, as one
// iteration: each SPEC is checked now (the target's kind, the keys that
// may change), applied by the restart; an unchanged SPEC is left alone.
// cause names where they came from ("" for the editor).
func (l *liveOptions) respecAll(ctl *engine.LiveControl, st *startedTargets, specs map[string]string, cause string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var names, changes []string
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		spec := specs[name]
		at, i := l.specIndex(name), st.index(name)
		if at < 0 || i < 0 {
			return fmt.Errorf("%s: no such target in this session (a new target needs dbduel run)", name)
		}
		_, old, _ := strings.Cut(l.specs[at], "=")
		if old == spec {
			continue
		}
		rs, ok := st.all[i].(targets.Respecer)
		if !ok {
			return fmt.Errorf("%s: only a managed container's SPEC changes here (docker:IMAGE,memory=...)", name)
		}
		if err := rs.CheckRespec(spec); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		names, changes = append(names, name), append(changes, name+" "+specChange(old, spec))
	}
	if len(names) == 0 {
		if cause == "" {
			return errors.New("the SPEC is unchanged")
		}
		return nil
	}
	k := l.iter.next()
	for _, name := range names {
		l.iter.setSpec(name, specs[name])
		l.iter.record(k, name, specs[name], nil)
		l.specs[l.specIndex(name)] = name + "=" + specs[name]
	}
	what := strings.Join(changes, ", ")
	if cause != "" {
		what = cause + " (" + what + ")"
	}
	ctl.Reconfigure(names, fmt.Sprintf("iteration %d: %s", k, what))
	return nil
}

// specIndex is where target name is in l.specs (-1: nowhere).
func (l *liveOptions) specIndex(name string) int {
	return slices.IndexFunc(l.specs, func(s string) bool { n, _, _ := strings.Cut(s, "="); return n == name })
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
