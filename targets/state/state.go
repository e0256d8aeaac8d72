// Package state keeps track of what dbduel started, so that a crashed or
// killed run can be cleaned up later by `dbduel clean`: containers and
// volumes carry a label, processes leave a pidfile here.
package state

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
}

func pidPath(runID, target string) string {
	return filepath.Join(Dir(), "proc-"+runID+"-"+target+".json")
}

// Record writes a pidfile for p.
func Record(p Process) error {
	if err := os.MkdirAll(Dir(), 0o700); err != nil {
		return err
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

// owner is the file that says which dbduel process is running a run.
type owner struct {
	PID        int    `json:"pid"`
	Executable string `json:"executable"`
}

func ownerPath(runID string) string { return filepath.Join(Dir(), "owner-"+runID+".json") }

// ClaimRun records that this process runs runID, so that `dbduel clean`
// leaves a run in progress alone; release removes the record.
func ClaimRun(runID string) (release func(), err error) {
	if err := os.MkdirAll(Dir(), 0o700); err != nil {
		return func() {}, err
	}
	exe, _ := os.Executable()
	data, _ := json.Marshal(owner{PID: os.Getpid(), Executable: exe})
	if err := os.WriteFile(ownerPath(runID), data, 0o600); err != nil {
		return func() {}, err
	}
	return func() { os.Remove(ownerPath(runID)) }, nil
}

// RunActive says whether the dbduel process that claimed runID still runs
// (its pid alive, and still the same executable).
func RunActive(runID string) (pid int, active bool) {
	data, err := os.ReadFile(ownerPath(runID))
	if err != nil {
		return 0, false
	}
	var o owner
	if json.Unmarshal(data, &o) != nil || o.PID <= 0 {
		return 0, false
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(o.PID) + "/exe")
	if err != nil || strings.TrimSuffix(exe, " (deleted)") != o.Executable {
		os.Remove(ownerPath(runID)) // the owner is gone: the record is stale
		return 0, false
	}
	return o.PID, true
}

// ForgetStaleClaims removes the claims of runs whose dbduel is gone (all
// runs, or runID alone).
func ForgetStaleClaims(runID string) {
	paths, _ := filepath.Glob(ownerPath("*"))
	for _, p := range paths {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "owner-"), ".json")
		if runID == "" || id == runID {
			RunActive(id) // removes the claim when its owner is gone
		}
	}
}
