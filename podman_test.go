package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/ledger"
)

// podmanLeftovers counts Podman's containers and volumes of one run id
// and the private API services still serving it.
func podmanLeftovers(t *testing.T, runID string) int {
	t.Helper()
	n := 0
	for _, args := range [][]string{
		{"ps", "-a", "-q", "--filter", "label=" + ledger.Label + "=" + runID},
		{"volume", "ls", "-q", "--filter", "label=" + ledger.Label + "=" + runID},
	} {
		out, err := exec.Command("podman", args...).Output()
		if err != nil {
			t.Fatalf("podman %v: %v", args, err)
		}
		n += len(strings.Fields(string(out)))
	}
	out, _ := exec.Command("pgrep", "-f", "podman.*system service.*"+runID).Output()
	return n + len(strings.Fields(string(out)))
}

// TestPodmanTarget: a podman: target next to a native one, through
// Podman's Docker-compatible API on a service dbduel starts for the run.
// The image is copied from Docker's store (Podman has its own), the
// container gets ulimits the machine allows (Podman's defaults do not),
// everything is read back with Podman's network path (no docker-proxy),
// the server's counter agrees, and nothing is left: not after the run,
// not after a SIGKILLed dbduel and `dbduel clean`.
func TestPodmanTarget(t *testing.T) {
	integration.Require(t, "Podman, Docker and the test image")
	t.Parallel()
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("podman is not installed (apt-get install podman): .ci/run installs it")
	}
	runID := newRunID()
	env := []string{runEnv(runID)}
	// A tag of the test image that only Docker has: the run copies it.
	img := "dbduel-test/podman-copy:" + strings.TrimPrefix(runID, "test-")
	if out, err := exec.Command("docker", "tag", testImage(t), img).CombinedOutput(); err != nil {
		t.Fatalf("docker tag: %v %s", err, out)
	}
	t.Cleanup(func() {
		exec.Command("docker", "rmi", img).Run()
		exec.Command("podman", "rmi", "-f", img).Run()
	})
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduelWith(t, env, "run", "oltp_point_select", "--target", "native=local:mariadbd", "--target", "p=podman:"+img,
		"--table-size", "1000", "--threads", "2", "--time", "2", "--cooldown", "0", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "p: copied image "+img+" from Docker's store into Podman's") {
		t.Errorf("no word of the image copied into Podman's store:\n%s", stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var p, native result.Target
	for _, tg := range r.Targets {
		if tg.Name == "p" {
			p = tg
		} else {
			native = tg
		}
	}
	d := p.Described
	if d.Engine != "podman" || d.Host != "local" || d.ClientPlacement != "here" || d.NetworkPath != "bridge-direct" || d.NetworkMode != "bridge" {
		t.Errorf("podman target read back as engine %q host %q client %q network %s/%s", d.Engine, d.Host, d.ClientPlacement, d.NetworkMode, d.NetworkPath)
	}
	if p.ServerVersion == "" || p.ServerVersion != native.ServerVersion {
		t.Errorf("server versions: podman %q, native %q", p.ServerVersion, native.ServerVersion)
	}
	for _, run := range r.Runs {
		if run.Honesty == nil || run.Honesty.DiffPct != 0 || run.Summary.Events == 0 {
			t.Errorf("%s: %d events, honesty %+v", run.Target, run.Summary.Events, run.Honesty)
		}
		if run.Target != "p" || len(run.Intervals) == 0 {
			continue
		}
		if c, _ := run.Intervals[0].Telemetry.Get("server_cpu_cores"); c <= 0 {
			t.Errorf("no server CPU read from the Podman container's cgroup: %v", run.Intervals[0].Telemetry)
		}
		checkNetBytes(t, run)
	}
	if n := podmanLeftovers(t, runID) + leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left behind", n, runID)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("files left in the state directory: %v", files)
	}
	podmanKilledThenClean(t, img)
}

