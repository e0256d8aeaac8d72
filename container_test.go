package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/internal/testdb"
	"github.com/dbduel/dbduel/ui/cli"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/dbduel/dbduel/engine/result"
	tcontainer "github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/local"
)

// testImage is the test image matching the host's MariaDB; CI builds it.
func testImage(t *testing.T) string {
	t.Helper()
	integration.Require(t, "Docker and the test image")
	v, err := local.MariaDBVersion()
	if err != nil {
		t.Fatal(err)
	}
	return "dbduel-test/mariadb:" + v
}

// leftovers counts containers and volumes of one run id, and its processes.
func leftovers(t *testing.T, runID string) int {
	t.Helper()
	dc, err := tcontainer.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	procs, _ := ledger.Processes(runID)
	alive := 0
	for _, p := range procs {
		if ledger.Alive(p) {
			alive++
		}
	}
	return engineLeftovers(t, dc, runID) + alive
}

// engineLeftovers counts one engine's containers and volumes of a run.
func engineLeftovers(t *testing.T, dc *client.Client, runID string) int {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", ledger.Label+"="+runID))
	cs, err := dc.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := dc.VolumeList(context.Background(), volume.ListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs) + len(vs.Volumes)
}

func TestNativeVsContainerJSON(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := dbduelWith(t, []string{runEnv(runID)}, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "container=docker:"+testImage(t)+",memory=1g", "--runs", "1", "--time", "2", "--table-size", "2000",
		"--no-tui", "--format", "json", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"type":"interval"`) || !strings.Contains(lastLine(stdout), `"type":"result"`) {
		t.Fatalf("NDJSON stream malformed: %s", lastLine(stdout))
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Runs) != 2 || r.Runs[0].Summary.Events == 0 || r.Runs[1].Summary.Events == 0 {
		t.Fatalf("want a measured run per target: %+v", r.Runs)
	}
	c := r.Targets[1]
	if c.Kind != "container" || c.Described.ImageID == "" || c.Described.NetworkMode != "bridge" ||
		c.Described.Datadir == nil || c.Described.Datadir.Kind != "volume" || c.Described.MemoryLimitBytes != 1<<30 {
		t.Fatalf("container not read back: %+v", c)
	}
	// Where each ran and where its client ran: this machine, dbduel's process.
	if n := r.Targets[0].Described; c.Described.Engine != "docker" || c.Described.Host != "local" || c.Described.ClientPlacement != "here" ||
		n.Engine != "" || n.Host != "local" || n.ClientPlacement != "here" {
		t.Fatalf("engine, host, client placement: container %+v, native %+v", c.Described, n)
	}
	// Telemetry: each interval has the server's CPU (the process, or the
	// container's cgroup) and, behind a published port, the docker-proxy's.
	for _, run := range r.Runs {
		busy, proxy := 0.0, 0.0
		for _, iv := range run.Intervals {
			v, _ := iv.Telemetry.Get("server_cpu_cores")
			busy = max(busy, v)
			p, _ := iv.Telemetry.Get("proxy_cpu_cores")
			proxy = max(proxy, p)
		}
		if busy <= 0 {
			t.Fatalf("%s: no server CPU in the intervals' telemetry", run.Target)
		}
		if run.Target == "container" && c.Described.NetworkPath == "docker-proxy" && proxy <= 0 {
			t.Fatalf("container behind docker-proxy: no proxy CPU in telemetry")
		}
	}
	if r.Targets[0].ServerVersion != c.ServerVersion {
		t.Fatalf("versions differ: %s vs %s", r.Targets[0].ServerVersion, c.ServerVersion)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left behind", n, runID)
	}
}

func TestVersionMismatchNotice(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	older := "dbduel-test/mariadb:10.11.18"
	_, stderr, code := dbduel(t, "run", "oltp_point_select", "--target", "native=local:mariadbd", "--target", "old=docker:"+older,
		"--time", "1", "--table-size", "500", "--format", "text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "server versions differ") || !strings.Contains(stderr, "10.11.18") {
		t.Fatalf("no version-mismatch warning: %s", stderr)
	}
}

// An absent image: a test image is built, not pulled; anything else is
// pulled by default (here from a registry that refuses the connection),
// and pull=never refuses, each in one line.
func TestMissingImages(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	_, stderr, code := dbduel(t, "run", "--target", "c=docker:dbduel-test/absent:0", "--time", "1")
	if code != 1 || !strings.Contains(stderr, "dbduel-test/absent:0") || !strings.Contains(stderr, "build-test-image.sh") {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	_, stderr, code = dbduel(t, "run", "--target", "c=docker:127.0.0.1:1/missing:x", "--time", "1")
	if code != 1 || !strings.Contains(stderr, "pull 127.0.0.1:1/missing:x") {
		t.Fatalf("pull from a refusing registry: exit %d, %q", code, stderr)
	}
	_, stderr, code = dbduel(t, "run", "--target", "c=docker:127.0.0.1:1/missing:x,pull=never", "--time", "1")
	if code != 1 || !strings.Contains(stderr, "pull=never") || strings.Contains(stderr, "goroutine") {
		t.Fatalf("pull=never: exit %d, %q", code, stderr)
	}
}

func TestInvalidDockerKeys(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"memory=lots", "network=weird", "colour=blue", "datadir=tape", "cpus=-1"} {
		_, stderr, code := dbduel(t, "run", "--target", "c=docker:img,"+spec)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, %q", spec, code, stderr)
		}
	}
}

// waitForFile waits until path holds something (a run's partial result:
// the first run is written), or the timeout passes.
func waitForFile(path string, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
	}
}

func TestSIGINTWritesPartialResultAndLeavesNothing(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	bin := buildBinary(t)
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "container=docker:"+testImage(t), "--runs", "2", "--time", "3", "--table-size", "1000", "--no-tui", "-o", out)
	cmd.Env = append(os.Environ(), "DBDUEL_RUN_ID="+runID)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the first run has been written.
	waitForFile(out, 90*time.Second)
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130 after SIGINT, got %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("partial result is not valid JSON: %v", err)
	}
	if r.Complete || len(r.Runs) == 0 {
		t.Fatalf("want complete=false with the runs so far, got complete=%v runs=%d", r.Complete, len(r.Runs))
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left after SIGINT", n, runID)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("files of run %s left in the state directory after SIGINT: %v", runID, files)
	}
}

func TestCleanAfterSIGKILL(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	bin := buildBinary(t)
	runID := newRunID()
	cmd := exec.Command(bin, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "container=docker:"+testImage(t), "--time", "60", "--table-size", "1000", "--no-tui")
	cmd.Env = append(os.Environ(), "DBDUEL_RUN_ID="+runID)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) && leftovers(t, runID) < 3 { // process, container, volume
		time.Sleep(300 * time.Millisecond)
	}
	if leftovers(t, runID) < 3 {
		cmd.Process.Kill()
		t.Fatal("run never started its targets")
	}
	cmd.Process.Kill()
	cmd.Wait()
	// The managed mariadbd dies with its parent (Pdeathsig); the container does not.
	if stdout, stderr, code := dbduel(t, "clean", "--run", runID); code != 0 {
		t.Fatalf("clean: exit %d: %s %s", code, stdout, stderr)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left after dbduel clean", n, runID)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("dbduel clean left files of run %s in the state directory: %v", runID, files)
	}
}

func TestSIGINTDuringPrepare(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	bin := buildBinary(t)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(bin, "run", "oltp_read_only", "--target", "native=local:mariadbd", "--table-size", "400000",
		"--tables", "2", "--threads", "2", "--no-tui", "-o", out)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(stderr.String(), "prepare") {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130, got %v: %s", err, stderr.String())
	}
	if d := time.Since(sent); d > 15*time.Second {
		t.Fatalf("took %s to stop after SIGINT", d)
	}
	if !strings.Contains(stderr.String(), "stopped by a signal during prepare of target native") {
		t.Fatalf("should say where it was: %s", stderr.String())
	}
	r, err := result.ReadFile(out)
	if err != nil || r.Complete {
		t.Fatalf("want a partial result: %v %+v", err, r)
	}
}

func TestThreeBlockPlanPrintsTableCIAndVerdict(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	// The container (through docker-proxy) is usually far slower here, so
	// tps<-5% is usually crossed; on a busy machine the CI may straddle it
	// (exit 5, inconclusive); either way the exit code must agree with the
	// CI this same run recorded (a second run would be a new measurement).
	stdout, stderr, code := dbduel(t, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "container=docker:"+testImage(t), "--runs", "3", "--time", "1", "--table-size", "1000",
		"--threads", "2", "--cooldown", "0", "--seed", "7", "--format", "text", "-o", out, "--fail-if", "tps<-5%")
	if code != 0 && code != 3 && code != 5 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"target           run", "mean", "Δ%", "CI95", "verdict: container", "n=3 blocks, paired t on log-ratios"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("output lacks %q:\n%s", want, stdout)
		}
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Plan.Blocks) != 3 || r.Plan.Seed != 7 || len(r.Runs) != 6 || r.Stats["container"].TPS.N != 3 {
		t.Fatalf("plan/runs/stats: %+v %d %+v", r.Plan, len(r.Runs), r.Stats["container"].TPS)
	}
	for _, b := range r.Plan.Blocks {
		if len(b) != 2 || b[0] == b[1] {
			t.Fatalf("block %v must hold each target once", b)
		}
	}
	var tps *result.Comparison
	for i := range r.Comparisons {
		if r.Comparisons[i].Metric == "tps" {
			tps = &r.Comparisons[i]
		}
	}
	if tps == nil || !tps.HasCI || tps.N != 3 || tps.CILowPct > tps.DeltaPct || tps.CIHighPct < tps.DeltaPct {
		t.Fatalf("tps comparison: %+v", tps)
	}
	crossed, straddles := tps.CIHighPct < -5, tps.CILowPct < -5 && tps.CIHighPct >= -5
	if crossed != (code == 3) || crossed != strings.Contains(stderr, "crosses tps<-5%") || straddles != (code == 5) {
		t.Fatalf("--fail-if tps<-5%% with CI [%+.1f%%, %+.1f%%]: exit %d, %s", tps.CILowPct, tps.CIHighPct, code, stderr)
	}
	t.Logf("container tps CI [%+.1f%%, %+.1f%%], exit %d", tps.CILowPct, tps.CIHighPct, code)
}

func TestThreadsSweepGivesTwoCurves(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := dbduel(t, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "other=local:mariadbd", "--threads", "1,2", "--time", "1", "--table-size", "500", "--cooldown", "0",
		"--format", "text", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Plan.Points) != 2 || len(r.Runs) != 4 || len(r.PointStats) != 2 {
		t.Fatalf("points %d runs %d point_stats %d", len(r.Plan.Points), len(r.Runs), len(r.PointStats))
	}
	if !strings.Contains(stdout, "point 2/2: threads=2") || !strings.Contains(stdout, "threads  table_size") {
		t.Fatalf("no per-point tables or curve table:\n%s", stdout)
	}
	for _, run := range r.Runs {
		if want := r.Plan.Points[run.Point].Threads; run.Fairness == nil || run.Summary.Events == 0 || want != []int{1, 2}[run.Point] {
			t.Fatalf("run %+v", run)
		}
	}
}

// syncBuffer is a buffer a child process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// `dbduel run ... | head -1`: when stdout's reader goes away, dbduel stops
// as on SIGINT (exit 130) and removes its server process and container
// instead of dying of SIGPIPE with them still running.
func TestClosedStdoutStopsAndLeavesNothing(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	bin := buildBinary(t)
	runID := newRunID()
	cmd := exec.Command(bin, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "container=docker:"+testImage(t), "--time", "30", "--table-size", "1000", "--format", "text")
	cmd.Env = append(os.Environ(), "DBDUEL_RUN_ID="+runID)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read until the first interval line, then close the pipe (head -1).
	buf := make([]byte, 4096)
	var seen strings.Builder
	deadline := time.Now().Add(120 * time.Second)
	for !intervalPrinted(seen.String()) && time.Now().Before(deadline) {
		n, err := stdout.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	stdout.Close()
	start := time.Now()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130 after stdout closed, got %v (stderr: %s)", err, stderr.String())
	}
	if time.Since(start) > 25*time.Second {
		t.Fatalf("dbduel kept running %s after its stdout closed", time.Since(start))
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left after stdout closed", n, runID)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("files of run %s left in the state directory after stdout closed: %v", runID, files)
	}
}

func containerRunning(t *testing.T, dc *client.Client, runID string) bool {
	f := filters.NewArgs(filters.Arg("label", ledger.Label+"="+runID))
	cs, err := dc.ContainerList(context.Background(), container.ListOptions{Filters: f})
	return err == nil && len(cs) > 0
}

// A prepare cut short leaves no table that a later run would reuse as
// complete: the run refuses with the reason, and --reprepare loads again.
func TestInterruptedPrepareIsNotReused(t *testing.T) {
	integration.Require(t, "mariadbd")
	t.Parallel()
	srv := testdb.Start(t)
	bin := buildBinary(t)
	args := []string{"oltp_read_only", "--target", "n=" + srv.URL(""), "--tables", "2", "--table-size", "300000", "--threads", "2"}
	cmd := exec.Command(bin, append([]string{"prepare"}, args...)...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(stderr.String(), "rows/s") {
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the prepare finished before it could be interrupted: %s", stderr.String())
	}
	_, errOut, code := dbduel(t, append([]string{"run", "--time", "1", "--format", "text"}, args...)...)
	if code != 1 || !(strings.Contains(errOut, "holds") || strings.Contains(errOut, "only 1 of the 2")) {
		t.Fatalf("an interrupted load must be refused: exit %d: %s", code, errOut)
	}
	if _, errOut, code := dbduel(t, append([]string{"run", "--time", "1", "--format", "text", "--reprepare"}, args...)...); code != 0 {
		t.Fatalf("--reprepare: exit %d: %s", code, errOut)
	}
}

// `dbduel clean` leaves a run whose dbduel is still running alone, and says
// so; --run names it and removes it anyway.
func TestCleanLeavesRunsInProgressAlone(t *testing.T) {
	integration.Require(t, "mariadbd")
	bin := buildBinary(t)
	runID := newRunID()
	cmd := exec.Command(bin, "run", "oltp_point_select", "--target", "native=local:mariadbd", "--time", "60", "--table-size", "500", "--no-tui")
	cmd.Env = append(os.Environ(), "DBDUEL_RUN_ID="+runID)
	var stdout syncBuffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) && !intervalPrinted(stdout.String()) {
		time.Sleep(100 * time.Millisecond)
	}
	out, _, code := dbduel(t, "clean")
	if code != 0 || !strings.Contains(out, "left run "+runID+" alone: its dbduel (pid") || leftovers(t, runID) == 0 {
		t.Fatalf("clean touched a run in progress: exit %d\n%s", code, out)
	}
	if out, errOut, code := dbduel(t, "clean", "--run", runID); code != 0 || leftovers(t, runID) != 0 {
		t.Fatalf("clean --run: exit %d, %d left: %s%s", code, leftovers(t, runID), out, errOut)
	}
	cmd.Process.Kill()
	cmd.Wait()
	dbduel(t, "clean", "--run", runID)
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("state files left: %v", files)
	}
}

// running is a run of a workload on one container target c, in the
// background, started and measuring.
type running struct {
	runID          string
	done           chan int
	stdout, stderr syncBuffer
	dc             *client.Client
}

// startTarget starts workload on target c=spec with the extra flags and
// returns once its first interval is out (and its container runs).
func startTarget(t *testing.T, runID, workload, spec string, flags ...string) *running {
	t.Helper()
	bg := &running{runID: runID, done: make(chan int, 1)}
	args := append([]string{"run", workload, "--target", "c=" + spec,
		"--table-size", "300", "--threads", "2", "--format", "text"}, flags...)
	env := append(os.Environ(), runEnv(bg.runID), agentEnv(t))
	go func() {
		bg.done <- cli.Run(context.Background(), args, cli.NewState(&bg.stdout, &bg.stderr, env))
	}()
	// The engine's own socket: a test may point DOCKER_HOST elsewhere.
	dc, err := client.NewClientWithOpts(client.WithHost("unix:///var/run/docker.sock"), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	bg.dc = dc
	inContainer := strings.HasPrefix(spec, "docker:")
	deadline := time.Now().Add(120 * time.Second)
	for !intervalPrinted(bg.stdout.String()) || inContainer && !containerRunning(t, dc, bg.runID) {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start: %s", bg.stderr.String())
		}
		select {
		case code := <-bg.done:
			t.Fatalf("the run ended (exit %d) before it started: %s", code, bg.stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return bg
}

// containers are the run's containers.
func (bg *running) containers() []container.Summary {
	f := filters.NewArgs(filters.Arg("label", ledger.Label+"="+bg.runID))
	cs, _ := bg.dc.ContainerList(context.Background(), container.ListOptions{Filters: f})
	return cs
}

// intervalPrinted says a run's --format text output shows a measured
// interval: "tps" for the databases' workloads, "events/s" for cpu,
// memory and fileio.
func intervalPrinted(out string) bool {
	return strings.Contains(out, "tps") || strings.Contains(out, "events/s")
}
