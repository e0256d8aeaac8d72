package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/ledger"
)

// tmuxSession runs args in a detached tmux session of its own at 100×30
// (a real terminal for the TUI) and returns a way to send keys and read
// the screen; the session is killed at the end of the test.
func tmuxSession(t *testing.T, env []string, args ...string) (keys func(...string), screen func() string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required (apt-get install tmux): %v", err)
	}
	name := "dbduel-test-" + ledger.NewRunID()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	cmd := exec.Command("tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "30",
		"env "+strings.Join(env, " ")+" "+strings.Join(quoted, " ")+"; sleep 600")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", name).Run() })
	keys = func(k ...string) {
		exec.Command("tmux", append([]string{"send-keys", "-t", name}, k...)...).Run()
	}
	screen = func() string {
		out, _ := exec.Command("tmux", "capture-pane", "-p", "-t", name).Output()
		return string(out)
	}
	return keys, screen
}

// waitScreen waits until the screen shows want.
func waitScreen(t *testing.T, screen func() string, want string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if strings.Contains(screen(), want) {
			return
		}
	}
	t.Fatalf("the screen never showed %q:\n%s", want, screen())
}

// waitRounds waits until the header's round is n past the round it showed
// when segment seg was first seen: the round on screen is the one being
// measured (a global count), so n = 2 means at least one whole round of
// the segment is done, however slowly a loaded machine starts it.
func waitRounds(t *testing.T, screen func() string, seg, n int, timeout time.Duration) {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`segment %d · round (\d+)`, seg))
	first := -1
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		m := re.FindStringSubmatch(screen())
		if m == nil {
			continue
		}
		r, _ := strconv.Atoi(m[1])
		if first < 0 {
			first = r
		}
		if r >= first+n {
			return
		}
	}
	t.Fatalf("segment %d never went %d rounds on:\n%s", seg, n, screen())
}

// dbduel live in a real terminal against a real container: an edit of the
// watched cnf restarts the container, which reads back the new buffer
// pool; ↑ doubles the threads; the SPEC editor gives it a memory limit
// (in place), then host networking (a new container, its tables prepared
// again); each lands in the result as a segment, and q, q writes it and
// leaves nothing behind.
func TestLiveWatchRestartsTheContainerWithTheEditedCnf(t *testing.T) {
	integration.Require(t, "mariadbd, Docker, the test image and tmux")
	t.Parallel()
	bin := buildBinary(t)
	runID := "test-" + ledger.NewRunID()
	dir := t.TempDir()
	cnf := filepath.Join(dir, "tuned.cnf")
	if err := os.WriteFile(cnf, []byte("[mysqld]\ninnodb_buffer_pool_size = 128M\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "live.json")
	dockerSpec := "docker:" + testImage(t) + ",cnf=" + cnf
	keys, screen := tmuxSession(t, []string{"DBDUEL_RUN_ID=" + runID, "DBDUEL_STATE_DIR=" + ledger.Dir()},
		bin, "live", "oltp_point_select", "--target", "native=local:mariadbd", "--target", "docker="+dockerSpec,
		"--tables", "1", "--table-size", "1000", "--threads", "1", "--slice", "1", "--settle", "0.2", "--watch", cnf, "-o", out)
	waitScreen(t, screen, "round 3", 120*time.Second)
	if err := os.WriteFile(cnf, []byte("[mysqld]\ninnodb_buffer_pool_size = 256M\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, screen, "iteration 2: tuned.cnf changed (docker restarted)", 60*time.Second)
	keys("Up")
	waitScreen(t, screen, "segment 3", 30*time.Second)
	waitScreen(t, screen, "2 threads", 10*time.Second)
	// The SPEC editor: the container's memory limit, changed in place.
	keys("Right", "Right", "Enter")
	waitScreen(t, screen, "SPEC of docker:", 10*time.Second)
	keys("C-u", dockerSpec+",memory=1g", "Enter")
	waitScreen(t, screen, "segment 4", 60*time.Second)
	// A restart: up to 3 settling rounds, then whole rounds counted.
	waitRounds(t, screen, 4, stats.MaxSettlingRounds+2, 120*time.Second)
	// A key that needs a new container: host networking (the tables are
	// prepared again in it).
	keys("Enter")
	waitScreen(t, screen, "SPEC of docker:", 10*time.Second)
	waitScreen(t, screen, "memory=1g", 10*time.Second) // its end in view
	// With a secret in its environment: the change line names the key,
	// never the value (on screen, in the result).
	keys("End", ",network=host,env=API_TOKEN=live-secret-42", "Enter")
	waitScreen(t, screen, "segment 5", 90*time.Second)
	if strings.Contains(screen(), "live-secret-42") {
		t.Errorf("the secret is on screen:\n%s", screen())
	}
	waitRounds(t, screen, 5, stats.MaxSettlingRounds+2, 150*time.Second) // past settling, a whole round of the fifth segment
	keys("q")
	waitScreen(t, screen, "session ended", 60*time.Second)
	keys("q")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if !strings.Contains(screen(), "session ended") {
			break
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no result: %v\n%s", err, screen())
	}
	var r result.Result
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if len(r.Segments) != 5 || r.Live == nil {
		t.Fatalf("segments %+v, live %+v", r.Segments, r.Live)
	}
	it := r.Segments[1]
	if it.Iteration != 2 || it.ReadBack["docker"]["innodb_buffer_pool_size"] != "268435456" || it.ReadBack["native"] != nil {
		t.Errorf("iteration: %+v", it)
	}
	if th := r.Segments[2]; th.WhatChanged != "threads 1→2" || th.Threads != 2 || th.Iteration != 2 {
		t.Errorf("the threads' segment: %+v", th)
	}
	if sp := r.Segments[3]; sp.WhatChanged != "iteration 3: docker memory=none→1g" || sp.ReadBack["docker"]["memory_limit_bytes"] != "1073741824" || sp.Rounds < 1 ||
		sp.SettlingRounds < 1 || sp.SettlingRounds > stats.MaxSettlingRounds {
		t.Errorf("the SPEC's segment: %+v", sp)
	}
	if bytes.Contains(data, []byte("live-secret-42")) {
		t.Error("the env= value is in the result file")
	}
	if sp := r.Segments[4]; sp.WhatChanged != "iteration 4: docker env API_TOKEN changed network=none→host" || sp.Rounds < 1 || len(r.InCompleteBlocks("docker", sp.Point)) != sp.Rounds {
		t.Errorf("the new container's segment: %+v", sp)
	}
	if d := r.Targets[1]; d.Described.MemoryLimitBytes != 1<<30 || d.Described.NetworkMode != "host" || !strings.HasSuffix(d.SpecRedacted, ",memory=1g,network=host,env=API_TOKEN=***") {
		t.Errorf("the container's read-back: %+v %q", d.Described, d.SpecRedacted)
	}
	for _, run := range r.Runs {
		if h := run.Honesty; h == nil || h.ServerQueries != h.DbduelQueries {
			t.Errorf("%s round %d: the server counted otherwise: %+v", run.Target, run.Block, h)
		}
	}
	if r.Live.Switches == 0 || r.Live.SwitchMs <= 0 {
		t.Errorf("switches not timed: %+v", r.Live)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Errorf("%d things of run %s left behind", n, runID)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Errorf("files of run %s left in the state directory: %v", runID, files)
	}
}
