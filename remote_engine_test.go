package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/state"
)

// remoteEngine is the second Docker engine scripts/remote-engine.sh runs
// in a network namespace of its own: "another host" at 10.254.77.2.
const remoteEngine = "tcp://10.254.77.2:2375"

// TestRemoteEngine: a container on another host's engine, its port
// published on that host's address, read back as that host's, its CPU
// and memory from the engine's stats API (docker-proxy's, out of reach,
// said to be not measured), refused beside a native server of this
// machine unless --allow-mixed-hosts, and nothing left on that engine.
func TestRemoteEngine(t *testing.T) {
	integration.Require(t, "Docker, the test image, and root for a network namespace")
	img := testImage(t)
	if out, err := exec.Command("bash", "scripts/remote-engine.sh", "up", img).CombinedOutput(); err != nil {
		t.Fatalf("remote engine up: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("bash", "scripts/remote-engine.sh", "down").CombinedOutput(); err != nil {
			t.Errorf("remote engine down: %v\n%s", err, out)
		}
		if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), "dbduel-remote") {
			t.Error("the remote engine's network namespace is left behind")
		}
	})
	runID := "test-" + state.NewRunID()
	t.Setenv("DBDUEL_RUN_ID", runID)
	privateStateDir(t)
	remote := "r=docker:" + img + ",engine=" + remoteEngine
	common := []string{"--table-size", "1000", "--threads", "2", "--time", "2", "--no-tui"}
	if _, stderr, code := dbduel(t, append([]string{"run", "oltp_point_select", "--target", "native=local:mariadbd", "--target", remote}, common...)...); code != 2 || !strings.Contains(stderr, "--allow-mixed-hosts") {
		t.Fatalf("native here vs a container on another host: exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code := dbduel(t, append([]string{"run", "oltp_point_select", "--target", "native=local:mariadbd", "--target", remote + ",publish=10.254.77.2",
		"--allow-mixed-hosts", "-o", out}, common...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range r.Targets {
		if tg.Name != "r" {
			continue
		}
		d := tg.Described
		if d.Engine != "docker" || d.Host != "10.254.77.2" || !strings.HasPrefix(d.Address, "10.254.77.2:") || d.NetworkPath != "remote-published" || d.ClientPlacement != "here" {
			t.Errorf("read back as engine %q host %q address %q path %q client %q", d.Engine, d.Host, d.Address, d.NetworkPath, d.ClientPlacement)
		}
	}
	for _, run := range r.Runs {
		if run.Honesty == nil || run.Honesty.DiffPct != 0 {
			t.Errorf("%s: honesty %+v", run.Target, run.Honesty)
		}
		if run.Target != "r" || len(run.Intervals) == 0 {
			continue
		}
		tel := run.Intervals[0].Telemetry
		if c, _ := tel["server_cpu_cores"].(float64); c <= 0 || tel["server_mem_bytes"] == nil {
			t.Errorf("no CPU or memory from the engine's stats API: %v", tel)
		}
		if _, measured := tel["proxy_cpu_cores"]; measured || tel["proxy_cpu_cores_note"] == nil {
			t.Errorf("docker-proxy on the other host must read as not measured, not as a figure: %v", tel)
		}
	}
	if n := remoteLeftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left on the remote engine", n, runID)
	}
}

// remoteLeftovers counts the remote engine's containers and volumes of a run.
func remoteLeftovers(t *testing.T, runID string) int {
	t.Helper()
	dc, err := client.NewClientWithOpts(client.WithHost(remoteEngine), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	f := filters.NewArgs(filters.Arg("label", state.Label+"="+runID))
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
