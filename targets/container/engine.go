package container

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/go-connections/nat"
	"golang.org/x/sys/unix"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/specs"
)

// A container target's engine is any Docker-API endpoint on this machine:
// the Docker engine (DOCKER_HOST or its default socket), or Podman's
// compatible API: a service dbduel starts on a private socket for the
// run (engine=podman, podman:IMAGE), or one the user runs
// (engine=unix:///run/podman/podman.sock).

const (
	engineDocker = "docker"
	enginePodman = "podman"
)

// engine is a connected engine: its client, its kind, and the private
// service dbduel started for it (nil: none).
type engine struct {
	cli     *client.Client
	kind    string // docker, podman
	service *podmanService
	// addr is the engine's address as the user gave it: an ssh:// engine's
	// client holds a placeholder host.
	addr string
}

// close closes the client and stops the private service, if any.
func (e *engine) close() {
	if e == nil {
		return
	}
	if e.cli != nil {
		if e.service != nil && e.service.rootless != "" {
			e.service.idle = e.userIdle()
		}
		e.cli.Close()
	}
	e.service.stop()
}

// checkEngineKey validates engine=: podman, or a unix:// socket.
func checkEngineKey(v string) error {
	switch {
	case v == enginePodman || v == engineDocker:
		return nil
	case strings.HasPrefix(v, "unix:///"):
		return nil
	case strings.HasPrefix(v, "ssh://"):
		if _, err := url.Parse(v); err != nil {
			return fmt.Errorf("engine=%q: want ssh://USER@HOST[:PORT][/SOCKET]", v)
		}
		return nil
	case strings.HasPrefix(v, "tcp://"):
		return nil
	}
	return fmt.Errorf("engine=%q: want podman, docker, unix:///PATH, tcp://HOST:PORT (with tls=DIR on another host) or ssh://USER@HOST", v)
}

// connectEngine connects to the SPEC's engine: "" is the Docker engine of
// the environment, podman a private Podman service (for target name of
// run runID; as user rootless when set), unix:// and tcp:// an endpoint (Docker or Podman, as its
// version says).
func connectEngine(ctx context.Context, o Options, name, runID string) (*engine, error) {
	spec, rootless := o.Engine, o.Rootless
	e := &engine{kind: engineDocker}
	var err error
	switch {
	case spec == "" || spec == engineDocker:
		e.cli, err = NewClient()
	case spec == enginePodman:
		if name != cleanName {
			// Before the service starts: a run killed from here on has
			// its store named for `dbduel clean --run`.
			if err := ledger.NotePodman(runID, name, rootless); err != nil {
				return nil, err
			}
		}
		if e.service, err = startPodmanService(ctx, name, runID, rootless); err != nil {
			return nil, err
		}
		e.cli, err = client.NewClientWithOpts(client.WithHost(e.service.host()), client.WithAPIVersionNegotiation())
	default:
		e.cli, err = remoteClient(o)
	}
	if err != nil {
		e.close()
		return nil, err
	}
	e.addr = e.cli.DaemonHost()
	if u := o.engineURL(); strings.HasPrefix(u, "ssh://") {
		e.addr = u
	}
	v, err := e.cli.ServerVersion(ctx)
	if err != nil {
		e.close()
		return nil, fmt.Errorf("container engine not reachable (%s): %v", e.addr, driver.OneLine(err.Error()))
	}
	for _, c := range v.Components {
		if strings.Contains(c.Name, "Podman") {
			e.kind = enginePodman
		}
	}
	return e, nil
}

// podmanService is `podman system service` on a private socket, started
// for one target and stopped with it.
type podmanService struct {
	dir      string
	rootless string // the user it runs as ("": root)
	uid      int
	// pausesBefore are the user's pause processes before the service
	// started (the ones it starts go to ourPauses); idle says the user has
	// no running container left, so they may end with it.
	pausesBefore map[int]bool
	idle         bool
	cmd          *exec.Cmd
	exited       chan error // the service's exit, once
}