// podmanKilledThenClean SIGKILLs a dbduel running a Podman target: the
// private service dies with it, the container stays in Podman's store,
// and `dbduel clean --run` removes it.
func podmanKilledThenClean(t *testing.T, img string) {
	runID := newRunID()
	killOnceRunning(t, runID, "oltp_point_select", "c=podman:"+img)
	if n := podmanLeftovers(t, runID); n == 0 {
		t.Fatal("a killed dbduel left no Podman container: the test shows nothing")
	}
	if out, errOut, code := dbduel(t, "clean", "--run", runID); code != 0 {
		t.Fatalf("clean: exit %d: %s %s", code, out, errOut)
	}
	if n := podmanLeftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left in Podman after dbduel clean", n, runID)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("dbduel clean left files of run %s in the state directory: %v", runID, files)
	}
}

// rootlessTestUser is an unprivileged user with subordinate ids for
// rootless Podman, made for the tests when the machine lacks it and
// removed with its home, its container store, when the package's tests end
// (removeRootlessTestUser, from TestMain): the tests that use it share the
// image copied into its store once, not once each.
func rootlessTestUser(t *testing.T) string {
	t.Helper()
	// One test at a time has the user: its Podman service, pause process
	// and store are the user's own, and each test checks that nothing of
	// the user's is left after its runs.
	rootlessUser.Lock()
	t.Cleanup(rootlessUser.Unlock)
	if exec.Command("id", rootlessUserName).Run() == nil {
		return rootlessUserName
	}
	for _, args := range [][]string{
		{"useradd", "-m", rootlessUserName},
		{"usermod", "--add-subuids", "300000-365535", "--add-subgids", "300000-365535", rootlessUserName},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
	rootlessUser.made = true
	return rootlessUserName
}

const rootlessUserName = "dbduel-rootless"

var rootlessUser struct {
	sync.Mutex
	made bool // by these tests, so theirs to remove
}

// removeRootlessTestUser removes the user rootlessTestUser made, if it
// made one, with everything it runs and its home.
func removeRootlessTestUser() {
	rootlessUser.Lock()
	defer rootlessUser.Unlock()
	if rootlessUser.made {
		exec.Command("pkill", "-KILL", "-u", rootlessUserName).Run()
		exec.Command("userdel", "-r", rootlessUserName).Run()
	}
}

// rootlessLeftovers counts what a run left of a rootless user's: its
// processes (the service, its pause process, conmon, the server), and
// containers and volumes of run runID in its store, read from the store's
// files (a podman command would itself start a pause process).
func rootlessLeftovers(t *testing.T, user, runID string) []string {
	t.Helper()
	var left []string
	// Zombies are dead already: this machine's init reaps them when it will.
	out, _ := exec.Command("ps", "-u", user, "-o", "stat=,pid=,args=").Output()
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.HasPrefix(l, "Z") {
			left = append(left, "process "+l)
		}
	}
	home, err := exec.Command("sh", "-c", "getent passwd "+user+" | cut -d: -f6").Output()
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(strings.TrimSpace(string(home)), ".local/share/containers/storage")
	lists, _ := filepath.Glob(filepath.Join(store, "*-containers", "containers.json"))
	for _, l := range lists {
		if data, err := os.ReadFile(l); err == nil && strings.Contains(string(data), "dbduel-"+runID) {
			left = append(left, "a container in "+l)
		}
	}
	if vols, _ := filepath.Glob(filepath.Join(store, "volumes", "dbduel-"+runID+"*")); len(vols) > 0 {
		left = append(left, fmt.Sprintf("volumes %v", vols))
	}
	if dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "dbduel-container-"+runID+"*")); len(dirs) > 0 {
		left = append(left, fmt.Sprintf("host dirs %v", dirs))
	}
	return left
}

