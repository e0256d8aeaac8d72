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

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/specs"
	"github.com/dbduel/dbduel/ui/tui"
)

// liveOptions are dbduel live's flags: the shared ones, the slices, and
// what is watched and exported; and the SPECs as the session changes them.
type liveOptions struct {
	commonOptions
	slice, settle  float64 // seconds
	exportScenario string
	watch          []string
	iter           *liveIterations
	// specs is NAME=SPEC of each target as last applied; the editor and
	// --watch both change it (mu).
	mu    sync.Mutex
	specs []string
}

func newLiveCmd(st *State) *cobra.Command {
	o := &liveOptions{}
	return familyCommand(st, "live", "Explore at the terminal: targets take turns in short slices, keys change the load (docs/live.md)", o,
		func(fs *pflag.FlagSet) { bindLiveFlags(fs, o) })
}

func bindLiveFlags(fs *pflag.FlagSet, o *liveOptions) {
	bindCommonFlags(fs, &o.commonOptions)
	o.slice, o.settle = 3, 1
	fs.Var((*secondsValue)(&o.slice), "slice", "`SECONDS` (or a duration: 3s, 500ms) each target runs per round before the next takes its turn")
	fs.Var((*secondsValue)(&o.settle), "settle", "`SECONDS` (or a duration) at the start of each slice run but not counted")
	fs.StringArrayVar(&o.watch, "watch", nil, "`PATH` to watch: a cnf= file (or its directory), or the -f scenario or --compose file; an edit restarts the targets it changes and starts an iteration (repeatable)")
	fs.StringVar(&o.exportScenario, "export-scenario", "", "on quit (and on x), write the explored segments as a scenario `FILE.yaml` for dbduel run -f")
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

// check refuses what live cannot do, before any target starts, and makes
// each run a slice: --slice long, its first --settle not counted.
func (o *liveOptions) check(st *State, rc *runConfig) error {
	if !o.dryRun && (o.format != "" || o.noTUI || !isTerminal(st.Stdout)) {
		return usageErr("dbduel live needs a terminal (its keys drive the load); headless, use dbduel run with --runs N and a --threads list")
	}
	return o.checkSlices(rc)
}

// checkSlices is check less the terminal.
func (o *liveOptions) checkSlices(rc *runConfig) error {
	if wl := rc.workload.Name(); !slices.Contains(liveWorkloads(), wl) {
		return usageErr("dbduel live runs the OLTP workloads (%s), not %s; use dbduel run", strings.Join(liveWorkloads(), ", "), wl)
	}
	if len(rc.points) > 1 {
		return usageErr("dbduel live takes one --threads number and one --table-size (↑/↓ change the threads while it runs)")
	}
	if o.slice <= 0 || o.settle < 0 || o.settle >= o.slice {
		return usageErr("--slice must be positive and --settle shorter than it")
	}
	rc.load.Time, rc.load.Warmup, rc.load.Events = seconds(o.slice), seconds(o.settle), 0
	return nil
}

// dryRun says what the session will do.
func (o *liveOptions) printDryRun(st *State, rc *runConfig, _ []targets.Target) {
	fmt.Fprintf(st.Stdout, "live: rounds of one %gs slice per target (the first %gs not counted), in an order shuffled per round (seed %d), %d thread(s) to start with, until q\n",
		o.slice, o.settle, rc.seed, rc.points[0].Threads)
}

// do runs rounds until the user quits, then writes --export-scenario.
func (o *liveOptions) do(ctx context.Context, st *State, rc *runConfig, ts *startedTargets) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel() // ends --watch
	sess, ctl, err := o.session(runCtx, st, rc, ts)
	if err != nil {
		return err
	}
	out := play(ctx, st, rc, &o.commonOptions, sess, ts, screen{view: tui.LiveView{Control: o.keys(ctl, rc, ts)}})
	o.writeExport(out.res, func(f string, a ...any) { fmt.Fprintf(st.Stderr, f, a...) })
	return finish(out, &o.commonOptions, st.Stderr)
}