// pid is the service's process id (0 when there is none).
func (p *podmanService) pid() int {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

func (p *podmanService) host() string { return "unix://" + p.socket() }

// sockDir is where the service makes its socket: the service's directory
// (root's), or for a rootless service a directory in it of the user's own
// (the user may write nothing else there).
func (p *podmanService) sockDir() string {
	if p.rootless == "" {
		return p.dir
	}
	return filepath.Join(p.dir, "sock")
}

func (p *podmanService) socket() string { return filepath.Join(p.sockDir(), "podman.sock") }

// startPodmanService starts Podman's API service and waits until it
// answers. It runs containers with runc where runc is installed (the
// runtime Docker uses here, and crun cannot run on a hybrid cgroup
// hierarchy), and dies with dbduel (SIGTERM when its parent exits). Its
// socket is in a directory of the run's in the state directory, which
// `dbduel clean` removes after a killed run. A rootless service (rootless
// names its user) runs as that user, its socket in a directory of its own
// in the temporary directory (the state directory is root's alone).
func startPodmanService(ctx context.Context, name, runID, rootless string) (*podmanService, error) {
	bin, err := exec.LookPath("podman")
	if err != nil {
		return nil, &specs.UsageError{Msg: "engine podman: podman is not installed (apt-get install podman)"}
	}
	dir, err := socketDir(hostDirPrefix+runID+"-"+name[:min(len(name), 16)]+"-podman-", rootless != "")
	if err != nil {
		return nil, err
	}
	p := &podmanService{dir: dir, rootless: rootless}
	err = p.launch(ctx, bin, "system", "service", "--time=0", p.host())
	if rootless != "" && err != nil && strings.Contains(err.Error(), "podman system migrate") {
		// A killed run's containers are still marked running, and rootless
		// Podman will not start until it has joined one of their (dead)
		// namespaces: what it asks for, podman system migrate, stops only
		// those, as none of the user's containers still runs.
		if err = p.launch(ctx, bin, "system", "migrate"); err == nil {
			err = p.launch(ctx, bin, "system", "service", "--time=0", p.host())
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if rootless != "" {
		p.notePauses()
	}
	return p, nil
}

// launch runs podman with args (as the service's user, with runc where
// it is installed) and, for the service, waits until its socket answers;
// for any other command, until it ends.
func (p *podmanService) launch(ctx context.Context, bin string, args ...string) error {
	if _, err := exec.LookPath("runc"); err == nil {
		args = append([]string{"--runtime", "runc"}, args...)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if p.rootless != "" {
		if err := p.asUser(args); err != nil {
			return err
		}
	}
	// In the service's own directory, root's: never through a link.
	logFile, err := os.OpenFile(filepath.Join(p.dir, "service.log"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start podman %s: %w", args[len(args)-1], err)
	}
	p.exited = make(chan error, 1)
	go func() { p.exited <- p.cmd.Wait() }()
	service := slices.Contains(args, "service")
	what := strings.Join(args[slices.Index(args, "system"):][:2], " ") // system service, system migrate
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The socket's file appears when podman binds it, and answers once
		// it listens: on a busy machine the two are far apart.
		if service && socketAnswers(p.socket()) {
			return nil
		}
		select {
		case err := <-p.exited:
			p.cmd = nil
			if !service && err == nil {
				return nil
			}
			log, _ := os.ReadFile(filepath.Join(p.dir, "service.log"))
			return fmt.Errorf("podman %s exited (%v): %s", what, err, driver.OneLine(string(log)))
		case <-ctx.Done():
			p.kill()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.kill()
			return fmt.Errorf("podman %s did not finish within 20 s", what)
		}
	}
}

// socketDir makes the service's directory (dbduel's, with its mark) in
// the state directory, or in the temporary one when the socket's path
// would be too long there (a unix socket's path has at most 107 bytes) or
// another user must reach it (the state directory is root's alone): then
// it is 0711, so that the user reaches the socket directory in it and
// nothing else.
func socketDir(prefix string, shared bool) (string, error) {
	base, err := ledger.Ensure()
	if err != nil {
		return "", err
	}
	if !shared && len(filepath.Join(base, prefix+"0123456789", "sock", "podman.sock")) <= 100 {
		return ledger.MkdirTemp(prefix)
	}
	dir, err := ledger.MkdirTempIn(os.TempDir(), prefix)
	if err != nil {
		return "", err
	}
	if shared {
		err = os.Chmod(dir, 0o711) // a directory of dbduel's own, just made
	}
	return dir, err
}

// asUser makes the service rootless: it runs as p.rootless with the
// user's own runtime directory, home and environment, managing cgroups
// itself (no systemd user session) and logging events to a file. (Podman
// records the runtime directory of its first run in the user's store and
// uses it ever after: it must be the user's stable one, not a private
// directory of the run's.)
func (p *podmanService) asUser(args []string) error {
	u, err := lookupRootless("/", p.rootless)
	if err != nil {
		return &specs.UsageError{Msg: err.Error()}
	}
	if err := os.Mkdir(p.sockDir(), 0o700); err != nil && !os.IsExist(err) {
		return err
	}
	if err := os.Lchown(p.sockDir(), u.uid, u.gid); err != nil {
		return err
	}
	runtimeDir, err := u.runtimeDir()
	if err != nil {
		return err
	}
	if p.uid == 0 { // the first launch: the user's pause processes before it
		p.uid, p.pausesBefore = u.uid, pausePIDs("/proc", u.uid)
	}
	p.cmd.Args = append([]string{p.cmd.Args[0], "--cgroup-manager", "cgroupfs", "--events-backend", "file"}, args...)
	p.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.gid)}
	p.cmd.Dir = p.dir
	p.cmd.Env = []string{"HOME=" + u.home, "USER=" + u.name, "LOGNAME=" + u.name, "XDG_RUNTIME_DIR=" + runtimeDir,
		"PATH=" + os.Getenv("PATH")}
	return nil
}

// stop ends the service and removes its socket directory.
func (p *podmanService) stop() {
	if p == nil {
		return
	}
	p.kill()
	if p.idle {
		endPauses("/proc", p.uid)
	}
	ledger.RemoveOwn(p.dir)
}

// kill ends the podman process under way, if any: SIGTERM, then SIGKILL
// after 5 s.
func (p *podmanService) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
	p.cmd = nil
}

// copyFromDocker copies the image from the local Docker engine's store
// into Podman's, as docker save | podman load would, when the SPEC allows
// fetching a missing image (pull=missing, Podman's default); copied is
// false when Docker does not have it either.
func (s *Server) copyFromDocker(ctx context.Context) (copied bool, err error) {
	if s.o.Pull != "missing" {
		return false, fmt.Errorf("image %s is not in Podman's store and pull=never: copy it with docker save %s | podman load, or drop pull=never", s.o.Image, s.o.Image)
	}
	dcli, err := NewClient()
	if err != nil {
		return false, nil
	}
	defer dcli.Close()
	if _, err := dcli.ImageInspect(ctx, s.o.Image); err != nil {
		return false, nil
	}
	rc, err := dcli.ImageSave(ctx, []string{s.o.Image})
	if err != nil {
		return false, fmt.Errorf("docker save %s: %w", s.o.Image, err)
	}
	defer rc.Close()
	resp, err := s.cli.ImageLoad(ctx, rc, client.ImageLoadWithQuiet(true))
	if err != nil {
		return false, fmt.Errorf("podman load %s: %v", s.o.Image, driver.OneLine(err.Error()))
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, err := s.cli.ImageInspect(ctx, s.o.Image); err != nil {
		return false, fmt.Errorf("podman load %s: the image is still missing after the load: %v", s.o.Image, driver.OneLine(err.Error()))
	}
	if s.progress != nil {
		fmt.Fprintf(s.progress, "%s: copied image %s from Docker's store into Podman's (docker save | podman load)\n", s.name, s.o.Image)
	}
	return true, nil
}

// podmanLimits sets what Podman's defaults get wrong for this machine,
// unless the SPEC set them: Podman asks for RLIMIT_NOFILE 1048576 and
// RLIMIT_NPROC 4194304, more than the service's hard limits may allow
// ("error setting rlimit type 7: operation not permitted"; the service
// lowers its own RLIMIT_NPROC to 32768 here). dbduel asks for the hard
// limits of the service itself, read from it (pid; 0: a service dbduel did
// not start, whose limits are taken to be dbduel's own).
func podmanLimits(hc *container.HostConfig, pid int) {
	have := map[string]bool{}
	for _, u := range hc.Ulimits {
		have[u.Name] = true
	}
	for name, res := range map[string]int{"nofile": unix.RLIMIT_NOFILE, "nproc": unix.RLIMIT_NPROC} {
		var rl unix.Rlimit
		if have[name] || unix.Prlimit(pid, res, nil, &rl) != nil {
			continue
		}
		n := int64(min(rl.Max, 1<<20))
		hc.Ulimits = append(hc.Ulimits, &container.Ulimit{Name: name, Soft: n, Hard: n})
	}
}

// remote says the engine runs on another host: its containers' /proc and
// cgroups are not this machine's, so they are read through its API.
func (s *Server) remote() bool {
	return s.eng != nil && specs.HostOf(s.eng.addr) != "local"
}

// publishAddr is the address the server's port is published on: the
// SPEC's publish=, else the engine host's address for a remote engine,
// else 127.0.0.1 (a local engine's ports stay on loopback).
func (s *Server) publishAddr() string {
	switch {
	case s.o.Publish != "":
		return s.o.Publish
	case s.remote():
		return specs.HostOf(s.eng.addr)
	}
	return "127.0.0.1"
}

// remoteSample reads a remote container's CPU, memory and throttling from
// the engine's stats API (one shot: the cgroup's own counters). The
// docker-proxy in front of it runs on the engine's host, out of reach.
func (s *Server) remoteSample(ctx context.Context) (targets.Sample, error) {
	resp, err := s.cli.ContainerStatsOneShot(ctx, s.id)
	if err != nil {
		return targets.Sample{}, err
	}
	defer resp.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return targets.Sample{}, fmt.Errorf("the engine's stats: %w", err)
	}
	th := st.CPUStats.ThrottlingData
	// The engine's own time of the reading: it may hand back the reading
	// of its last collection (seen: one of two 1 s intervals read 0
	// cores, the next twice as many), which then spans no time at all.
	at := st.Read
	if at.IsZero() {
		at = time.Now()
	}
	out := targets.Sample{At: at, CPUNS: st.CPUStats.CPUUsage.TotalUsage, MemBytes: st.MemoryStats.Usage,
		ThrottledNS: th.ThrottledTime, Periods: th.Periods, ThrottledPeriods: th.ThrottledPeriods, ProxyUnmeasured: true}
	if s.o.Network != "host" {
		for _, n := range st.Networks {
			out.NetRxBytes += n.RxBytes
			out.NetTxBytes += n.TxBytes
		}
		out.NetMeasured = len(st.Networks) > 0
	}
	return out, nil
}

// readPublishedPort reads the host port the engine picked.
func (s *Server) readPublishedPort(ctx context.Context) error {
	insp, err := s.cli.ContainerInspect(ctx, s.id)
	if err != nil {
		return err
	}
	if insp.NetworkSettings != nil {
		for _, b := range insp.NetworkSettings.Ports[nat.Port(fmt.Sprintf("%d/tcp", s.protocol().Image.Port))] {
			if n, err := strconv.Atoi(b.HostPort); err == nil && n > 0 {
				s.ep.Port = n
				return nil
			}
		}
	}
	return fmt.Errorf("the engine published no port for the server")
}

// socketAnswers says a unix socket accepts connections.
func socketAnswers(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
