package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/dbduel/dbduel/targets/ledger"
)

// Stop removes the container, its volume(s) and the host files.
func (s *Server) Stop(ctx context.Context) error {
	var errs []error
	if s.cli != nil && s.id != "" {
		if err := s.cli.ContainerRemove(ctx, s.id, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !client.IsErrNotFound(err) {
			errs = append(errs, s.leftBehind("container dbduel-"+s.runID+"-"+s.name, err))
		}
		s.id = ""
	}
	if s.cli != nil && s.volumeName != "" {
		if err := s.cli.VolumeRemove(ctx, s.volumeName, true); err != nil && !client.IsErrNotFound(err) {
			errs = append(errs, s.leftBehind("volume "+s.volumeName, err))
		}
		s.volumeName = ""
	}
	if s.hostDir != "" {
		ledger.RemoveOwn(s.hostDir)
		s.hostDir = ""
	}
	if s.eng != nil {
		s.eng.close() // the private Podman service, if any, with it
		s.eng = nil
	}
	s.prepared = false
	if len(errs) == 0 {
		ledger.ForgetPodman(s.runID, s.name)
	}
	return errors.Join(errs...)
}

// Leftover is something of dbduel's found by label.
type Leftover struct{ Kind, ID, RunID string }

// Clean removes every container and volume carrying dbduel's label (of one
// run id when runID is set), in the Docker engine and, where Podman is
// installed, in Podman's store (through a private service), and returns
// what it removed. With inProgress set, objects whose dbduel still runs
// are left alone and their runs recorded there (run id -> pid).
func Clean(ctx context.Context, runID string, inProgress map[string]int) ([]Leftover, error) {
	skip := func(labels map[string]string) bool {
		if inProgress == nil {
			return false
		}
		if pid, alive := ledger.OwnerAlive(labels[ledger.OwnerLabel]); alive {
			inProgress[labels[ledger.Label]] = pid
			return true
		}
		return false
	}
	cli, err := NewClient()
	if err != nil {
		return nil, err
	}
	out, err := cleanEngine(ctx, cli, "Docker engine", runID, skip)
	cli.Close()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if _, lookErr := exec.LookPath("podman"); lookErr == nil {
		if inProgress != nil {
			// Runs in progress first: their services are not a killed
			// run's to end.
			for run, pid := range ledger.PodmanRunsInProgress() {
				inProgress[run] = pid
			}
		}
		pauses := killedRootlessPauses(runID, func(id string) bool { _, busy := inProgress[id]; return busy })
		left, err := cleanPodman(ctx, runID, skip, pauses)
		out = append(out, left...)
		errs = append(errs, err)
	}
	dirs, err := removeHostDirs(runID, func(id string) bool { _, busy := inProgress[id]; return busy })
	out = append(out, dirs...)
	return out, errors.Join(append(errs, err)...)
}

// killedRootlessPauses ends what is left of killed runs' rootless
// services (rootless Podman re-executes itself in the user namespace, and
// that process has no parent-death signal) and reads the pause processes
// they recorded (by uid), to end with a clean once their users have no
// running container left.
func killedRootlessPauses(runID string, busy func(string) bool) map[int][]int {
	out := map[int][]int{}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), hostDirPrefix+runID+"*-podman-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), hostDirPrefix)
		if (runID != "" && !strings.HasPrefix(rest, runID+"-")) || skipsAnyPrefix(rest, busy) {
			continue
		}
		endServiceOf("/proc", d)
		recordedPauses(d, out)
	}
	return out
}