// TestRootlessPodman: a rootless Podman target (a private service run as
// an unprivileged user with subordinate ids) next to a native server. The
// image is copied into the user's own store, the published port is read
// back as rootlessport (a userland proxy) with its CPU measured, the
// container's CPU is its PID namespace's where it has no cgroup of its own
// (cgroup v1), the server's counter agrees, and nothing of the user's is
// left: not after the run, not after a SIGKILLed dbduel and `dbduel clean`.
func TestRootlessPodman(t *testing.T) {
	integration.Require(t, "Podman, Docker and the test image")
	t.Parallel()
	user := rootlessTestUser(t)
	runID := newRunID()
	env := []string{runEnv(runID)}
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduelWith(t, env, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "rl=podman:"+testImage(t)+",rootless="+user,
		"--table-size", "1000", "--threads", "2", "--time", "2", "--cooldown", "0", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rl result.Target
	for _, tg := range r.Targets {
		if tg.Name == "rl" {
			rl = tg
		}
	}
	d := rl.Described
	if d.Engine != "podman" || !d.Rootless || d.NetworkPath != "rootlessport" || d.Datadir == nil || d.Datadir.Kind != "volume" {
		t.Fatalf("rootless target read back as %+v", d)
	}
	if d.CPUScope != "cgroup" && d.CPUScope != "pid namespace" {
		t.Fatalf("cpu scope %q", d.CPUScope)
	}
	for _, run := range r.Runs {
		if run.Honesty == nil || run.Honesty.DiffPct != 0 || run.Summary.Events == 0 {
			t.Errorf("%s: %d events, honesty %+v", run.Target, run.Summary.Events, run.Honesty)
		}
		if run.Target != "rl" {
			continue
		}
		tel := run.Intervals[len(run.Intervals)-1].Telemetry
		server, _ := tel.Get("server_cpu_cores")
		proxy, _ := tel.Get("proxy_cpu_cores")
		// The server's CPU is its own: under the two cores, not the machine's.
		if server <= 0 || server > 2 || proxy <= 0 {
			t.Errorf("rootless telemetry: server %.2f cores, rootlessport %.2f: %v", server, proxy, tel)
		}
	}
	if left := rootlessLeftovers(t, user, runID); len(left) > 0 {
		t.Fatalf("run %s left: %v", runID, left)
	}
	killed := "test-" + ledger.NewRunID()
	killOnceRunning(t, killed, "oltp_point_select", "c=podman:"+testImage(t)+",rootless="+user)
	if left := rootlessLeftovers(t, user, killed); len(left) == 0 {
		t.Fatal("a killed dbduel left nothing of the rootless user's: the test shows nothing")
	}
	if o, e, code := dbduelWith(t, env, "clean", "--run", killed); code != 0 {
		t.Fatalf("clean: exit %d: %s %s", code, o, e)
	}
	// What clean ended may still be exiting (a process tearing down its
	// namespaces shows as running for a moment): left is what stays.
	left := rootlessLeftovers(t, user, killed)
	for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); left = rootlessLeftovers(t, user, killed) {
		time.Sleep(200 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("after dbduel clean, run %s left: %v", killed, left)
	}
}

// checkNetBytes checks a container run's network bytes per second against
// its queries: every query crosses the container's own network, a point
// select's request and answer each tens of bytes plus their frames'
// headers, far from a kilobyte.
func checkNetBytes(t *testing.T, run result.Run) {
	t.Helper()
	// Per interval the figures must be there; bytes per query are checked
	// over the run: an engine's network counters and its reading's time
	// can land a second apart under load (CI saw one 1-s interval of a
	// remote container read 1.2 bytes per query, its neighbours ~100).
	// A remote engine's counters may also stand still for a reading while
	// its timestamp moves (CI under load: rx 12842 bytes for 8520 queries
	// over a run): the bytes per query are judged over the intervals whose
	// counters moved, and at least one must have.
	var rxBytes, txBytes, queries float64
	for _, iv := range run.Intervals[1:] {
		rx, okRx := iv.Telemetry.Get("server_net_rx_bytes_per_s")
		tx, okTx := iv.Telemetry.Get("server_net_tx_bytes_per_s")
		if !okRx || !okTx || rx < 0 || tx < 0 {
			t.Errorf("%s: interval at %.0fs: network bytes %v / %v", run.Target, iv.TS, rx, tx)
		}
		if rx*iv.SpanS < iv.QPS*iv.SpanS { // under a byte a query: no reading this interval
			continue
		}
		rxBytes, txBytes, queries = rxBytes+rx*iv.SpanS, txBytes+tx*iv.SpanS, queries+iv.QPS*iv.SpanS
	}
	if q := queries; q <= 0 || rxBytes < 20*q || txBytes < 20*q || rxBytes > 1000*q || txBytes > 1000*q {
		t.Errorf("%s: network bytes per query over the run: rx %.0f tx %.0f for %.0f queries; intervals: %v", run.Target, rxBytes, txBytes, q, run.Intervals)
	}
}
