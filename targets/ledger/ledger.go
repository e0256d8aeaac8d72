// Package ledger keeps track of what dbduel started, so that a crashed or
// killed run can be cleaned up later by `dbduel clean`: containers and
// volumes carry a label, processes leave a pidfile here.
package ledger

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Label is the Docker label on everything dbduel creates; its value is the run id.
const Label = "dbduel.run"

// NewRunID returns a fresh run id.
func NewRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Process is a pidfile's content: the process as the kernel knew it when
// it started (its pid, start time, owner and executable), so that clean
// signals it only while all of them still match: a pid alone is reused,
// and a pidfile's word alone is not enough.
type Process struct {
	RunID     string    `json:"run_id"`
	Target    string    `json:"target"`
	PID       int       `json:"pid"`
	Binary    string    `json:"binary"`
	StartTime uint64    `json:"start_time"` // /proc/PID/stat's starttime (clock ticks after boot)
	UID       int       `json:"uid"`        // the account it runs as (a server may switch to it after its start)
	Exe       string    `json:"exe"`        // the executable it runs (/proc/PID/exe; a wrapper such as taskset execs it)
	Dir       string    `json:"dir"`        // the directory dbduel made for it, removed with it
	Started   time.Time `json:"started"`
	Owner     string    `json:"owner"` // the dbduel process that started it ("pid:executable")
}

func pidPath(runID, target string) (string, error) {
	if err := CheckName("run id", runID); err != nil {
		return "", err
	}
	if err := CheckName("target name", target); err != nil {
		return "", err
	}
	return filepath.Join(Dir(), "proc-"+runID+"-"+target+".json"), nil
}

// Record writes a pidfile for p: its start time as the kernel says, and
// the account (UID) and executable (Binary, its links resolved) it runs
// once started, as the caller says (the kernel may not say so yet: a
// server switches to its account, taskset execs the server).
func Record(p Process) error {
	path, err := pidPath(p.RunID, p.Target)
	if err != nil {
		return err
	}
	if _, err := Ensure(); err != nil {
		return err
	}
	if p.Owner == "" {
		p.Owner = Owner()
	}
	id, err := identify(p.PID)
	if err != nil {
		return fmt.Errorf("pidfile of %s: %w", p.Target, err)
	}
	p.StartTime = id.startTime
	if p.Exe, err = filepath.EvalSymlinks(p.Binary); err != nil {
		return fmt.Errorf("pidfile of %s: %w", p.Target, err)
	}
	data, _ := json.Marshal(p)
	return writePrivate(path, data)
}

// writePrivate writes a new file of this user's only (0600), never
// through a link, in place of any file of the name.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Forget removes p's pidfile.
func Forget(runID, target string) {
	if path, err := pidPath(runID, target); err == nil {
		os.Remove(path)
	}
}

// Processes lists the pidfiles, optionally only those of one run id: each
// a regular file of this user's whose content names itself.
func Processes(runID string) ([]Process, error) {
	if runID != "" {
		if err := CheckName("run id", runID); err != nil {
			return nil, err
		}
	}
	dir, err := Ensure()
	if err != nil {
		return nil, err
	}
	matches, err := filepath.Glob(filepath.Join(dir, "proc-*.json"))
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, m := range matches {
		if fi, err := os.Lstat(m); err != nil || !fi.Mode().IsRegular() || !ownedByUs(fi) {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var p Process
		if json.Unmarshal(data, &p) != nil {
			continue
		}
		if path, err := pidPath(p.RunID, p.Target); err != nil || path != m {
			continue // a file that does not name itself is not dbduel's
		}
		if runID == "" || p.RunID == runID {
			out = append(out, p)
		}
	}
	return out, nil
}

// identity is what the kernel says of a process.
type identity struct {
	startTime uint64
	uid       int
	exe       string
}

// identify reads pid's start time, owner and executable from /proc.
func identify(pid int) (identity, error) {
	if pid <= 0 {
		return identity{}, fmt.Errorf("pid %d", pid)
	}
	proc := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return identity{}, err
	}
	// The command name may hold spaces and parentheses: fields follow the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return identity{}, fmt.Errorf("%s/stat unreadable", proc)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return identity{}, fmt.Errorf("%s/stat unreadable", proc)
	}
	start, err := strconv.ParseUint(f[19], 10, 64) // field 22 of stat(5)
	if err != nil {
		return identity{}, err
	}
	fi, err := os.Stat(proc)
	if err != nil {
		return identity{}, err
	}
	exe, _ := os.Readlink(proc + "/exe")
	return identity{startTime: start, uid: int(fi.Sys().(*syscall.Stat_t).Uid), exe: strings.TrimSuffix(exe, " (deleted)")}, nil
}

