package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
)

// explain on real servers: five rungs (native, the container on the host
// network with a bind mount, then a volume, then bridge with docker-proxy,
// then bridge with the client in the container's network namespace),
// each with its delta, CI and evidence read back; the docker-proxy rung
// is valid and costs more than 15% of native; the waterfall is printed; nothing of the
// run is left.
func TestExplainLadder(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	runID := newRunID()
	env := []string{runEnv(runID), agentEnv(t)}
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := dbduelWith(t, env, "explain", "oltp_point_select", "--native", "local:mariadbd", "--image", testImage(t),
		"--rungs", "bridge-direct", "--threads", "4", "--time", "2", "--runs", "2", "--table-size", "1000", "--cooldown", "0", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil || r.Explain == nil {
		t.Fatalf("result: %v %+v", err, r)
	}
	var names []string
	for _, rg := range r.Explain.Rungs {
		names = append(names, rg.Name)
		if rg.Evidence["network_path"] == nil || rg.Evidence["datadir_kind"] == nil {
			t.Errorf("%s: evidence %v", rg.Name, rg.Evidence)
		}
		// performance_schema is on: each statement's latency splits into
		// the server's time and the rest. The server's timer may run a
		// little past the moment a client beside it has the result (the
		// statement's end comes after its last packet is sent: CI read
		// 121.1 µs of a 112.8 µs statement on bridge-direct), so within 25%.
		srv, _ := rg.Evidence["server_us_per_statement"].(float64)
		cl, _ := rg.Evidence["client_us_per_statement"].(float64)
		if srv <= 0 || cl <= 0 || srv > 1.25*cl {
			t.Errorf("%s: server %.1f µs of a %.1f µs statement", rg.Name, srv, cl)
		}
		if rg.Name != "native" && (rg.N != 2 || !rg.HasCI || rg.CILowPct > rg.DeltaPct || rg.CIHighPct < rg.DeltaPct) {
			t.Errorf("%s: delta %.1f%% CI [%.1f, %.1f] n=%d", rg.Name, rg.DeltaPct, rg.CILowPct, rg.CIHighPct, rg.N)
		}
	}
	if got := strings.Join(names, " "); got != "native host-bind host-volume bridge-proxy bridge-direct" {
		t.Fatalf("rungs %s", got)
	}
	// The client in the server's namespace: no proxy, its own CPU known,
	// and the server's counter read from in there agrees with dbduel's.
	direct := r.Explain.Rungs[4]
	if !direct.Valid || direct.Evidence["network_path"] != "bridge-direct" || direct.Evidence["client_cpu_us_per_txn"] == nil {
		t.Fatalf("bridge-direct rung: %+v", direct)
	}
	for _, run := range r.Runs {
		if run.Target == "bridge-direct" && (run.Honesty == nil || run.Honesty.Counter == "" || run.Honesty.DbduelQueries == 0) {
			t.Fatalf("bridge-direct run without the server's count: %+v", run.Honesty)
		}
	}
	// The proxy's cost is judged against native, not against the rung
	// before it: with two runs a rung beside it that drew a noisy neighbour
	// (CI runs packages side by side) can hide it in a one-step delta,
	// while the path through docker-proxy stays well below native.
	proxy := r.Explain.Rungs[3]
	if !proxy.Valid || proxy.Evidence["network_path"] != "docker-proxy" || proxy.DeltaVsNativePct > -15 {
		t.Fatalf("docker-proxy rung: %+v", proxy)
	}
	if cpu, _ := proxy.Evidence["proxy_cpu_us_per_txn"].(float64); cpu <= 0 {
		t.Fatalf("docker-proxy rung: %+v", proxy)
	}
	if len(r.Explain.Attribution) != 3 || !strings.Contains(stdout, "attribution of the gap") || !strings.Contains(stdout, "bridge-proxy") {
		t.Fatalf("attribution %+v, waterfall:\n%s", r.Explain.Attribution, stdout)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left", n, runID)
	}
}

func TestExplainBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"explain", "--image", "x"},
		{"explain", "--native", "local:mariadbd"},
		{"explain", "--native", "local:mariadbd", "--image", "x", "--rungs", "nope"},
		{"explain", "--native", "local:mariadbd", "--image", "docker:x,cpus=1"},
		{"explain", "--native", "local:mariadbd", "--image", "x", "--target", "a=host"},
		{"explain", "--native", "local:mariadbd", "--image", "x", "--rungs", "podman-rootless"},
		{"explain", "oltp_point_select", "--server-time=false", "--native", "local:mariadbd", "--image", "x", "--rootless-user", "no-such-user-here"},
		{"explain", "--native", "local:mariadbd", "--image", "x", "--rungs", "pod-pvc"},
		{"explain", "--native", "local:mariadbd", "--image", "x", "--k8s-storage", "standard:1Gi"},
		{"explain", "--native", "local:mariadbd", "--image", "x", "--rungs", "pod-pvc", "--k8s-storage", "standard"},
		{"explain", "--native", "local:mariadbd", "--image", "x", "--rungs", "pod-pvc", "--k8s-storage", "Bad_Class:1Gi"},
	} {
		_, stderr, code := dbduel(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d: %q", args, code, stderr)
		}
	}
}

