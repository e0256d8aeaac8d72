package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
)

// watchPoll is how often --watch looks at its files; a change is acted on
// once a file has stayed the same for one more poll (an editor writes in
// several steps).
const watchPoll = 300 * time.Millisecond

// configWatch is dbduel live --watch: the cnf files the targets use, under
// the watched paths, and what each held when last looked at.
type configWatch struct {
	users   map[string][]string // cnf= file → the targets using it
	seen    map[string][32]byte // file → its content's hash
	pending map[string][32]byte // changed, not yet settled
	iter    *liveIterations
	// specFile is the scenario or compose file the session's targets came
	// from, when watched; reloadSpecs reads their SPECs from it again.
	specFile    string
	reloadSpecs func() (map[string]string, error)
}

// liveIterations numbers the configurations a live session tries (the
// first is the one started), and holds the SPECs the editor asked for
// until their targets restart.
type liveIterations struct {
	mu    sync.Mutex
	n     int
	specs map[string]string // target → its new SPEC
	// What each iteration ran, for --export-scenario: the watched cnf=
	// files as they were at the start, and each iteration's SPEC or files.
	initial map[string][]byte
	records []iterationRecord
}

// iterationRecord is what one target ran with from iteration k: a new
// SPEC ("": as before) or new contents of its cnf= files.
type iterationRecord struct {
	k     int
	name  string
	spec  string
	files map[string][]byte
}

func newLiveIterations() *liveIterations {
	return &liveIterations{n: 1, specs: map[string]string{}, initial: map[string][]byte{}}
}

// record keeps what target name runs with from iteration k.
func (it *liveIterations) record(k int, name, spec string, files map[string][]byte) {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.records = append(it.records, iterationRecord{k: k, name: name, spec: spec, files: files})
}

// history is a copy of the initial files and the records.
func (it *liveIterations) history() (map[string][]byte, []iterationRecord) {
	it.mu.Lock()
	defer it.mu.Unlock()
	return maps.Clone(it.initial), slices.Clone(it.records)
}

// next is the number of the next iteration.
func (it *liveIterations) next() int {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.n++
	return it.n
}

// setSpec keeps a target's new SPEC for its restart.
func (it *liveIterations) setSpec(name, spec string) {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.specs[name] = spec
}

// takeSpec is the SPEC a restart applies ("" for a reconfiguration).
func (it *liveIterations) takeSpec(name string) string {
	it.mu.Lock()
	defer it.mu.Unlock()
	s := it.specs[name]
	delete(it.specs, name)
	return s
}

// newConfigWatch finds the targets' cnf files under the watched paths; a
// path no target uses is the user's mistake.
func newConfigWatch(paths []string, ts []targets.Target, iter *liveIterations, specFile string, reload func() (map[string]string, error)) (*configWatch, error) {
	w := &configWatch{users: map[string][]string{}, seen: map[string][32]byte{}, pending: map[string][32]byte{}, iter: iter, reloadSpecs: reload}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, usageErr("--watch %s: %v", p, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, usageErr("--watch %s: %v", p, err)
		}
		if specFile != "" && sameFile(abs, specFile) {
			w.specFile = abs
			continue
		}
		found := false
		for _, t := range ts {
			rc, ok := t.(targets.Reconfigurer)
			if !ok {
				continue
			}
			for _, f := range rc.ConfigFiles() {
				if f == abs || fi.IsDir() && filepath.Dir(f) == abs {
					w.users[f] = append(w.users[f], t.Name())
					found = true
				}
			}
		}
		if !found {
			why := "no managed target's cnf= is this file"
			if fi.IsDir() {
				why = "no managed target's cnf= is in this directory"
			}
			if ext := filepath.Ext(abs); ext == ".yaml" || ext == ".yml" {
				why = "not the scenario (-f) or compose file (--compose) the session's targets came from"
			}
			return nil, usageErr("--watch %s: %s", p, why)
		}
	}
	for f := range w.users {
		w.seen[f], _ = hashFile(f)
		if data, err := os.ReadFile(f); err == nil {
			iter.initial[f] = data
		}
	}
	if w.specFile != "" {
		w.seen[w.specFile], _ = hashFile(w.specFile)
	}
	return w, nil
}

// sameFile says a and b name one file.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func hashFile(path string) ([32]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(data), nil
}

// changedFiles looks at every file once and returns those that changed
// and settled since the last look.
func (w *configWatch) changedFiles() []string {
	var changed []string
	for f := range w.seen {
		h, err := hashFile(f)
		if err != nil { // being rewritten: look again next time
			continue
		}
		switch p, waiting := w.pending[f]; {
		case waiting && p == h:
			delete(w.pending, f)
			w.seen[f] = h
			changed = append(changed, f)
		case h != w.seen[f]:
			w.pending[f] = h
		default:
			delete(w.pending, f)
		}
	}
	slices.Sort(changed)
	return changed
}