// Alive says whether p's process still runs: the same pid, started at the
// same time, by the same owner, the same executable. A pidfile from
// before those were recorded is never taken for a live process.
func Alive(p Process) bool {
	if p.StartTime == 0 || p.Exe == "" {
		return false
	}
	id, err := identify(p.PID)
	return err == nil && id.startTime == p.StartTime && id.uid == p.UID && id.exe == p.Exe
}

// Kill ends p's process (SIGTERM, then SIGKILL after grace) if it is
// still the process dbduel started, waits (bounded) until it is gone,
// removes the directory dbduel made for it and forgets it. It says what
// did not end.
func Kill(p Process, grace time.Duration) error {
	if Alive(p) {
		_ = syscall.Kill(p.PID, syscall.SIGTERM)
		if !gone(p, grace) {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
			if !gone(p, 10*time.Second) {
				return fmt.Errorf("process %d (%s) did not end after SIGKILL within 10 s", p.PID, p.Binary)
			}
		}
	}
	if p.Dir != "" {
		if err := RemoveMarked(p.Dir); err != nil {
			return err
		}
	}
	Forget(p.RunID, p.Target)
	return nil
}

// gone waits up to d for p's process to end.
func gone(p Process, d time.Duration) bool {
	for deadline := time.Now().Add(d); Alive(p); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// OwnerLabel marks containers and volumes with the dbduel process that
// created them ("pid:executable"), so that `dbduel clean` leaves the
// objects of a run in progress alone.
const OwnerLabel = "dbduel.owner"

// Owner is this process as "pid:executable".
func Owner() string {
	exe, _ := os.Executable()
	return strconv.Itoa(os.Getpid()) + ":" + exe
}

// OwnerAlive says whether the process recorded as "pid:executable" still
// runs (the same pid, still that executable).
func OwnerAlive(owner string) (pid int, alive bool) {
	p, exe, ok := strings.Cut(owner, ":")
	pid, err := strconv.Atoi(p)
	if !ok || err != nil || pid <= 0 {
		return 0, false
	}
	cur, err := os.Readlink("/proc/" + p + "/exe")
	return pid, err == nil && strings.TrimSuffix(cur, " (deleted)") == exe
}

// keptPath is where a kept target's URL (password included) is kept.
func keptPath(runID, target string) (string, error) {
	if err := CheckName("run id", runID); err != nil {
		return "", err
	}
	if err := CheckName("target name", target); err != nil {
		return "", err
	}
	return filepath.Join(Dir(), "kept-"+runID+"-"+target+".url"), nil
}

// Keep records a kept target's URL, password included, readable by its
// owner only (mode 0600), and returns the file's path.
func Keep(runID, target, url string) (string, error) {
	p, err := keptPath(runID, target)
	if err != nil {
		return "", err
	}
	if _, err := Ensure(); err != nil {
		return "", err
	}
	return p, writePrivate(p, []byte(url+"\n"))
}

// Kept is a kept target's URL (kept:RUN/NAME).
func Kept(runID, target string) (string, error) {
	p, err := keptPath(runID, target)
	if err != nil {
		return "", err
	}
	if _, err := Ensure(); err != nil {
		return "", err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("no kept target %s of run %s (run with --keep; dbduel clean removes them): %w", target, runID, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// ForgetKept removes the kept URLs of a run ("" : of every run).
func ForgetKept(runID string) []string {
	if runID != "" && CheckName("run id", runID) != nil {
		return nil
	}
	matches, _ := filepath.Glob(filepath.Join(Dir(), "kept-"+runID+"*.url"))
	for _, m := range matches {
		os.Remove(m)
	}
	return matches
}

// enginePath is where target of run runID notes the Podman store it uses.
func enginePath(runID, target string) string {
	return filepath.Join(Dir(), "engine-"+runID+"-"+target+".txt")
}

// NotePodman records that target of run runID has containers in a Podman
// store (user "" is root's), so that `dbduel clean --run` asks that store
// alone; Stop forgets it with ForgetPodman.
func NotePodman(runID, target, user string) error {
	if err := CheckName("run id", runID); err != nil {
		return err
	}
	if err := CheckName("target name", target); err != nil {
		return err
	}
	if _, err := Ensure(); err != nil {
		return err
	}
	return writePrivate(enginePath(runID, target), []byte("podman:"+user+"\nowner:"+Owner()+"\n"))
}

// PodmanRunsInProgress are the runs with a Podman store noted whose
// dbduel still runs (run id -> its pid): a clean of every run leaves
// their services alone.
func PodmanRunsInProgress() map[string]int {
	out := map[string]int{}
	matches, _ := filepath.Glob(filepath.Join(Dir(), "engine-*.txt"))
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			owner, ok := strings.CutPrefix(l, "owner:")
			if !ok {
				continue
			}
			if pid, alive := OwnerAlive(owner); alive {
				rest := strings.TrimPrefix(filepath.Base(m), "engine-")
				for run := range runPrefixes(rest) {
					out[run] = pid
				}
			}
		}
	}
	return out
}

// runPrefixes are the run ids a name "RUN-TARGET.txt" may start with
// (run ids and target names may both hold dashes).
func runPrefixes(name string) map[string]bool {
	out := map[string]bool{}
	for i := strings.IndexByte(name, '-'); i > 0; {
		out[name[:i]] = true
		j := strings.IndexByte(name[i+1:], '-')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return out
}

// ForgetPodman removes target's note.
func ForgetPodman(runID, target string) {
	if CheckName("run id", runID) == nil && CheckName("target name", target) == nil {
		os.Remove(enginePath(runID, target))
	}
}

// PodmanUsers are the Podman stores run runID's targets noted, and their
// notes' paths (to remove once cleaned).
func PodmanUsers(runID string) (users, notes []string) {
	if CheckName("run id", runID) != nil {
		return nil, nil
	}
	matches, _ := filepath.Glob(filepath.Join(Dir(), "engine-"+runID+"-*.txt"))
	seen := map[string]bool{}
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		notes = append(notes, m)
		first, _, _ := strings.Cut(string(data), "\n")
		u, ok := strings.CutPrefix(strings.TrimSpace(first), "podman:")
		if ok && !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	}
	return users, notes
}

// KubeNote is where a k8s: target made its objects: clean asks that
// cluster, context and namespace for the run's labelled objects.
type KubeNote struct {
	RunID, Target       string
	Kubeconfig, Context string // the KUBECONFIG the run saw ("": the default) and its context
	Namespace, Owner    string
	path                string
}

// kubePath is where target of run runID notes its cluster.
func kubePath(runID, target string) string {
	return filepath.Join(Dir(), "kube-"+runID+"-"+target+".txt")
}

// NoteKube records where target of run runID makes Kubernetes objects,
// before it makes any; Stop forgets it with ForgetKube once they are gone.
func NoteKube(runID, target, kubeconfig, context, namespace string) error {
	if err := CheckName("run id", runID); err != nil {
		return err
	}
	if err := CheckName("target name", target); err != nil {
		return err
	}
	if strings.ContainsAny(kubeconfig+context+namespace, "\n") {
		return fmt.Errorf("a kubeconfig path, context or namespace with a newline")
	}
	if _, err := Ensure(); err != nil {
		return err
	}
	body := "run:" + runID + "\ntarget:" + target + "\nkubeconfig:" + kubeconfig + "\ncontext:" + context + "\nnamespace:" + namespace + "\nowner:" + Owner() + "\n"
	return writePrivate(kubePath(runID, target), []byte(body))
}

// ForgetKube removes target's note.
func ForgetKube(runID, target string) {
	if CheckName("run id", runID) == nil && CheckName("target name", target) == nil {
		os.Remove(kubePath(runID, target))
	}
}

// KubeNotes are the notes of run runID ("": of every run).
func KubeNotes(runID string) []KubeNote {
	if runID != "" && CheckName("run id", runID) != nil {
		return nil
	}
	pattern := "kube-*.txt"
	if runID != "" {
		pattern = "kube-" + runID + "-*.txt"
	}
	matches, _ := filepath.Glob(filepath.Join(Dir(), pattern))
	var out []KubeNote
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		n := KubeNote{path: m}
		for _, l := range strings.Split(string(data), "\n") {
			k, v, _ := strings.Cut(l, ":")
			switch k {
			case "run":
				n.RunID = v
			case "target":
				n.Target = v
			case "kubeconfig":
				n.Kubeconfig = v
			case "context":
				n.Context = v
			case "namespace":
				n.Namespace = v
			case "owner":
				n.Owner = v
			}
		}
		if CheckName("run id", n.RunID) != nil || CheckName("target name", n.Target) != nil {
			continue
		}
		out = append(out, n)
	}
	return out
}

// Forget removes the note (its objects are gone).
func (n KubeNote) Forget() { os.Remove(n.path) }
