package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/internal/testmongo"
	tcontainer "github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/ledger"
)

// The fault matrix: every fault done to a running target, for every
// protocol and for the system workloads' agent, and what dbduel must do.
// docs/faults.md's table is rendered from this table (TestFaultMatrixDoc).

// subject is one column of the matrix: a kind of managed target.
type subject struct {
	name     string // mysql, postgres, mongodb, agent, local-mariadbd
	spec     func(t *testing.T) string
	workload string // a read workload; writes is the one for a full disk
	writes   string
}

var subjects = []subject{
	{"mysql", func(t *testing.T) string { return "docker:" + testImage(t) }, "oltp_point_select", "oltp_insert"},
	{"postgres", func(t *testing.T) string { return "docker:" + postgresImage(t) }, "oltp_point_select", "oltp_insert"},
	{"mongodb", func(t *testing.T) string { return "docker:" + testmongo.Image }, "mongo_read_only", "mongo_read_write"},
	{"agent", func(t *testing.T) string { return "docker:" + testImage(t) }, "cpu", "fileio"},
	{"local-mariadbd", func(t *testing.T) string { return "local:mariadbd" }, "oltp_point_select", "oltp_insert"},
}

// outcome is what a fault must come to on one subject.
type outcome struct {
	exit  int           // dbduel's exit code
	names string        // what the line that says the run stopped names ("" when the run goes on)
	bound time.Duration // from the fault to dbduel's exit, at most
	rule  string        // the docs' words for a run that goes on
}

// fault is one row: how the test makes it, and its outcome by subject (a
// subject without an entry is not applicable, and the docs say why).
type fault struct {
	name, how string
	flags     []string
	inject    func(t *testing.T, r *faultRun)
	want      map[string]outcome
	na        string // why the missing subjects do not apply
	// run replaces the in-process run for faults done to dbduel itself:
	// it returns the time from the fault to the clean state.
	run func(t *testing.T, s subject) time.Duration
}

func ends(names string, bound time.Duration) outcome {
	return outcome{exit: 1, names: names, bound: bound}
}

// containersAndAgent are the subjects a container fault applies to.
var containersAndAgent = []string{"mysql", "postgres", "mongodb", "agent"}

// each gives every named subject the outcome o.
func each(o outcome, subjects ...string) map[string]outcome {
	m := make(map[string]outcome, len(subjects))
	for _, s := range subjects {
		m[s] = o
	}
	return m
}

// plus adds subject's own outcome to m.
func plus(m map[string]outcome, subject string, o outcome) map[string]outcome {
	m[subject] = o
	return m
}

func goesOn(rule string) outcome { return outcome{exit: 0, rule: rule, bound: 40 * time.Second} }