// poll turns the changed cnf= files into the targets to restart and what
// changed; the scenario or compose file into its targets' new SPECs.
func (w *configWatch) poll() (names []string, what string, specs map[string]string, specErr error) {
	var files []string
	contents := map[string]map[string][]byte{} // target → its changed files' contents
	for _, f := range w.changedFiles() {
		if f == w.specFile {
			specs, specErr = w.reloadSpecs()
			continue
		}
		data, _ := os.ReadFile(f)
		for _, n := range w.users[f] {
			if !slices.Contains(names, n) {
				names = append(names, n)
				contents[n] = map[string][]byte{}
			}
			contents[n][f] = data
		}
		files = append(files, filepath.Base(f))
	}
	if len(names) == 0 {
		return nil, "", specs, specErr
	}
	k := w.iter.next()
	for _, n := range names {
		w.iter.record(k, n, "", contents[n])
	}
	return names, fmt.Sprintf("iteration %d: %s changed (%s restarted)", k, strings.Join(files, ", "), strings.Join(names, ", ")), specs, specErr
}

// run polls until ctx ends, asking ctl for an iteration on each change; a
// scenario's or compose file's new SPECs go through respec (what cannot
// change is said, and nothing restarts).
func (w *configWatch) run(ctx context.Context, ctl *engine.LiveControl, respec func(map[string]string, string) error) {
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		names, what, specs, err := w.poll()
		if len(names) > 0 {
			ctl.Reconfigure(names, what)
		}
		if err == nil && len(specs) > 0 {
			err = respec(specs, filepath.Base(w.specFile)+" changed")
		}
		if err != nil {
			ctl.Note(fmt.Sprintf("%s: %v", filepath.Base(w.specFile), err))
		}
	}
}

// liveRestarter restarts a target whose configuration (cnf= file) or SPEC
// changed and reads back what now differs from before the restart: the
// server's settings and the container's limits.
func liveRestarter(st *startedTargets, iter *liveIterations) func(ctx context.Context, name string) (map[string]string, error) {
	return func(ctx context.Context, name string) (map[string]string, error) {
		i := st.index(name)
		if i < 0 {
			return nil, fmt.Errorf("no target %s", name)
		}
		t := st.all[i]
		restart, err := restartFor(t, iter.takeSpec(name))
		if err != nil {
			return nil, err
		}
		before, err := readVariables(ctx, t)
		if err != nil {
			return nil, err
		}
		if err := restart(ctx); err != nil {
			return nil, err
		}
		after, err := readVariables(ctx, t)
		if err != nil {
			return nil, err
		}
		changed := map[string]string{}
		for k, v := range after {
			if before[k] != v {
				changed[k] = v
			}
		}
		if d, err := t.Describe(ctx); err == nil {
			st.mu.Lock()
			old := st.described[i].Described
			st.described[i] = d // the result's targets[] read back anew
			st.mu.Unlock()
			limitsChanged(old, d.Described, changed)
		}
		return changed, nil
	}
}

// restartFor is how a target restarts: with its new SPEC, or on its
// edited cnf= file.
func restartFor(t targets.Target, spec string) (func(context.Context) error, error) {
	if spec != "" {
		rs, ok := t.(targets.Respecer)
		if !ok {
			return nil, errors.New("its SPEC cannot change while it runs (a managed container's can)")
		}
		return func(ctx context.Context) error { return rs.Respec(ctx, spec) }, nil
	}
	rc, ok := t.(targets.Reconfigurer)
	if !ok {
		return nil, errors.New("not a managed server with a cnf= file: dbduel cannot restart it")
	}
	return rc.Reconfigure, nil
}

// limitsChanged adds the container limits that differ to changed.
func limitsChanged(old, cur result.Described, changed map[string]string) {
	if old.MemoryLimitBytes != cur.MemoryLimitBytes {
		changed["memory_limit_bytes"] = fmt.Sprint(cur.MemoryLimitBytes)
	}
	if old.CPUs != cur.CPUs {
		changed["cpus"] = fmt.Sprint(cur.CPUs)
	}
	if old.Cpuset != cur.Cpuset {
		changed["cpuset"] = cur.Cpuset
	}
	if old.NetworkMode != cur.NetworkMode {
		changed["network_mode"] = cur.NetworkMode
	}
}

// readVariables is a target's server settings.
func readVariables(ctx context.Context, t targets.Target) (map[string]string, error) {
	if vr, ok := t.(targets.VariablesReader); ok {
		return vr.Variables(ctx)
	}
	return driver.Variables(ctx, t.Endpoint())
}
