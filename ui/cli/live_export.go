package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dbduel/dbduel/engine/result"
)

// writeExport writes --export-scenario on quit.
func (o *liveOptions) writeExport(r *result.Result, say func(string, ...any)) {
	if o.exportScenario == "" || r == nil || len(r.Segments) == 0 {
		return
	}
	if err := writeScenario(o.exportScenario, r, o.targets, o, o.workloadArgs()); err != nil {
		say("dbduel: --export-scenario: %v\n", err)
		return
	}
	say("dbduel: the explored segments are in %s (dbduel run -f %s repeats them)\n", o.exportScenario, o.exportScenario)
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
	targets, files := exportTargets(path, specs, l.iter)
	for _, t := range targets {
		fmt.Fprintf(&b, "  - %s\n", strconv.Quote(t))
	}
	for f, data := range files {
		if err := result.WriteAtomic(f, data, 0o600); err != nil {
			return err
		}
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
	return result.WriteAtomic(path, []byte(b.String()), 0o600) // its SPECs may hold passwords
}

// exportTargets are the session's targets as a plan's: each as it started
// and, for every iteration that changed it, NAME-itK with the SPEC and the
// cnf= files it ran with then. A watched cnf= file's contents of each
// iteration are written beside the scenario (PATH.NAME.itK.cnf): the file
// itself holds only the last edit. files maps those paths to contents.
func exportTargets(path string, specs []string, iter *liveIterations) (targets []string, files map[string][]byte) {
	files = map[string][]byte{}
	if iter == nil {
		return specs, files
	}
	initial, records := iter.history()
	base := strings.TrimSuffix(path, filepath.Ext(path))
	for _, t := range specs {
		name, spec, _ := strings.Cut(t, "=")
		contents := map[string][]byte{} // the cnf= files as this target ran them
		withFiles := func(spec string, k int) string {
			return replaceCnf(spec, func(abs string) string {
				data, ok := contents[abs]
				if !ok {
					if data, ok = initial[abs]; !ok {
						return abs // not watched: as it is
					}
				}
				f := fmt.Sprintf("%s.%s.it%d.cnf", base, name, k)
				files[f] = data
				return f
			})
		}
		targets = append(targets, name+"="+withFiles(spec, 1))
		for _, r := range records {
			if r.name != name {
				continue
			}
			if r.spec != "" {
				spec = r.spec
			}
			for f, data := range r.files {
				contents[f] = data
			}
			targets = append(targets, fmt.Sprintf("%s-it%d=%s", name, r.k, withFiles(spec, r.k)))
		}
	}
	return targets, files
}

// replaceCnf replaces the path of a SPEC's cnf= key by to(its absolute path).
func replaceCnf(spec string, to func(abs string) string) string {
	parts := strings.Split(spec, ",")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, "cnf="); ok {
			if abs, err := filepath.Abs(v); err == nil {
				parts[i] = "cnf=" + to(abs)
			}
		}
	}
	return strings.Join(parts, ",")
}