// cleanPodman cleans Podman's stores: root's, and (when dbduel runs as
// root) each rootless user's that has one, each through a private service
// of its own; a user's pause processes that killed runs left (pauses, by
// uid) end with it once the user has no running container.
func cleanPodman(ctx context.Context, runID string, skip func(map[string]string) bool, pauses map[int][]int) ([]Leftover, error) {
	users := []string{""}
	if os.Getuid() == 0 {
		for _, u := range rootlessUsers("/") {
			users = append(users, u.name)
		}
	}
	var notes []string
	if runID != "" {
		// A run's own stores, as its targets noted them: a clean of one
		// run starts no service for a store it never used.
		users, notes = ledger.PodmanUsers(runID)
	}
	defer func() {
		for _, n := range notes {
			os.Remove(n)
		}
	}()
	var out []Leftover
	var errs []error
	for _, u := range users {
		what := "Podman"
		if u != "" {
			what = "rootless Podman of " + u
		}
		pm, err := connectEngine(ctx, Options{Engine: enginePodman, Rootless: u}, cleanName, runID)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		left, err := cleanEngine(ctx, pm.cli, what, runID, skip)
		if pm.service.rootless != "" {
			notePausesOf(pm.service.uid, pauses[pm.service.uid])
		}
		pm.close()
		out = append(out, left...)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// cleanName names clean's own Podman services.
const cleanName = "clean"

// cleanEngine removes dbduel's labelled containers and volumes from one
// engine (what names it in errors).
func cleanEngine(ctx context.Context, cli *client.Client, what, runID string, skip func(map[string]string) bool) ([]Leftover, error) {
	f := filters.NewArgs()
	if runID != "" {
		f.Add("label", ledger.Label+"="+runID)
	} else {
		f.Add("label", ledger.Label)
	}
	var out []Leftover
	var errs []error
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, c := range cs {
		if skip(c.Labels) {
			continue
		}
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Leftover{Kind: "container", ID: c.ID[:12], RunID: c.Labels[ledger.Label]})
	}
	vs, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return out, fmt.Errorf("%s: %w", what, err)
	}
	for _, v := range vs.Volumes {
		if skip(v.Labels) {
			continue
		}
		if err := cli.VolumeRemove(ctx, v.Name, true); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Leftover{Kind: "volume", ID: v.Name, RunID: v.Labels[ledger.Label]})
	}
	return out, errors.Join(errs...)
}

// makeHostDir makes a container's host directory (dbduel's, with its
// mark; the run id in the name lets `dbduel clean --run` find it after a
// killed run) and the directory of the configuration the container
// mounts, which its server reads as its own user (0755). They are one, in
// the state directory; for a rootless container (the state directory is
// root's alone, and the rootless runtime mounts from the temporary one)
// the host directory is 0711 in the temporary directory and the
// configuration's a directory of an unguessable name in it: another user
// can neither list the one nor find the other.
func makeHostDir(runID, name string, rootless bool) (hostDir, cfgDir string, err error) {
	prefix := hostDirPrefix + runID + "-" + name + "-"
	if !rootless {
		if hostDir, err = ledger.MkdirTemp(prefix); err != nil {
			return "", "", err
		}
		return hostDir, hostDir, os.Chmod(hostDir, 0o755) // a directory of dbduel's own, just made
	}
	if hostDir, err = ledger.MkdirTempIn(os.TempDir(), prefix); err != nil {
		return "", "", err
	}
	if err := os.Chmod(hostDir, 0o711); err != nil {
		return "", "", err
	}
	if cfgDir, err = os.MkdirTemp(hostDir, "cfg-"); err != nil {
		return "", "", err
	}
	return hostDir, cfgDir, os.Chmod(cfgDir, 0o755)
}

// hostDirPrefix starts the name of every container's host directory (its
// generated config, a bind datadir) in the state directory; the run id
// follows.
const hostDirPrefix = "dbduel-container-"

// removeHostDirs removes the host directories that killed runs left in the
// state directory: of one run, or of every run when runID is empty (as
// Clean then removes every dbduel container, none of them is in use).
func removeHostDirs(runID string, skip func(string) bool) ([]Leftover, error) {
	dirs, err := filepath.Glob(filepath.Join(ledger.Dir(), hostDirPrefix+runID+"*"))
	if err != nil {
		return nil, err
	}
	// A private Podman service's socket directory, or a rootless
	// container's host directory: in the temporary directory where the
	// state directory's path is too long for a socket (socketDir) or
	// another user must reach it.
	if tmp, _ := filepath.Glob(filepath.Join(os.TempDir(), hostDirPrefix+runID+"*")); ledger.Dir() != os.TempDir() {
		dirs = append(dirs, tmp...)
	}
	var out []Leftover
	var errs []error
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), hostDirPrefix)
		if runID != "" && !strings.HasPrefix(rest, runID+"-") {
			continue // another run whose id merely starts with this one
		}
		if skip != nil && skipsAnyPrefix(rest, skip) {
			continue
		}
		// Only what dbduel made: another user's directory of the name
		// (in the temporary directory) is left alone.
		if err := ledger.RemoveMarked(d); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Leftover{Kind: "host dir", ID: d, RunID: runID}) // the path names the run
	}
	return out, errors.Join(errs...)
}

// skipsAnyPrefix asks skip about every run id the directory name may start
// with (run ids may hold dashes: "test-1a2b").
func skipsAnyPrefix(rest string, skip func(string) bool) bool {
	for i := strings.IndexByte(rest, '-'); i > 0; i = nextDash(rest, i) {
		if skip(rest[:i]) {
			return true
		}
	}
	return false
}

func nextDash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '-')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
