package container

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/dbduel/dbduel/internal/integration"

	mysqldrv "github.com/dbduel/dbduel/engine/driver/mysql"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"

	"github.com/dbduel/dbduel/targets/ledger"
)

func testImage(t *testing.T) string {
	t.Helper()
	integration.Require(t, "Docker and the test image")
	out, err := exec.Command("mariadbd", "--version").Output()
	if err != nil {
		out, err = exec.Command("/usr/sbin/mariadbd", "--version").Output()
	}
	if err != nil {
		t.Fatalf("mariadbd is required: %v", err)
	}
	f := strings.Fields(string(out))
	for i, w := range f {
		if w == "Ver" {
			v, _, _ := strings.Cut(f[i+1], "-")
			return "dbduel-test/mariadb:" + v
		}
	}
	t.Fatalf("no version in %q", out)
	return ""
}

// start starts a container target for spec keys and stops it at the end.
func start(t *testing.T, keys string) *Server {
	t.Helper()
	if os.Getenv("DBDUEL_STATE_DIR") == "" {
		t.Setenv("DBDUEL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	}
	runID := "test-" + ledger.NewRunID()
	s, err := New("c", testImage(t)+keys, runID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Cleanup(func() {
		s.Stop(context.Background())
		left, _ := Clean(context.Background(), runID, nil)
		if len(left) > 0 {
			t.Errorf("Stop left %v", left)
		}
	})
	if err := s.Start(ctx); err != nil {
		t.Fatalf("start %s: %v", keys, err)
	}
	return s
}

func variable(t *testing.T, s *Server, name string) string {
	t.Helper()
	db, err := mysqldrv.SQLOpen(s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT @@GLOBAL." + name).Scan(&v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func TestLimitsNetworkAndDatadirAreReadBack(t *testing.T) {
	s := start(t, ",memory=512m,cpus=1.5,cpuset=0,datadir=bind")
	d, err := s.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Described.MemoryLimitBytes != 512<<20 || d.Described.CPUs != 1.5 || d.Described.Cpuset != "0" {
		t.Fatalf("limits not read back: %+v", d.Described)
	}
	if d.Described.NetworkMode != "bridge" || d.Described.Datadir.Kind != "bind" || d.Described.Datadir.FSType == "" {
		t.Fatalf("network/datadir: %+v %+v", d.Described, d.Described.Datadir)
	}
	insp, err := s.cli.ContainerInspect(context.Background(), s.id)
	if err != nil {
		t.Fatal(err)
	}
	pid := insp.State.Pid
	// The kernel's view: cgroup files of the container's process.
	lim := readCgroupLimits(pid)
	if !lim.ok || lim.memoryBytes != 512<<20 || lim.cpus != 1.5 || lim.cpuset != "0" {
		t.Fatalf("cgroup files: %+v", lim)
	}
	bound := false
	for _, m := range insp.Mounts {
		if m.Destination == defaultDatadir && string(m.Type) == "bind" && strings.HasPrefix(m.Source, ledger.Dir()) {
			bound = true
		}
	}
	if !bound {
		t.Fatalf("datadir not bind-mounted from the state dir: %+v", insp.Mounts)
	}
}

func TestHostNetworkListensOnLoopbackPortOnly(t *testing.T) {
	s := start(t, ",network=host")
	d, err := s.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Described.NetworkMode != "host" || d.Described.NetworkPath != "direct" {
		t.Fatalf("%+v", d.Described)
	}
	insp, _ := s.cli.ContainerInspect(context.Background(), s.id)
	// Listening sockets of the server, from its own /proc/net/tcp: state 0A is LISTEN.
	data, err := os.ReadFile("/proc/" + strconv.Itoa(insp.State.Pid) + "/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	want := "0100007F:" + strings.ToUpper(strconv.FormatInt(int64(s.Endpoint().Port), 16))
	found := false
	for _, l := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) > 3 && f[3] == "0A" && strings.HasSuffix(f[1], ":"+want[9:]) {
			if f[1] != want {
				t.Fatalf("server listens on %s, want only %s (127.0.0.1:%d)", f[1], want, s.Endpoint().Port)
			}
			found = true
		}
	}
	if !found || variable(t, s, "port") != strconv.Itoa(s.Endpoint().Port) || variable(t, s, "bind_address") != "127.0.0.1" {
		t.Fatalf("host-network server not on 127.0.0.1:%d", s.Endpoint().Port)
	}
}

func TestOverlayDatadirHasNoMount(t *testing.T) {
	s := start(t, ",datadir=overlay")
	d, err := s.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Described.Datadir.Kind != "overlay" || d.Described.Datadir.Path != overlayDatadir || !strings.Contains(d.Described.Datadir.FSType, "overlay") {
		t.Fatalf("%+v", d.Described.Datadir)
	}
	insp, _ := s.cli.ContainerInspect(context.Background(), s.id)
	for _, m := range insp.Mounts {
		if strings.HasPrefix(overlayDatadir, m.Destination) {
			t.Fatalf("a mount covers the overlay datadir: %+v", m)
		}
	}
}

func TestArgsEnvAndCnfReachTheServer(t *testing.T) {
	cnf := filepath.Join(t.TempDir(), "my.cnf")
	os.WriteFile(cnf, []byte("[mysqld]\nmax_connections = 333\n"), 0o644)
	s := start(t, `,args=--innodb-buffer-pool-size=64M,env="DBDUEL_NOTE=a,b",cnf=`+cnf)
	if v := variable(t, s, "max_connections"); v != "333" {
		t.Fatalf("cnf= not applied: max_connections %s", v)
	}
	if v := variable(t, s, "innodb_buffer_pool_size"); v != strconv.Itoa(64<<20) {
		t.Fatalf("args= not applied: innodb_buffer_pool_size %s", v)
	}
	if v := variable(t, s, "character_set_server"); v != "utf8mb4" {
		t.Fatalf("dbduel's defaults file not read: character_set_server %s", v)
	}
	insp, _ := s.cli.ContainerInspect(context.Background(), s.id)
	found := false
	for _, e := range insp.Config.Env {
		found = found || e == "DBDUEL_NOTE=a,b"
	}
	if !found || insp.Config.Cmd[0] != "--defaults-file=/etc/dbduel/dbduel.cnf" {
		t.Fatalf("env/cmd: %v %v", insp.Config.Env, insp.Config.Cmd)
	}
}

func TestStopRemovesContainerAndVolume(t *testing.T) {
	runID := "test-" + ledger.NewRunID()
	s, err := New("c", testImage(t), runID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		s.Stop(ctx)
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	f := filters.NewArgs(filters.Arg("label", ledger.Label+"="+runID))
	vs, err := s.cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil || len(vs.Volumes) != 0 {
		t.Fatalf("volumes left: %v %v", vs.Volumes, err)
	}
	if _, err := s.cli.ContainerInspect(ctx, s.id); err == nil && s.id != "" {
		t.Fatal("container left")
	}
}

func TestReadinessTimeoutShowsLogs(t *testing.T) {
	runID := "test-" + ledger.NewRunID()
	// A server flag the server rejects: the container exits and the error carries its log.
	s, err := New("c", testImage(t)+",args=--no-such-server-option", runID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	err = s.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "last log lines") || !strings.Contains(err.Error(), "no-such-server-option") {
		t.Fatalf("want an error with the container's last log lines, got %v", err)
	}
	s.Stop(context.Background())
	// And a real timeout: a server that is alive but never reachable.
	s2, _ := New("c2", testImage(t), runID)
	defer s2.Stop(context.Background())
	s2.cli, _ = NewClient()
	s2.ep.Host, s2.ep.Port = "127.0.0.1", 1
	s2.id = "nonexistent"
	err = s2.waitReady(context.Background(), 500*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not accept connections within") {
		t.Fatalf("timeout error: %v", err)
	}
}

func TestDockerHostChecks(t *testing.T) {
	for h, ok := range map[string]bool{"": true, "unix:///var/run/docker.sock": true, "tcp://127.0.0.1:2375": true,
		"ssh://user@host": true, "ssh://user@host:port": false, "tcp://192.0.2.10:2376": true} { // a remote engine publishes on its host's address
		if err := checkDockerHost(h); (err == nil) != ok {
			t.Errorf("%q: %v", h, err)
		}
	}
}

func TestParseSpec(t *testing.T) {
	o, err := ParseSpec(`127.0.0.1:5000/img:tag,memory=2g,env="A=1,2",args=--x=1,args=--y`)
	if err != nil || o.Image != "127.0.0.1:5000/img:tag" || o.MemoryBytes != 2<<30 || o.Env[0] != "A=1,2" || len(o.Args) != 2 {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range []string{"img,memory=lots", "img,network=weird", "img,x=1", "img,pull=sometimes", "img,env=noequals", ",memory=1g", "img,memory=1g,memory=2g"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDescribeStateNamesTheCause(t *testing.T) {
	cases := []struct {
		st   container.State
		want string
	}{
		{container.State{Running: true}, ""},
		{container.State{OOMKilled: true, ExitCode: 137}, "the container was OOM-killed (exit code 137)"},
		{container.State{Running: true, Paused: true}, "the container is paused"},
		{container.State{ExitCode: 137}, "the container exited with code 137 (killed by SIGKILL)"},
		{container.State{ExitCode: 1}, "the container exited with code 1"},
	}
	for _, c := range cases {
		st := c.st
		if got := describeState(&st); !strings.HasPrefix(got, c.want) || (c.want == "" && got != "") {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}

func TestShmAndUlimitKeys(t *testing.T) {
	o, err := ParseSpec("img,shm=64m,ulimit=nofile=1024:2048,ulimit=nproc=100")
	if err != nil || o.ShmBytes != 64<<20 || len(o.Ulimits) != 2 || o.Ulimits[0] != (Ulimit{"nofile", 1024, 2048}) || o.Ulimits[1] != (Ulimit{"nproc", 100, 100}) {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range []string{"img,ulimit=nofile", "img,ulimit=nofile=2:1", "img,shm=lots"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// A slow start says what the container is doing: running, its memory
// against its limit, and when it is near the limit.
func TestStartingStateNamesMemoryAgainstTheLimit(t *testing.T) {
	self := os.Getpid() // a process whose cgroup is readable here
	insp := container.InspectResponse{ContainerJSONBase: &container.ContainerJSONBase{
		State: &container.State{Running: true, Pid: self}, HostConfig: &container.HostConfig{}}}
	insp.HostConfig.Memory = 1 << 20 // far under this test's own use
	if got := startingState(insp); !strings.Contains(got, "of its 1.0 MiB limit") || !strings.Contains(got, "near the limit") {
		t.Fatalf("%q", got)
	}
	insp.HostConfig.Memory = 1 << 50
	if got := startingState(insp); strings.Contains(got, "near the limit") || !strings.Contains(got, "limit") {
		t.Fatalf("%q", got)
	}
}

// Only a container that stopped for good ends a run from the health check;
// a clean exit may be a restart's first half, a pause may be resumed.
func TestFailedExit(t *testing.T) {
	for st, want := range map[container.State]bool{
		{Running: true}:                  false,
		{Running: true, Paused: true}:    false,
		{ExitCode: 0}:                    false,
		{ExitCode: 137}:                  true,
		{ExitCode: 137, OOMKilled: true}: true,
		{Restarting: true, ExitCode: 1}:  false,
	} {
		if got := failedExit(&st); got != want {
			t.Errorf("%+v: %v, want %v", st, got, want)
		}
	}
}

// A bridge container without a network is disconnected; host and none
// modes have none by design.
func TestNetworkDisconnected(t *testing.T) {
	mk := func(mode string, nets int) container.InspectResponse {
		r := container.InspectResponse{ContainerJSONBase: &container.ContainerJSONBase{HostConfig: &container.HostConfig{NetworkMode: container.NetworkMode(mode)}},
			NetworkSettings: &container.NetworkSettings{Networks: map[string]*network.EndpointSettings{}}}
		for i := range nets {
			r.NetworkSettings.Networks[strconv.Itoa(i)] = &network.EndpointSettings{}
		}
		return r
	}
	if !networkDisconnected(mk("bridge", 0)) || networkDisconnected(mk("bridge", 1)) || networkDisconnected(mk("host", 0)) || networkDisconnected(mk("none", 0)) {
		t.Fatal("wrong reading of the container's networks")
	}
}

// client=here is the default written out (every result reports
// client_placement: here): accepted, for Docker and Podman alike, and the
// same as no client= at all.
func TestClientHereIsTheDefault(t *testing.T) {
	for _, spec := range []string{"img,client=here", "img,engine=podman,client=here"} {
		o, err := ParseSpec(spec)
		if err != nil || o.Client != "" {
			t.Fatalf("%s: %+v %v", spec, o.Client, err)
		}
	}
	if _, err := ParseSpec("img,client=there"); err == nil || !strings.Contains(err.Error(), "want here") {
		t.Fatalf("client=there: %v", err)
	}
}