// explain's Podman rungs on real engines: from Docker's host-volume rung
// to Podman on the host network, then Podman's published port (NAT, no
// proxy), then rootless Podman's (rootlessport, a userland proxy whose CPU
// is measured). Each rung is valid (its evidence shows the engine and the
// path it claims), has a paired delta with its CI, and nothing is left.
func TestExplainPodmanRungs(t *testing.T) {
	integration.Require(t, "mariadbd, Docker, Podman and the test image")
	t.Parallel()
	user := rootlessTestUser(t)
	runID := newRunID()
	env := []string{runEnv(runID)}
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := dbduelWith(t, env, "explain", "oltp_point_select", "--native", "local:mariadbd", "--image", testImage(t),
		"--rungs", "podman-rootless", "--rootless-user", user, "--server-time=false",
		"--threads", "2", "--time", "2", "--runs", "2", "--table-size", "1000", "--cooldown", "0", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil || r.Explain == nil {
		t.Fatalf("result: %v", err)
	}
	rungs := map[string]result.Rung{}
	var names []string
	for _, rg := range r.Explain.Rungs {
		names = append(names, rg.Name)
		rungs[rg.Name] = rg
		if !rg.Valid {
			t.Errorf("%s: invalid: %s (evidence %v)", rg.Name, rg.Invalid, rg.Evidence)
		}
		if rg.Name != "native" && (rg.N != 2 || !rg.HasCI || rg.CILowPct > rg.DeltaPct || rg.CIHighPct < rg.DeltaPct) {
			t.Errorf("%s: delta %.1f%% CI [%.1f, %.1f] n=%d", rg.Name, rg.DeltaPct, rg.CILowPct, rg.CIHighPct, rg.N)
		}
	}
	if got := strings.Join(names, " "); got != "native host-bind host-volume podman-host podman-published podman-rootless" {
		t.Fatalf("rungs %s", got)
	}
	for name, path := range map[string]string{"podman-host": "direct", "podman-published": "bridge-direct", "podman-rootless": "rootlessport"} {
		if ev := rungs[name].Evidence; ev["engine"] != "podman" || ev["network_path"] != path {
			t.Errorf("%s: evidence %v", name, ev)
		}
	}
	if cpu, _ := rungs["podman-rootless"].Evidence["proxy_cpu_us_per_txn"].(float64); cpu <= 0 {
		t.Errorf("rootlessport's CPU not measured: %v", rungs["podman-rootless"].Evidence)
	}
	if !strings.Contains(stdout, "rootless podman, rootlessport") || !strings.Contains(stdout, "podman, bridge-direct") {
		t.Errorf("waterfall:\n%s", stdout)
	}
	if n := leftovers(t, runID) + podmanLeftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left", n, runID)
	}
	if left := rootlessLeftovers(t, user, runID); len(left) > 0 {
		t.Fatalf("run %s left: %v", runID, left)
	}
}
