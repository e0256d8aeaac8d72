package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	_ "github.com/dbduel/dbduel/engine/driver/mysql" // the protocol the kept server speaks
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/specs"
)

// --keep leaves a managed server running after dbduel exits, says how to
// reach it (password redacted; the whole URL in a 0600 file), a later
// command reaches it as kept:RUN/NAME with its data, and dbduel clean
// --run removes it and lists what it removed.
func TestKeepLeavesTheServerRunning(t *testing.T) {
	integration.Require(t, "mariadbd")
	t.Parallel()
	bin := buildBinary(t)
	runID := newRunID()
	cmd := exec.Command(bin, "run", "oltp_point_select", "--target", "n=local:mariadbd", "--keep",
		"--time", "1", "--table-size", "200", "--format", "text")
	cmd.Env = append(os.Environ(), "DBDUEL_RUN_ID="+runID)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run --keep: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(bin, "clean", "--run", runID).Run() })
	line := regexp.MustCompile(`kept n running: mysql://root:\*\*\*@127\.0\.0\.1:\d+/sbtest \(with its password in (\S+);`).FindSubmatch(out)
	if line == nil {
		t.Fatalf("no kept line:\n%s", out)
	}
	if st, err := os.Stat(string(line[1])); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("URL file %s: %v %v", line[1], err, st)
	}
	url, err := ledger.Kept(runID, "n")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := specs.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	// dbduel has exited: the server still answers.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := driver.Ping(ctx, ep, 5*time.Second); err != nil {
		t.Fatalf("the kept server does not answer after dbduel exited: %v", err)
	}
	// A later command reaches it, tables and all.
	if _, stderr, code := dbduel(t, "run", "oltp_point_select", "--target", "n=kept:"+runID+"/n", "--time", "1", "--table-size", "200", "--format", "text"); code != 0 || strings.Contains(stderr, "preparing") {
		t.Fatalf("kept target: exit %d:\n%s", code, stderr)
	}
	clean, err := exec.Command(bin, "clean", "--run", runID).CombinedOutput()
	if err != nil || !strings.Contains(string(clean), "stopped process") || !strings.Contains(string(clean), "removed directory") || !strings.Contains(string(clean), "removed kept target's URL file") {
		t.Fatalf("clean: %v\n%s", err, clean)
	}
	if driver.Ping(ctx, ep, 2*time.Second) == nil {
		t.Fatal("the server still answers after clean")
	}
}

// A managed local server runs in a cgroup of its own, so its CPU has a
// container's scope; its idle CPU is read before the run; the cgroup goes
// with the server.
func TestLocalServerCPUIsACgroupFigure(t *testing.T) {
	integration.Require(t, "mariadbd")
	t.Parallel()
	runID := newRunID()
	env := []string{runEnv(runID)}
	out := t.TempDir() + "/r.json"
	if _, stderr, code := dbduelWith(t, env, "run", "oltp_point_select", "--target", "n=local:mariadbd", "--time", "2", "--table-size", "200",
		"--format", "text", "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if scope := r.Targets[0].Described.CPUScope; scope != "cgroup" {
		t.Fatalf("cpu scope %q", scope)
	}
	iv := r.Runs[0].Intervals[0]
	if c, _ := iv.Telemetry.Get("server_cpu_cores"); c <= 0 {
		t.Fatalf("telemetry %v", iv.Telemetry)
	}
	if _, ok := iv.Telemetry.Get("server_idle_cpu_cores"); !ok {
		t.Fatalf("no idle CPU: %v", iv.Telemetry)
	}
	if left, _ := filepath.Glob("/sys/fs/cgroup/cpuacct/dbduel-" + runID + "*"); len(left) > 0 {
		t.Fatalf("cgroups left: %v", left)
	}
}