var faults = []fault{
	{name: "killed", how: "`docker kill` (SIGKILL) of the container; `kill -KILL` of a local server",
		inject: func(t *testing.T, r *faultRun) { r.signal(t, "KILL") },
		want: plus(each(ends("the container exited with code 137 (killed by SIGKILL)", 10*time.Second), containersAndAgent...),
			"local-mariadbd", ends("the server process ended (killed by SIGKILL", 10*time.Second))},
	{name: "paused", how: "`docker pause` (the cgroup freezer); SIGSTOP of a local server; `--stall-timeout 2`",
		flags:  []string{"--stall-timeout", "2"},
		inject: func(t *testing.T, r *faultRun) { r.pause(t) },
		want: plus(each(ends("the container is paused", 10*time.Second), containersAndAgent...),
			"local-mariadbd", ends("the server process is stopped (SIGSTOP", 10*time.Second))},
	{name: "paused, resumed", how: "paused for 1 s, then resumed; `--stall-timeout 5`",
		flags: []string{"--stall-timeout", "5", "--time", "6"},
		inject: func(t *testing.T, r *faultRun) {
			r.pause(t)
			time.Sleep(time.Second)
			r.resume(t)
		},
		want: plus(each(goesOn("goes on"), "postgres", "mongodb", "agent", "local-mariadbd"),
			"mysql", goesOn("goes on: a pause shorter than --stall-timeout is a slow interval"))},
	{name: "OOM-killed", how: "a memory hog `docker exec`ed into a container with `memory=384m`, the server made the OOM killer's first choice",
		// --time well past the hog's fill: on a loaded machine filling
		// 384 MiB (swap included) took longer than a 40-s run.
		flags:  []string{"--spec-suffix", ",memory=384m", "--time", "120"},
		inject: func(t *testing.T, r *faultRun) { r.oom(t) },
		want:   each(ends("the container was OOM-killed", 30*time.Second), containersAndAgent...),
		na:     "a local server has no memory limit of dbduel's"},
	{name: "restarted", how: "`docker restart` (same published port: dbduel fixes it at create); `--stall-timeout 30`, as a restart on a loaded machine can outlast the default 10 s",
		flags:  []string{"--stall-timeout", "30"},
		inject: func(t *testing.T, r *faultRun) { r.restart(t) },
		want: map[string]outcome{
			"mysql":    ends("the container was restarted at", 20*time.Second),
			"postgres": ends("the container was restarted at", 20*time.Second),
			"mongodb":  goesOn("goes on: the MongoDB driver reconnects (counted in reconn/s); the honesty check is not compared"),
			"agent":    ends("the container was restarted at", 20*time.Second)},
		na: "a local server is dbduel's own process: nobody restarts it but dbduel"},
	{name: "restarted, --mysql-ignore-errors all", how: "`docker restart` with sysbench's rule to reconnect; `--stall-timeout 30`, as above",
		flags:  []string{"--mysql-ignore-errors", "all", "--stall-timeout", "30"},
		inject: func(t *testing.T, r *faultRun) { r.restart(t) },
		want: map[string]outcome{
			"mysql": goesOn("goes on: the threads reconnect (counted in reconn/s); the honesty check is not compared")},
		na: "the flag is MySQL's"},
	{name: "network disconnected", how: "`docker network disconnect -f bridge`; `--stall-timeout 2`",
		flags:  []string{"--stall-timeout", "2"},
		inject: func(t *testing.T, r *faultRun) { r.disconnect(t) },
		want:   each(ends("network disconnected", 10*time.Second), "mysql", "postgres", "mongodb"),
		na:     "the agent talks through the engine's attach stream, not the network; a local server has no container network"},
	{name: "disk full", how: "the datadir on a 512 MiB tmpfs (a test-only hook), filled from the host until no block is free; a write workload",
		flags:  []string{"--stall-timeout", "5"},
		inject: func(t *testing.T, r *faultRun) { r.fillDatadir(t) },
		want: map[string]outcome{
			"mysql": ends("disk full: the datadir /var/lib/mysql", 15*time.Second), "postgres": ends("disk full: the datadir", 15*time.Second),
			"mongodb": ends("disk full: the datadir", 30*time.Second)},
		na: "the agent's fileio prepares its files before the run (a full disk fails the prepare, with ENOSPC); a local server's datadir is on the host's disk"},
	{name: "engine unreachable", how: "`DOCKER_HOST` through a proxy the test closes",
		inject: func(t *testing.T, r *faultRun) { r.proxy.Close() },
		want:   each(ends("engine unreachable", 10*time.Second), containersAndAgent...),
		na:     "a local server needs no engine"},
	{name: "dbduel SIGKILLed", how: "`kill -KILL` of dbduel mid-run, then `dbduel clean`",
		run:  killDbduelThenClean,
		want: each(cleaned(), "mysql", "postgres", "mongodb", "agent", "local-mariadbd")},
}

// cleaned is the outcome of a SIGKILLed dbduel: `dbduel clean` exits 0
// and removes everything of the run (a local server dies with dbduel).
func cleaned() outcome {
	return outcome{exit: 0, rule: "`dbduel clean` removes everything of the run", bound: 30 * time.Second}
}

// faultRun is one cell being run: dbduel in the background on one target.
type faultRun struct {
	*running
	subject subject
	proxy   *engineProxy
	stopped int // the local server's pid while SIGSTOPped
}

var runFaults = flag.Bool("faults", true, "run the fault matrix (skipped under -short)")

// TestFaultMatrix runs every fault on every subject it applies to and checks
// its outcome: the exit code, the stop line naming the cause, the bound
// from the fault to the exit, a valid (partial) result file, nothing left.
func TestFaultMatrix(t *testing.T) {
	t.Parallel()
	if testing.Short() || !*runFaults {
		t.Skip("the fault matrix runs in CI, not under -short")
	}
	integration.Require(t, "mariadbd, Docker and the test images")
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			for _, s := range subjects {
				want, ok := f.want[s.name]
				if !ok {
					continue
				}
				// The cells run side by side: each has its own run id,
				// container and engine connection.
				t.Run(s.name, func(t *testing.T) { t.Parallel(); runFault(t, f, s, want) })
			}
		})
	}
}

