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

// Dir is dbduel's state directory (DBDUEL_STATE_DIR overrides it).
func Dir() string {
	if d := os.Getenv("DBDUEL_STATE_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "dbduel-state")
}

// NewRunID returns a fresh run id.
func NewRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Process is a pidfile's content.
type Process struct {
	RunID   string    `json:"run_id"`
	Target  string    `json:"target"`
	PID     int       `json:"pid"`
	Binary  string    `json:"binary"`
	Dir     string    `json:"dir"` // temp dir to remove with the process
	Started time.Time `json:"started"`
	Owner   string    `json:"owner"` // the dbduel process that started it ("pid:executable")
}

func pidPath(runID, target string) string {
	return filepath.Join(Dir(), "proc-"+runID+"-"+target+".json")
}

// Record writes a pidfile for p.
func Record(p Process) error {
	if err := os.MkdirAll(Dir(), 0o700); err != nil {
		return err
	}
	if p.Owner == "" {
		p.Owner = Owner()
	}
	data, _ := json.Marshal(p)
	return os.WriteFile(pidPath(p.RunID, p.Target), data, 0o600)
}

// Forget removes p's pidfile.
func Forget(runID, target string) { os.Remove(pidPath(runID, target)) }

// Processes lists the pidfiles, optionally only those of one run id.
func Processes(runID string) ([]Process, error) {
	matches, err := filepath.Glob(filepath.Join(Dir(), "proc-*.json"))
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var p Process
		if json.Unmarshal(data, &p) != nil {
			continue
		}
		if runID == "" || p.RunID == runID {
			out = append(out, p)
		}
	}
	return out, nil
}

// Alive says whether pid runs binary: a pid is only killed when its
// command line still names the binary dbduel started (pids are reused).
func Alive(pid int, binary string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(string(data), "\x00")
	if len(args) == 0 {
		return false
	}
	return args[0] == binary || filepath.Base(args[0]) == filepath.Base(binary) ||
		(len(args) > 1 && filepath.Base(args[0]) == "taskset" && strings.Contains(string(data), binary))
}

// Kill ends p's process (SIGTERM, then SIGKILL after grace) if it is still
// the process dbduel started, removes its temp dir and forgets it.
func Kill(p Process, grace time.Duration) error {
	if Alive(p.PID, p.Binary) {
		_ = syscall.Kill(p.PID, syscall.SIGTERM)
		deadline := time.Now().Add(grace)
		for Alive(p.PID, p.Binary) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if Alive(p.PID, p.Binary) {
			if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
				return fmt.Errorf("kill %d: %w", p.PID, err)
			}
		}
	}
	if p.Dir != "" && strings.Contains(filepath.Base(p.Dir), "dbduel") {
		os.RemoveAll(p.Dir)
	}
	Forget(p.RunID, p.Target)
	return nil
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
func keptPath(runID, target string) string {
	return filepath.Join(Dir(), "kept-"+runID+"-"+target+".url")
}

// Keep records a kept target's URL, password included, readable by its
// owner only (mode 0600), and returns the file's path.
func Keep(runID, target, url string) (string, error) {
	if err := os.MkdirAll(Dir(), 0o700); err != nil {
		return "", err
	}
	p := keptPath(runID, target)
	return p, os.WriteFile(p, []byte(url+"\n"), 0o600)
}

// Kept is a kept target's URL (kept:RUN/NAME).
func Kept(runID, target string) (string, error) {
	data, err := os.ReadFile(keptPath(runID, target))
	if err != nil {
		return "", fmt.Errorf("no kept target %s of run %s (run with --keep; dbduel clean removes them): %w", target, runID, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// ForgetKept removes the kept URLs of a run ("" : of every run).
func ForgetKept(runID string) []string {
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
	if err := os.MkdirAll(Dir(), 0o700); err != nil {
		return err
	}
	return os.WriteFile(enginePath(runID, target), []byte("podman:"+user+"\n"), 0o600)
}

// ForgetPodman removes target's note.
func ForgetPodman(runID, target string) { os.Remove(enginePath(runID, target)) }

// PodmanUsers are the Podman stores run runID's targets noted, and their
// notes' paths (to remove once cleaned).
func PodmanUsers(runID string) (users, notes []string) {
	matches, _ := filepath.Glob(filepath.Join(Dir(), "engine-"+runID+"-*.txt"))
	seen := map[string]bool{}
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		notes = append(notes, m)
		u, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "podman:")
		if ok && !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	}
	return users, notes
}