// session is dbduel live's session: rounds on the point the flags give,
// steered by the keys and --watch (which runs until ctx ends).
func (o *liveOptions) session(ctx context.Context, state *State, rc *runConfig, st *startedTargets) (engine.Session, *engine.LiveControl, error) {
	o.iter = newLiveIterations()
	o.specs = slices.Clone(o.targets)
	ctl := engine.NewLiveControl(rc.points[0])
	sched := engine.NewLive(ctl, liveRestarter(st, o.iter), rc.seed)
	if len(o.watch) > 0 {
		specFile, reload := o.specSource(ctx, state)
		w, err := newConfigWatch(o.watch, st.all, o.iter, specFile, reload)
		if err != nil {
			return engine.Session{}, nil, err
		}
		go w.run(ctx, ctl, func(specs map[string]string, cause string) error {
			return o.respecAll(ctl, st, specs, cause)
		})
	}
	return newSession(rc, &o.commonOptions, sched, st, state.Stderr), ctl, nil
}

// specSource is the file the session's targets came from (-f, or
// --compose) and how to read their SPECs from it again ("" and nil when
// they came from --target alone).
func (l *liveOptions) specSource(ctx context.Context, state *State) (string, func() (map[string]string, error)) {
	asMap := func(list []string) map[string]string {
		m := map[string]string{}
		for _, t := range list {
			n, s, _ := strings.Cut(t, "=")
			m[n] = s
		}
		return m
	}
	switch {
	case l.compose != "":
		return l.compose, func() (map[string]string, error) {
			ci, err := loadCompose(ctx, l.compose, l.services, state.Environ())
			if err != nil {
				return nil, err
			}
			return asMap(ci.targets), nil
		}
	case l.file != "" && !l.flags.Changed("target"):
		return l.file, func() (map[string]string, error) {
			sc, err := loadScenario(l.file, state.LookupEnv)
			if err != nil {
				return nil, err
			}
			return asMap(sc.targets), nil
		}
	}
	return "", nil
}

// liveKeys is what the TUI's live keys reach: the engine's control, w's
// cycle of workloads, the SPEC editor and x's scenario export
// (tui.LiveControl).
type liveKeys struct {
	*engine.LiveControl
	o         *liveOptions
	st        *startedTargets
	workloads []string // w's cycle; the session's first
}

func (o *liveOptions) keys(ctl *engine.LiveControl, rc *runConfig, st *startedTargets) *liveKeys {
	names := liveWorkloads()
	// The session's workload first: w goes on from it.
	if i := slices.Index(names, rc.workload.Name()); i > 0 {
		names = append(names[i:], names[:i]...)
	}
	return &liveKeys{LiveControl: ctl, o: o, st: st, workloads: names}
}

// NextWorkload runs the workload after the current one from the next round.
func (k *liveKeys) NextWorkload() (string, error) {
	if len(k.workloads) < 2 {
		return "", errors.New("no other workload to switch to")
	}
	cur := k.Settings().Workload.Name()
	next := k.workloads[0]
	for i, n := range k.workloads {
		if n == cur {
			next = k.workloads[(i+1)%len(k.workloads)]
		}
	}
	wl, err := k.o.newWorkload(next)
	if err != nil {
		return "", err
	}
	k.SetWorkload(wl)
	return next, nil
}

// Respec asks for target name's new SPEC from the next round.
func (k *liveKeys) Respec(name, spec string) error {
	return k.o.respecAll(k.LiveControl, k.st, map[string]string{name: spec}, "")
}

// ExportScenario writes --export-scenario now ("" when none was named).
func (k *liveKeys) ExportScenario(r *result.Result) (string, error) {
	o := k.o
	if o.exportScenario == "" {
		return "", nil
	}
	return o.exportScenario, writeScenario(o.exportScenario, r, o.targets, o, o.workloadArgs())
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

// specChange names the keys that differ between two SPECs
// ("memory=2g→4g"); an env= key is named, its values never shown ("env
// MYSQL_PWD changed").
func specChange(old, cur string) string {
	keys := func(s string) map[string]string {
		m := map[string]string{}
		_, kvs, _ := specs.SplitSpec(s)
		for _, kv := range kvs {
			if kv.Key == "env" {
				k, v, _ := strings.Cut(kv.Value, "=")
				m["env "+k] = v
				continue
			}
			m[kv.Key] = kv.Value
		}
		return m
	}
	o, c := keys(old), keys(cur)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(c)) {
		switch {
		case o[k] == c[k]:
		case strings.HasPrefix(k, "env "):
			out = append(out, k+" changed")
		default:
			out = append(out, fmt.Sprintf("%s=%s→%s", k, orNone(o[k]), c[k]))
		}
	}
	if len(out) == 0 {
		return "restarted (SPEC unchanged)"
	}
	return driver.Redact(strings.Join(out, " "))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