func runFault(t *testing.T, f fault, s subject, want outcome) {
	if f.run != nil {
		took := f.run(t, s)
		t.Logf("%s on %s: clean in %s", f.name, s.name, took.Round(100*time.Millisecond))
		if took > want.bound {
			t.Fatalf("clean took %s, want within %s", took, want.bound)
		}
		return
	}
	out := filepath.Join(t.TempDir(), "result.json")
	r := &faultRun{subject: s}
	runID := newRunID()
	spec, workload := s.spec(t), s.workload
	if f.name == "engine unreachable" {
		// The engine through a proxy the test closes: the target's engine=.
		r.proxy = newEngineProxy(t)
		spec += ",engine=unix://" + r.proxy.path
	}
	if f.name == "disk full" {
		tcontainer.TestDatadirTmpfs.Store(runID, int64(512<<20))
		t.Cleanup(func() { tcontainer.TestDatadirTmpfs.Delete(runID) })
	}
	flags := []string{"-o", out, "--time", "15"}
	for i := 0; i < len(f.flags); i += 2 {
		if f.flags[i] == "--spec-suffix" {
			spec += f.flags[i+1]
			continue
		}
		flags = append(flags, f.flags[i], f.flags[i+1])
	}
	if f.name == "disk full" {
		workload = s.writes
	}
	r.running = startTarget(t, runID, workload, spec, flags...)
	f.inject(t, r)
	at := time.Now()
	var code int
	select {
	case code = <-r.done:
	case <-time.After(want.bound + 30*time.Second):
		t.Fatalf("still running %s after the fault:\n%s", time.Since(at).Round(time.Second), r.stderr.String())
	}
	took := time.Since(at)
	msg := r.stderr.String()
	t.Logf("%s on %s: exit %d %s after the fault: %s", f.name, s.name, code, took.Round(100*time.Millisecond), stopLine(msg))
	if code != want.exit || took > want.bound {
		t.Fatalf("exit %d after %s, want %d within %s:\n%s\n%s", code, took.Round(100*time.Millisecond), want.exit, want.bound, msg, lastLines(r.stdout.String(), 8))
	}
	if want.names != "" && !strings.Contains(stopLine(msg), want.names) {
		t.Fatalf("the stop line does not name %q:\n%s", want.names, msg)
	}
	checkPartial(t, out, want.exit == 0)
	if r.proxy != nil {
		// The engine (without the proxy) answers: clean removes what dbduel could not.
		if !strings.Contains(msg, "dbduel clean --run "+r.runID) {
			t.Fatalf("no word on what was left behind:\n%s", msg)
		}
		if _, errOut, code := dbduel(t, "clean", "--run", r.runID); code != 0 {
			t.Fatalf("clean: exit %d: %s", code, errOut)
		}
	}
	if n := leftovers(t, r.runID); n != 0 {
		t.Fatalf("%d things of run %s left", n, r.runID)
	}
	if files := stateFiles(t, r.runID); len(files) != 0 {
		t.Fatalf("files left in the state directory: %v", files)
	}
}

// stopLine is the first line that says the run stopped: the first dbduel:
// line after the interval lines that names a target's run.
func stopLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "dbduel: target ") && strings.Contains(l, "run ") {
			return l
		}
	}
	return ""
}

// checkPartial reads the result file: valid, complete only when the run
// went on, and a cut run marked as such.
func checkPartial(t *testing.T, path string, complete bool) {
	t.Helper()
	res, err := result.ReadFile(path)
	if err != nil {
		t.Fatalf("the result file: %v", err)
	}
	if res.Complete != complete {
		t.Fatalf("result complete %v, want %v", res.Complete, complete)
	}
	for _, run := range res.Runs {
		if !complete && run.Complete {
			t.Fatalf("a cut run is marked complete: %+v", run.Summary)
		}
	}
	for _, run := range res.Runs {
		if run.Summary.Reconnects > 0 && (run.Honesty == nil || !strings.Contains(run.Honesty.Note, "not checked")) {
			t.Fatalf("a run with reconnects had its honesty compared: %+v", run.Honesty)
		}
	}
}

func (r *faultRun) local() bool { return strings.HasPrefix(r.subject.name, "local") }

// serverPID is the managed local server's process.
func (r *faultRun) serverPID(t *testing.T) int {
	procs, _ := ledger.Processes(r.runID)
	if len(procs) == 0 {
		t.Fatal("no process of the run's local server")
	}
	return procs[0].PID
}

func (r *faultRun) signal(t *testing.T, sig string) {
	if r.local() {
		syscall.Kill(r.serverPID(t), syscall.SIGKILL)
		return
	}
	for _, c := range r.containers() {
		if err := r.dc.ContainerKill(context.Background(), c.ID, sig); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *faultRun) pause(t *testing.T) {
	if r.local() {
		pid := r.serverPID(t)
		syscall.Kill(pid, syscall.SIGSTOP)
		r.stopped = pid
		return
	}
	for _, c := range r.containers() {
		// The cgroup v1 freezer gives up when a task will not freeze in
		// time (a busy machine: "unable to freeze"); the fault is the
		// pause, so ask again.
		err := r.dc.ContainerPause(context.Background(), c.ID)
		for try := 0; err != nil && strings.Contains(err.Error(), "unable to freeze") && try < 5; try++ {
			time.Sleep(200 * time.Millisecond)
			err = r.dc.ContainerPause(context.Background(), c.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (r *faultRun) resume(t *testing.T) {
	if r.local() {
		syscall.Kill(r.stopped, syscall.SIGCONT)
		return
	}
	for _, c := range r.containers() {
		if err := r.dc.ContainerUnpause(context.Background(), c.ID); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *faultRun) restart(t *testing.T) {
	for _, c := range r.containers() {
		// dbduel may remove the container while it restarts: that is the
		// outcome under test, not an error of the test's.
		if err := r.dc.ContainerRestart(context.Background(), c.ID, container.StopOptions{}); err != nil {
			t.Logf("docker restart: %v", err)
		}
	}
}

func (r *faultRun) disconnect(t *testing.T) {
	for _, c := range r.containers() {
		if err := r.dc.NetworkDisconnect(context.Background(), "bridge", c.ID, true); err != nil {
			t.Fatal(err)
		}
	}
}

// oom makes every process of the container the OOM killer's first choice,
// then runs a memory hog in it: the limit is reached and the server goes.
func (r *faultRun) oom(t *testing.T) {
	ctx := context.Background()
	hogged := 0
	defer func() {
		if hogged == 0 {
			t.Fatal("no container with a memory limit to fill")
		}
	}()
	for _, c := range r.containers() {
		// The server, the container's first process, is the OOM killer's
		// first choice (its children keep theirs: a child killed instead
		// would be another fault).
		insp, err := r.dc.ContainerInspect(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if insp.HostConfig.Memory == 0 {
			// The agent's container has no limit: a hog there would
			// take the machine's memory, not the server's.
			continue
		}
		os.WriteFile("/proc/"+strconv.Itoa(insp.State.Pid)+"/oom_score_adj", []byte("1000"), 0o644)
		hogged++
		// tail reads /dev/zero for a line's end, keeping all of it: the
		// quickest hog a shell image has.
		ex, err := r.dc.ContainerExecCreate(ctx, c.ID, container.ExecOptions{Cmd: []string{"tail", "/dev/zero"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.dc.ContainerExecStart(ctx, ex.ID, container.ExecStartOptions{Detach: true}); err != nil {
			t.Fatal(err)
		}
		// The fault is the kill, not the hog's start: on a busy machine
		// the hog takes a while to fill the limit.
		deadline := time.Now().Add(90 * time.Second)
		for {
			if insp, err := r.dc.ContainerInspect(ctx, c.ID); err != nil || insp.State.OOMKilled || !insp.State.Running {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the hog did not fill the container's %d bytes in 90 s", insp.HostConfig.Memory)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return 0
}

// fillDatadir writes a file into the container's datadir (a tmpfs) from
// the host, through the server process's root, until none is free.
func (r *faultRun) fillDatadir(t *testing.T) {
	for _, c := range r.containers() {
		insp, err := r.dc.ContainerInspect(context.Background(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		var dir string
		for _, m := range insp.Mounts {
			if m.Type == "tmpfs" {
				dir = m.Destination
			}
		}
		if dir == "" {
			for _, m := range insp.HostConfig.Mounts {
				if m.Type == "tmpfs" {
					dir = m.Target
				}
			}
		}
		root := "/proc/" + strconv.Itoa(insp.State.Pid) + "/root" + dir
		f, err := os.Create(filepath.Join(root, "dbduel-test-filler"))
		if err != nil {
			t.Fatal(err)
		}
		// Megabytes, then pages, until the filesystem refuses: not a block
		// is left for the server's next extension.
		for _, size := range []int{1 << 20, 4 << 10} {
			chunk := make([]byte, size)
			for {
				if _, err := f.Write(chunk); err != nil {
					break
				}
			}
		}
		f.Close()
	}
}

// engineProxy forwards a unix socket to the Docker engine's until closed:
// closing it is an engine that stops answering.
type engineProxy struct {
	path string
	l    net.Listener
	stop chan struct{}
}

func newEngineProxy(t *testing.T) *engineProxy {
	p := &engineProxy{path: filepath.Join(t.TempDir(), "docker.sock"), stop: make(chan struct{})}
	var err error
	if p.l, err = net.Listen("unix", p.path); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := p.l.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	t.Cleanup(p.Close)
	return p
}

func (p *engineProxy) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("unix", "/var/run/docker.sock")
	if err != nil {
		return
	}
	defer up.Close()
	go io.Copy(up, c)
	go io.Copy(c, up)
	<-p.stop
}

// Close stops listening and cuts every forwarded connection.
func (p *engineProxy) Close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
		p.l.Close()
	}
}

// TestFaultMatrixDoc keeps docs/faults.md's table the one this file runs:
// DBDUEL_UPDATE_DOCS=1 rewrites it.
func TestFaultMatrixDoc(t *testing.T) {
	checkRendered(t, "docs/faults.md", "fault matrix: rendered by TestFaultMatrixDoc", "end of the fault matrix", matrixMarkdown(), "TestFaultMatrixDoc")
}

// checkRendered fails unless the text of doc between the HTML comments
// <!-- begin --> and <!-- end --> lines is want; with DBDUEL_UPDATE_DOCS=1
// it writes want there instead. test is the test that renders it.
func checkRendered(t *testing.T, doc, begin, end, want, test string) {
	t.Helper()
	begin, end = "<!-- "+begin+" -->\n", "<!-- "+end+" -->\n"
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q", doc, begin, end)
	}
	if text[i+len(begin):j] == want {
		return
	}
	if os.Getenv("DBDUEL_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(doc, []byte(text[:i+len(begin)]+want+text[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s's table is not the one the tests run; DBDUEL_UPDATE_DOCS=1 go test -run %s rewrites it. Want:\n%s", doc, test, want)
}

func matrixMarkdown() string {
	var b strings.Builder
	b.WriteString("| fault (how the test makes it) |")
	for _, s := range subjects {
		b.WriteString(" " + s.name + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(subjects)) + "\n")
	for _, f := range faults {
		fmt.Fprintf(&b, "| **%s** (%s) |", f.name, f.how)
		for _, s := range subjects {
			w, ok := f.want[s.name]
			switch {
			case !ok:
				b.WriteString(" n/a |")
			case w.exit == 0:
				fmt.Fprintf(&b, " %s |", w.rule)
			case w.names == "":
				fmt.Fprintf(&b, " ends, exit %d, within %s |", w.exit, w.bound)
			default:
				fmt.Fprintf(&b, " ends, exit %d, within %s: «%s» |", w.exit, w.bound, w.names)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\nn/a:\n\n")
	for _, f := range faults {
		if f.na != "" {
			fmt.Fprintf(&b, "- %s: %s.\n", f.name, f.na)
		}
	}
	b.WriteString("\nEach cell is `go test -run 'TestFaultMatrix/<fault>/<subject>'` (spaces as `_`).\n")
	return b.String()
}

// killDbduelThenClean SIGKILLs a dbduel whose run has started, then runs
// `dbduel clean`: nothing of the run may be left.
func killDbduelThenClean(t *testing.T, s subject) time.Duration {
	runID := newRunID()
	killOnceRunning(t, runID, s.workload, "c="+s.spec(t))
	killed := time.Now()
	if out, errOut, code := dbduel(t, "clean", "--run", runID); code != 0 {
		t.Fatalf("clean: exit %d: %s %s", code, out, errOut)
	}
	took := time.Since(killed)
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left after dbduel clean", n, runID)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("dbduel clean left files of run %s in the state directory: %v", runID, files)
	}
	return took
}

// killOnceRunning starts a dbduel (the static binary) running workload on
// target under run id runID, and SIGKILLs it once its first interval line
// is out.
func killOnceRunning(t *testing.T, runID, workload, target string) {
	t.Helper()
	cmd := exec.Command(staticBinary(t), "run", workload, "--target", target, "--time", "60",
		"--table-size", "300", "--threads", "2", "--format", "text")
	cmd.Env = append(os.Environ(), "DBDUEL_RUN_ID="+runID)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(120 * time.Second)
	for !intervalPrinted(stdout.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start: %s", stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
