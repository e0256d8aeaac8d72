// Package container is a server in a Docker container, driven through the
// Docker Engine API: the image's own entrypoint (official mariadb/mysql
// conventions), dbduel's defaults file mounted and passed first, the port
// published on 127.0.0.1 only, the datadir on a labelled volume, and
// everything removed on Stop.
package container

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/driver"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/hostinfo"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/provision"
	"github.com/dbduel/dbduel/targets/specs"
)

// Where the container sees dbduel's files and its datadir.
const (
	configDir      = "/etc/dbduel"
	defaultDatadir = "/var/lib/mysql"
	overlayDatadir = "/var/lib/dbduel-datadir" // off any VOLUME the image declares
	readyTimeout   = 180 * time.Second
	pullTimeout    = 30 * time.Second
)

// TestDatadirTmpfs, when set by a test, puts every datadir on a tmpfs of
// this many bytes (a disk that fills up on demand): no SPEC key offers it.
var TestDatadirTmpfs int64

// NewClient connects to the engine from the environment (DOCKER_HOST...),
// negotiating the API version (the engine here speaks 1.41).
func NewClient() (*client.Client, error) {
	if err := checkDockerHost(os.Getenv("DOCKER_HOST")); err != nil {
		return nil, err
	}
	return client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
}

// checkDockerHost refuses engines dbduel cannot use: ssh:// (not
// supported by the client here). A remote tcp:// engine publishes the
// server's port on its host's address (publishAddr).
func checkDockerHost(h string) error {
	switch {
	case h == "" || strings.HasPrefix(h, "unix://"):
		return nil
	case strings.HasPrefix(h, "ssh://"):
		return &specs.UsageError{Msg: "DOCKER_HOST=ssh://... is not supported: run dbduel on that host, or expose the engine as tcp:// on this machine"}
	}
	return nil
}

// Server is one managed container.
type Server struct {
	name, spec, runID string
	o                 Options
	cli               *client.Client
	eng               *engine // cli's engine (and its private service)
	id                string
	volumeName        string
	hostDir           string
	ep                targets.Endpoint
	progress          io.Writer // pull progress; nil discards it
	pid, proxyPID     int       // cached for Sample; reset on restart
	dataPath          string    // the datadir as the container sees it
	startedAt         string    // the engine's State.StartedAt when dbduel last (re)started it
}

// SetProgress sends pull progress lines to w.
func (s *Server) SetProgress(w io.Writer) { s.progress = w }

// New returns an unstarted container target for SPEC (without "docker:").
func New(name, spec, runID string) (*Server, error) {
	s, err := newServer(name, spec, runID)
	if err != nil {
		return nil, err
	}
	if s.o.Engine == enginePodman {
		s.onPodman()
	}
	return s, s.checkRootless()
}

func newServer(name, spec, runID string) (*Server, error) {
	o, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return &Server{name: name, spec: "docker:" + spec, runID: runID, o: o}, nil
}

// NewPodman returns an unstarted container target for a podman: SPEC
// (without "podman:"): docker:'s keys, on a private Podman service.
func NewPodman(name, spec, runID string) (*Server, error) {
	s, err := newServer(name, spec, runID)
	if err != nil {
		return nil, err
	}
	if s.o.Engine != "" {
		return nil, &specs.UsageError{Msg: fmt.Sprintf("podman:%s: engine= belongs to docker: SPECs (docker:%s,engine=unix:///run/podman/podman.sock)", s.o.Image, s.o.Image)}
	}
	s.onPodman()
	s.spec = "podman:" + spec
	return s, s.checkRootless()
}

// checkRootless refuses rootless= where dbduel cannot honour it: on
// anything but its private Podman service, with what a rootless container
// cannot have here (limits need a cgroup delegated to the user; a bind
// datadir is root's directory, which the server's mapped user cannot
// write; an agent client needs the container's namespaces), and on a
// machine that does not allow rootless Podman (lookupRootless says why).
func (s *Server) checkRootless() error {
	o := s.o
	if o.Rootless == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return &specs.UsageError{Msg: fmt.Sprintf("rootless=%s: ", o.Rootless) + fmt.Sprintf(format, args...)}
	}
	switch {
	case o.Engine != enginePodman:
		return bad("runs a rootless Podman service: podman:%s,rootless=%s", o.Image, o.Rootless)
	case o.MemoryBytes > 0 || o.CPUs > 0 || o.Cpuset != "":
		return bad("memory=, cpus= and cpuset= need a cgroup delegated to the user, which rootless Podman does not get here: measure limits with rootful Podman or Docker")
	case o.Datadir == "bind":
		return bad("datadir=bind is root's directory, which the server's user (a subordinate uid) cannot write: use datadir=volume or overlay")
	case o.Client != "":
		return bad("client=%s is not supported on a rootless container: drop client=", o.Client)
	}
	if _, err := lookupRootless("/", o.Rootless); err != nil {
		return &specs.UsageError{Msg: err.Error()}
	}
	return nil
}

// onPodman puts the target on a private Podman service, where a missing
// image is copied from Docker's store unless the SPEC says pull=never.
func (s *Server) onPodman() {
	s.o.Engine = enginePodman
	if !s.o.pullGiven {
		s.o.Pull = "missing"
	}
}

func (s *Server) Name() string               { return s.name }
func (s *Server) Kind() string               { return "container" }
func (s *Server) SpecRedacted() string       { return redactEnv(s.spec) }
func (s *Server) Endpoint() targets.Endpoint { return s.ep }

// SetMemory sets the memory limit before Start (explain sizes its
// memory-limit rung from the native server's footprint).
func (s *Server) SetMemory(bytes int64) { s.o.MemoryBytes = bytes }

// ID is the container id once started.
func (s *Server) ID() string { return s.id }

// redactEnv hides env= values whose key looks secret.
func redactEnv(spec string) string {
	parts := strings.Split(spec, ",")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, "env="); ok {
			k, _, _ := strings.Cut(v, "=")
			if strings.Contains(strings.ToUpper(k), "PASS") || strings.Contains(strings.ToUpper(k), "SECRET") {
				parts[i] = "env=" + k + "=***"
			}
		}
	}
	return strings.Join(parts, ",")
}

func (s *Server) labels() map[string]string {
	return map[string]string{ledger.Label: s.runID, "dbduel.target": s.name, ledger.OwnerLabel: ledger.Owner()}
}

// Start creates and starts the container and waits until the server answers.
func (s *Server) Start(ctx context.Context) error {
	eng, err := connectEngine(ctx, s.o.Engine, s.name, s.runID, s.o.Rootless)
	if err != nil {
		return err
	}
	s.eng, s.cli = eng, eng.cli
	cli := s.cli
	if err := s.ensureImage(ctx); err != nil {
		return err
	}
	if s.o.Protocol == "" {
		if s.o.Protocol, err = s.imageProtocol(ctx); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(ledger.Dir(), 0o700); err != nil {
		return err
	}
	// The run id in the name lets `dbduel clean --run` find the directory
	// of a run that was killed before it could remove it.
	base := ledger.Dir()
	if s.o.Rootless != "" {
		base = os.TempDir() // the state directory is root's alone; the rootless runtime mounts from here
	}
	if s.hostDir, err = os.MkdirTemp(base, hostDirPrefix+s.runID+"-"+s.name+"-"); err != nil {
		return err
	}
	os.Chmod(s.hostDir, 0o755)
	port, err := provision.FreePort()
	if err != nil {
		return err
	}
	hc := &container.HostConfig{
		Mounts: []mount.Mount{{Type: mount.TypeBind, Source: s.hostDir, Target: configDir, ReadOnly: true}},
	}
	cc := &container.Config{Image: s.o.Image, Labels: s.labels()}
	cmd, err := s.imageSetup(cc, port)
	if err != nil {
		return err
	}
	cc.Env = append(cc.Env, s.o.Env...)
	if s.o.Network == "host" {
		hc.NetworkMode = "host"
	} else {
		hc.NetworkMode = "bridge"
		if s.o.Rootless != "" {
			// A network of the container's own through slirp4netns, its
			// port through rootlessport: rootless Podman's default for
			// `podman run -p`. (Its "bridge" puts the container on the
			// rootless netns's netavark bridge, whose port setup hung here
			// beside a rootful Podman service.)
			hc.NetworkMode = "slirp4netns"
		}
		p := nat.Port(strconv.Itoa(s.protocol().Image.Port) + "/tcp")
		cc.ExposedPorts = nat.PortSet{p: {}}
		hostPort := strconv.Itoa(port)
		if s.remote() {
			hostPort = "" // free there, not here: the engine picks it
		}
		hc.PortBindings = nat.PortMap{p: {{HostIP: s.publishAddr(), HostPort: hostPort}}}
	}
	s.ep.Host = s.publishAddr()
	if err := s.mountDatadir(ctx, hc, s.protocol().Image.Datadir); err != nil {
		return err
	}
	s.limits(hc)
	cc.Cmd = append(cmd, s.o.Args...)

	created, err := cli.ContainerCreate(ctx, cc, hc, nil, nil, "dbduel-"+s.runID+"-"+s.name)
	if err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	s.id = created.ID
	if err := cli.ContainerStart(ctx, s.id, container.StartOptions{}); err != nil {
		return fmt.Errorf("start container: %v (%s)", err, s.lastLogs(5))
	}
	if s.remote() && s.o.Network != "host" {
		if err := s.readPublishedPort(ctx); err != nil {
			return err
		}
	}
	return s.waitReady(ctx, readyTimeout)
}

// mountDatadir mounts the SPEC's datadir kind at path: a labelled named
// volume (volume), a host directory (bind), or nothing: the container's
// own overlay filesystem (overlay).
func (s *Server) mountDatadir(ctx context.Context, hc *container.HostConfig, path string) error {
	s.dataPath = path
	if s.o.Datadir == "overlay" && path != AgentDataDir {
		s.dataPath = overlayDatadir
	}
	if TestDatadirTmpfs > 0 {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeTmpfs, Target: s.dataPath,
			TmpfsOptions: &mount.TmpfsOptions{SizeBytes: TestDatadirTmpfs, Mode: 0o777}})
		return nil
	}
	switch s.o.Datadir {
	case "volume":
		s.volumeName = "dbduel-" + s.runID + "-" + s.name
		if _, err := s.cli.VolumeCreate(ctx, volume.CreateOptions{Name: s.volumeName, Labels: s.labels()}); err != nil {
			return fmt.Errorf("create volume: %w", err)
		}
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeVolume, Source: s.volumeName, Target: path})
	case "bind":
		dir := filepath.Join(s.hostDir, "datadir")
		if err := os.Mkdir(dir, 0o777); err != nil {
			return err
		}
		os.Chmod(dir, 0o777) // the server runs as the image's own user
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: dir, Target: path})
	}
	return nil
}

// limits sets the SPEC's limits, and the ulimits Podman's defaults get
// wrong.
func (s *Server) limits(hc *container.HostConfig) {
	s.o.applyLimits(hc)
	if s.eng != nil && s.eng.kind == enginePodman {
		podmanLimits(hc, s.eng.service.pid())
	}
}

// applyLimits sets the SPEC's memory, cpus, cpuset, seccomp, shm and ulimits.
func (o Options) applyLimits(hc *container.HostConfig) {
	if o.ShmBytes > 0 {
		hc.ShmSize = o.ShmBytes
	}
	for _, u := range o.Ulimits {
		hc.Ulimits = append(hc.Ulimits, &container.Ulimit{Name: u.Name, Soft: u.Soft, Hard: u.Hard})
	}
	if o.Seccomp != "" {
		hc.SecurityOpt = append(hc.SecurityOpt, "seccomp="+o.Seccomp)
	}
	if o.MemoryBytes > 0 {
		hc.Memory = o.MemoryBytes
	}
	if o.CPUs > 0 {
		hc.NanoCPUs = int64(o.CPUs * 1e9)
	}
	if o.Cpuset != "" {
		hc.CpusetCpus = o.Cpuset
	}
}

// ensureImage checks the image is present; with pull=missing it pulls it within 30 s.
func (s *Server) ensureImage(ctx context.Context) error {
	if _, err := s.cli.ImageInspect(ctx, s.o.Image); err == nil {
		return nil
	} else if !client.IsErrNotFound(err) && !strings.Contains(err.Error(), "No such image") {
		return fmt.Errorf("inspect image %s: %w", s.o.Image, err)
	}
	if s.eng != nil && s.eng.kind == enginePodman {
		if copied, err := s.copyFromDocker(ctx); err != nil || copied {
			return err
		}
	}
	if s.o.Pull != "missing" {
		return fmt.Errorf("image %s is not present and pull=never: build the test image with scripts/build-test-image.sh, or add pull=missing", s.o.Image)
	}
	pctx, cancel := context.WithTimeout(ctx, pullTimeout)
	defer cancel()
	rc, err := s.cli.ImagePull(pctx, s.o.Image, image.PullOptions{})
	if err != nil {
		return fmt.Errorf("pull %s: %v", s.o.Image, driver.OneLine(err.Error()))
	}
	defer rc.Close()
	if err := showPullProgress(rc, s.progress); err != nil {
		return fmt.Errorf("pull %s: %v", s.o.Image, driver.OneLine(err.Error()))
	}
	if _, err := s.cli.ImageInspect(ctx, s.o.Image); err != nil {
		return fmt.Errorf("pull %s: image still missing after pull", s.o.Image)
	}
	return nil
}

// showPullProgress relays the engine's pull messages (one line per layer
// status change) and returns the first error the stream reports.
func showPullProgress(r io.Reader, out io.Writer) error {
	dec := json.NewDecoder(r)
	last := map[string]string{}
	for {
		var m struct {
			ID, Status, Error string
			ProgressDetail    struct{ Current, Total int64 }
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
		if out != nil && last[m.ID] != m.Status {
			last[m.ID] = m.Status
			fmt.Fprintf(out, "dbduel: pull %s %s\n", m.ID, m.Status)
		}
	}
}

// waitReady connects until the server answers; a container that exits or a
// timeout is reported with its last log lines, and every startNoteEvery a
// line says what the container is doing meanwhile (a first start under
// memory pressure can take minutes).
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	start := time.Now()
	deadline, nextNote := start.Add(timeout), start.Add(startNoteEvery)
	for {
		if driver.Ping(ctx, s.ep, 2*time.Second) == nil {
			s.recordStart(ctx) // a later restart is told from this start
			return driver.Ready(ctx, s.ep)
		}
		insp, ierr := s.cli.ContainerInspect(ctx, s.id)
		if ierr == nil && insp.State != nil && !insp.State.Running {
			return fmt.Errorf("container exited during start-up (code %d%s): %s", insp.State.ExitCode, oomNote(insp.State), s.lastLogs(5))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server in container did not accept connections within %s: %s", timeout, s.lastLogs(5))
		}
		if now := time.Now(); now.After(nextNote) && ierr == nil && s.progress != nil {
			fmt.Fprintf(s.progress, "dbduel: %s is still starting after %s: %s; %s\n", s.name, now.Sub(start).Round(time.Second), startingState(insp), s.lastLogs(1))
			nextNote = now.Add(startNoteEvery)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// startNoteEvery is how often waitReady says what a slow start is doing.
var startNoteEvery = 15 * time.Second

func oomNote(st *container.State) string {
	if st.OOMKilled {
		return ", OOM-killed: its memory limit is too small for the server"
	}
	return ""
}

// startingState is what a starting container is doing, from the engine
// and its cgroup: running (its first start initialises the datadir), its
// memory against its limit.
func startingState(insp container.InspectResponse) string {
	msg := "the container runs, its server not yet accepting connections (a first start initialises the datadir)"
	if insp.State == nil || insp.State.Pid == 0 {
		return msg
	}
	u := readCgroupUsage(insp.State.Pid)
	if limit := insp.HostConfig.Memory; limit > 0 {
		msg += fmt.Sprintf("; memory %s of its %s limit", mib(u.memBytes), mib(uint64(limit)))
		if float64(u.memBytes) > 0.9*float64(limit) {
			msg += " (near the limit: it reclaims memory, slowly; give it more with memory=)"
		}
	} else if u.memBytes > 0 {
		msg += "; memory " + mib(u.memBytes)
	}
	return msg
}

// lastLogs returns the container's last n log lines, joined on one line.
func (s *Server) lastLogs(n int) string {
	if s.cli == nil || s.id == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := s.cli.ContainerLogs(ctx, s.id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(n)})
	if err != nil {
		return "no logs: " + err.Error()
	}
	defer rc.Close()
	var out bytes.Buffer
	_, _ = stdcopy.StdCopy(&out, &out, rc)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	return "last log lines: " + strings.Join(lines, " | ")
}

// Describe reads back from docker inspect, the cgroup files and the server.
func (s *Server) Describe(ctx context.Context) (result.Target, error) {
	t := result.Target{Name: s.name, Kind: "container", SpecRedacted: s.SpecRedacted()}
	v, datadir, err := driver.ServerInfo(ctx, s.ep)
	if err != nil {
		return t, err
	}
	t.ServerVersion = v
	insp, err := s.cli.ContainerInspect(ctx, s.id)
	if err != nil {
		return t, err
	}
	d := &t.Described
	d.Image = insp.Config.Image
	d.ImageID = insp.Image
	d.Address = net.JoinHostPort(s.ep.Host, strconv.Itoa(s.ep.Port))
	d.Engine, d.Host, d.ClientPlacement = s.eng.kind, specs.HostOf(s.cli.DaemonHost()), "here"
	switch mode := string(insp.HostConfig.NetworkMode); mode {
	case "host", "none", "slirp4netns":
		d.NetworkMode = mode
	default:
		d.NetworkMode = "bridge"
	}
	if s.remote() && d.NetworkMode == "bridge" {
		// The engine's host has its own (docker-proxy or NAT alone): not
		// readable from here.
		d.NetworkPath = "remote-published"
	} else {
		d.NetworkPath = networkPath(d.NetworkMode, s.ep.Port)
	}
	if datadir == "" {
		// The server does not say (FerretDB): the path dbduel gave it; the
		// mount on it is still read back below.
		datadir = s.protocol().Image.Datadir
		if s.o.Datadir == "overlay" {
			datadir = overlayDatadir
		}
	}
	datadir = strings.TrimSuffix(datadir, "/")
	d.Datadir = &result.Datadir{Kind: "overlay", Path: datadir}
	for _, m := range insp.Mounts {
		if strings.TrimSuffix(m.Destination, "/") != datadir {
			continue
		}
		switch m.Type {
		case mount.TypeVolume:
			d.Datadir.Kind = "volume"
		case mount.TypeBind:
			d.Datadir.Kind = "bind"
		}
	}
	if s.remote() {
		insp.State.Pid = 0 // its /proc and cgroups are the other host's: what the engine says stands
	} else {
		d.Datadir.FSType = s.fstypeInside(ctx, datadir)
	}
	readLimits(d, insp)
	d.Seccomp = "default"
	for _, o := range insp.HostConfig.SecurityOpt {
		if strings.HasPrefix(o, "seccomp") {
			d.Seccomp = strings.TrimPrefix(strings.TrimPrefix(o, "seccomp="), "seccomp:")
		}
	}
	d.SeccompMode = hostinfo.SeccompMode(insp.State.Pid)
	d.CPUScope = "cgroup"
	if insp.State.Pid != 0 && !hasOwnCgroup(insp.State.Pid) {
		d.CPUScope = "pid namespace" // rootless on cgroup v1: no cgroup of its own
	}
	d.Rootless = s.o.Rootless != ""
	return t, nil
}

// fstypeInside reads the datadir's filesystem type from the server
// process's own mount table (as the container sees it).
func (s *Server) fstypeInside(ctx context.Context, datadir string) string {
	insp, err := s.cli.ContainerInspect(ctx, s.id)
	if err != nil || insp.State == nil || insp.State.Pid == 0 {
		return ""
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(insp.State.Pid) + "/mountinfo")
	if err != nil {
		return ""
	}
	return hostinfo.FSTypeAt(string(data), datadir)
}

// networkPath says how a client on 127.0.0.1 reaches the server: directly
// (host network), through a userland forwarder (docker-proxy, or rootless
// Podman's rootlessport), or by the kernel's NAT straight to the bridge.
func networkPath(mode string, port int) string {
	if mode == "host" {
		return "direct"
	}
	if _, name := forwarderOf("/proc", port); name != "" {
		return name
	}
	return "bridge-direct"
}

// Sample reads the container's CPU and memory from its cgroup, and the CPU
// of the docker-proxy in front of it (the userland port forwarder's cost is
// part of what a published port costs).
func (s *Server) Sample(ctx context.Context) (targets.Sample, error) {
	if s.remote() {
		return s.remoteSample(ctx)
	}
	if s.pid == 0 {
		insp, err := s.cli.ContainerInspect(ctx, s.id)
		if err != nil {
			return targets.Sample{}, err
		}
		s.pid = insp.State.Pid
		s.proxyPID, _ = forwarderOf("/proc", s.ep.Port)
	}
	cg := readCgroupUsage(s.pid)
	if !hasOwnCgroup(s.pid) {
		cg = readPIDNamespaceUsage("/proc", s.pid)
	}
	if !cg.ok {
		return targets.Sample{}, errors.New("container cgroup not readable")
	}
	out := targets.Sample{At: time.Now(), CPUNS: cg.cpuNS, MemBytes: cg.memBytes, ProxyCPUNS: hostinfo.ProcCPU(s.proxyPID), ThrottledNS: cg.throttledNS,
		Periods: cg.periods, ThrottledPeriods: cg.throttledPeriods}
	if s.o.Network != "host" {
		out.NetRxBytes, out.NetTxBytes, out.NetMeasured = readNetDev("/proc", s.pid)
	}
	return out, nil
}

// Restart restarts the container (same datadir and port).
func (s *Server) Restart(ctx context.Context) error {
	timeout := 30
	if err := s.cli.ContainerRestart(ctx, s.id, container.StopOptions{Timeout: &timeout}); err != nil {
		return err
	}
	s.pid, s.proxyPID = 0, 0
	return s.waitReady(ctx, readyTimeout)
}

// ConfigFiles is the SPEC's cnf= file (Reconfigurer).
func (s *Server) ConfigFiles() []string {
	if s.o.Cnf == "" {
		return nil
	}
	return []string{s.o.Cnf}
}

// Reconfigure copies the cnf= file into the container's mounted config
// directory again and restarts the container on its data (Reconfigurer).
func (s *Server) Reconfigure(ctx context.Context) error {
	if _, err := s.userConfig(s.protocol().Config.UserName); err != nil {
		return fmt.Errorf("cnf=%s: %w", s.o.Cnf, err)
	}
	return s.Restart(ctx)
}

// Stop removes the container, its volume(s) and the host files.
func (s *Server) Stop(ctx context.Context) error {
	var errs []error
	if s.cli != nil && s.id != "" {
		if err := s.cli.ContainerRemove(ctx, s.id, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !client.IsErrNotFound(err) {
			errs = append(errs, s.leftBehind("container dbduel-"+s.runID+"-"+s.name, err))
		}
		s.id = ""
	}
	if s.cli != nil && s.volumeName != "" {
		if err := s.cli.VolumeRemove(ctx, s.volumeName, true); err != nil && !client.IsErrNotFound(err) {
			errs = append(errs, s.leftBehind("volume "+s.volumeName, err))
		}
		s.volumeName = ""
	}
	if s.hostDir != "" {
		os.RemoveAll(s.hostDir)
		s.hostDir = ""
	}
	if s.eng != nil {
		s.eng.close() // the private Podman service, if any, with it
		s.eng = nil
	}
	return errors.Join(errs...)
}

// Leftover is something of dbduel's found by label.
type Leftover struct{ Kind, ID, RunID string }

// Clean removes every container and volume carrying dbduel's label (of one
// run id when runID is set), in the Docker engine and, where Podman is
// installed, in Podman's store (through a private service), and returns
// what it removed. With inProgress set, objects whose dbduel still runs
// are left alone and their runs recorded there (run id -> pid).
func Clean(ctx context.Context, runID string, inProgress map[string]int) ([]Leftover, error) {
	skip := func(labels map[string]string) bool {
		if inProgress == nil {
			return false
		}
		if pid, alive := ledger.OwnerAlive(labels[ledger.OwnerLabel]); alive {
			inProgress[labels[ledger.Label]] = pid
			return true
		}
		return false
	}
	cli, err := NewClient()
	if err != nil {
		return nil, err
	}
	out, err := cleanEngine(ctx, cli, "Docker engine", runID, skip)
	cli.Close()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	if _, lookErr := exec.LookPath("podman"); lookErr == nil {
		pauses := killedRootlessPauses(runID, func(id string) bool { _, busy := inProgress[id]; return busy })
		left, err := cleanPodman(ctx, runID, skip, pauses)
		out = append(out, left...)
		errs = append(errs, err)
	}
	dirs, err := removeHostDirs(runID, func(id string) bool { _, busy := inProgress[id]; return busy })
	out = append(out, dirs...)
	return out, errors.Join(append(errs, err)...)
}

// killedRootlessPauses ends what is left of killed runs' rootless
// services (rootless Podman re-executes itself in the user namespace, and
// that process has no parent-death signal) and reads the pause processes
// they recorded (by uid), to end with a clean once their users have no
// running container left.
func killedRootlessPauses(runID string, busy func(string) bool) map[int][]int {
	out := map[int][]int{}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), hostDirPrefix+runID+"*-podman-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), hostDirPrefix)
		if (runID != "" && !strings.HasPrefix(rest, runID+"-")) || skipsAnyPrefix(rest, busy) {
			continue
		}
		endServiceOf("/proc", d)
		recordedPauses(d, out)
	}
	return out
}

// cleanPodman cleans Podman's stores: root's, and (when dbduel runs as
// root) each rootless user's that has one, each through a private service
// of its own; a user's pause processes that killed runs left (pauses, by
// uid) end with it once the user has no running container.
func cleanPodman(ctx context.Context, runID string, skip func(map[string]string) bool, pauses map[int][]int) ([]Leftover, error) {
	users := []string{""}
	if os.Getuid() == 0 {
		for _, u := range rootlessUsers("/") {
			users = append(users, u.name)
		}
	}
	var out []Leftover
	var errs []error
	for _, u := range users {
		what := "Podman"
		if u != "" {
			what = "rootless Podman of " + u
		}
		pm, err := connectEngine(ctx, enginePodman, "clean", runID, u)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		left, err := cleanEngine(ctx, pm.cli, what, runID, skip)
		if pm.service.rootless != "" {
			notePausesOf(pm.service.uid, pauses[pm.service.uid])
		}
		pm.close()
		out = append(out, left...)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// cleanEngine removes dbduel's labelled containers and volumes from one
// engine (what names it in errors).
func cleanEngine(ctx context.Context, cli *client.Client, what, runID string, skip func(map[string]string) bool) ([]Leftover, error) {
	f := filters.NewArgs()
	if runID != "" {
		f.Add("label", ledger.Label+"="+runID)
	} else {
		f.Add("label", ledger.Label)
	}
	var out []Leftover
	var errs []error
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, c := range cs {
		if skip(c.Labels) {
			continue
		}
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Leftover{Kind: "container", ID: c.ID[:12], RunID: c.Labels[ledger.Label]})
	}
	vs, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return out, fmt.Errorf("%s: %w", what, err)
	}
	for _, v := range vs.Volumes {
		if skip(v.Labels) {
			continue
		}
		if err := cli.VolumeRemove(ctx, v.Name, true); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Leftover{Kind: "volume", ID: v.Name, RunID: v.Labels[ledger.Label]})
	}
	return out, errors.Join(errs...)
}

// hostDirPrefix starts the name of every container's host directory (its
// generated config, a bind datadir) in the state directory; the run id
// follows.
const hostDirPrefix = "dbduel-container-"

// removeHostDirs removes the host directories that killed runs left in the
// state directory: of one run, or of every run when runID is empty (as
// Clean then removes every dbduel container, none of them is in use).
func removeHostDirs(runID string, skip func(string) bool) ([]Leftover, error) {
	dirs, err := filepath.Glob(filepath.Join(ledger.Dir(), hostDirPrefix+runID+"*"))
	if err != nil {
		return nil, err
	}
	// A private Podman service's socket directory, or a rootless
	// container's host directory: in the temporary directory where the
	// state directory's path is too long for a socket (socketDir) or
	// another user must reach it.
	if tmp, _ := filepath.Glob(filepath.Join(os.TempDir(), hostDirPrefix+runID+"*")); ledger.Dir() != os.TempDir() {
		dirs = append(dirs, tmp...)
	}
	var out []Leftover
	var errs []error
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), hostDirPrefix)
		if runID != "" && !strings.HasPrefix(rest, runID+"-") {
			continue // another run whose id merely starts with this one
		}
		if skip != nil && skipsAnyPrefix(rest, skip) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, Leftover{Kind: "host dir", ID: d, RunID: runID}) // the path names the run
	}
	return out, errors.Join(errs...)
}

// protocol is the SPEC's protocol, as the registry knows it (Start has
// set s.o.Protocol from the SPEC or the image).
func (s *Server) protocol() *driver.Protocol {
	p, err := driver.Lookup(s.o.Protocol)
	if err != nil {
		panic("container: unregistered protocol " + s.o.Protocol) // ParseSpec and imageProtocol admit only registered ones
	}
	return p
}

// imageProtocol reads the protocol from the port the image exposes.
func (s *Server) imageProtocol(ctx context.Context) (string, error) {
	insp, err := s.cli.ImageInspect(ctx, s.o.Image)
	if err != nil {
		return "", fmt.Errorf("inspect image %s: %w", s.o.Image, err)
	}
	var found []string
	if insp.Config != nil {
		for p := range insp.Config.ExposedPorts {
			found = append(found, string(p))
			n, _, _ := strings.Cut(string(p), "/")
			port, _ := strconv.Atoi(n)
			if proto, ok := driver.ForPort(port); ok {
				return proto.Name, nil
			}
		}
	}
	var known, keys []string
	for _, p := range driver.All() {
		if p.Image.Setup != nil {
			known = append(known, fmt.Sprintf("%s's %d", p.Title, p.Image.Port))
			keys = append(keys, "protocol="+p.Name)
		}
	}
	return "", &specs.UsageError{Msg: fmt.Sprintf("docker: image %s exposes %v, none of %s: say which with %s", s.o.Image, found, strings.Join(known, ", "), strings.Join(keys, " or "))}
}

// userConfig copies the SPEC's cnf= file into the directory mounted at
// configDir as name, and returns its path inside the container ("" when
// the SPEC has none).
func (s *Server) userConfig(name string) (string, error) {
	if s.o.Cnf == "" {
		return "", nil
	}
	data, err := os.ReadFile(s.o.Cnf)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(s.hostDir, name), data, 0o644); err != nil {
		return "", err
	}
	return configDir + "/" + name, nil
}

// imageSetup writes the protocol's config files into the mounted config
// directory (dbduel's shared file, then the SPEC's cnf= beside it) and
// sets the container's environment; it returns the server's arguments.
func (s *Server) imageSetup(cc *container.Config, port int) ([]string, error) {
	p := s.protocol()
	in := driver.ImageSetup{ConfigDir: configDir, Port: port, HostNetwork: s.o.Network == "host", Password: provision.NewPassword()}
	var err error
	if in.UserConfig, err = s.userConfig(p.Config.UserName); err != nil {
		return nil, err
	}
	if p.Config.Name != "" {
		if err := os.WriteFile(filepath.Join(s.hostDir, p.Config.Name), p.Config.Render(in.UserConfig), 0o644); err != nil {
			return nil, err
		}
		in.ConfigFile = configDir + "/" + p.Config.Name
	}
	if s.o.Datadir == "overlay" {
		in.OverlayDatadir = overlayDatadir
	}
	st := p.Image.Setup(in)
	s.ep = st.Endpoint
	s.ep.Host, s.ep.Port = "127.0.0.1", port
	cc.Env = st.Env
	cc.StopSignal = st.StopSignal
	return st.Cmd, nil
}

// EngineInfo is the Docker engine's version and storage driver, or why they
// cannot be read (for the environment fingerprint).
func EngineInfo(ctx context.Context) (version, storageDriver string, err error) {
	cli, err := NewClient()
	if err != nil {
		return "", "", err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	info, err := cli.Info(ctx)
	if err != nil {
		return "", "", errors.New(driver.OneLine(err.Error()))
	}
	return info.ServerVersion, info.Driver, nil
}

// skipsAnyPrefix asks skip about every run id the directory name may start
// with (run ids may hold dashes: "test-1a2b").
func skipsAnyPrefix(rest string, skip func(string) bool) bool {
	for i := strings.IndexByte(rest, '-'); i > 0; i = nextDash(rest, i) {
		if skip(rest[:i]) {
			return true
		}
	}
	return false
}

func nextDash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '-')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// Respec gives the container a new SPEC (Respecer): new memory, cpus or
// cpuset only are Docker's update in place, then a restart on its data
// (its server sizes itself for them); a new network, datadir, args, env,
// cnf, shm, ulimit or seccomp needs a new container: this one is removed
// (its data with it: the tables are prepared again) and another started
// under the same name. The image, the protocol, the engine, where the
// port is published and where the client runs do not change here.
func (s *Server) Respec(ctx context.Context, spec string) error {
	o, err := s.respecOptions(spec)
	if err != nil {
		return err
	}
	if !s.limitsOnly(o) {
		if err := s.Stop(ctx); err != nil {
			return err
		}
		s.o, s.spec, s.pid, s.proxyPID = o, spec, 0, 0
		return s.Start(ctx)
	}
	r := container.Resources{NanoCPUs: int64(o.CPUs * 1e9), CpusetCpus: o.Cpuset}
	if o.MemoryBytes > 0 {
		// As at create: swap up to the memory again (Docker's default).
		r.Memory, r.MemorySwap = o.MemoryBytes, 2*o.MemoryBytes
	}
	if _, err := s.cli.ContainerUpdate(ctx, s.id, container.UpdateConfig{Resources: r}); err != nil {
		return fmt.Errorf("docker update: %w", err)
	}
	s.o.MemoryBytes, s.o.CPUs, s.o.Cpuset = o.MemoryBytes, o.CPUs, o.Cpuset
	s.spec = spec
	return s.Restart(ctx)
}

// CheckRespec says whether Respec would take spec (Respecer).
func (s *Server) CheckRespec(spec string) error {
	_, err := s.respecOptions(spec)
	return err
}

// respecOptions are the options of a new SPEC for this container, refused
// when it changes more than its limits or removes one.
func (s *Server) respecOptions(spec string) (Options, error) {
	prefix := s.spec[:strings.Index(s.spec, ":")+1] // docker: or podman:
	if !strings.HasPrefix(spec, prefix) {
		return Options{}, &specs.UsageError{Msg: "the SPEC must stay " + prefix + "IMAGE,..."}
	}
	o, err := ParseSpec(strings.TrimPrefix(spec, prefix))
	if err != nil {
		return o, err
	}
	// What start-up settled (the protocol read from the image, the
	// engine the prefix or the environment chose, Podman's pull default).
	if o.Protocol == "" {
		o.Protocol = s.o.Protocol
	}
	if o.Engine == "" {
		o.Engine = s.o.Engine
	}
	if !o.pullGiven {
		o.Pull, o.pullGiven = s.o.Pull, s.o.pullGiven
	}
	if o.Image != s.o.Image || o.Protocol != s.o.Protocol || o.Engine != s.o.Engine || o.Publish != s.o.Publish || o.Client != s.o.Client {
		return o, &specs.UsageError{Msg: "the image, protocol=, engine=, publish= and client= stay as the session started (another image is another comparison: dbduel run)"}
	}
	if s.limitsOnly(o) && (o.MemoryBytes == 0 && s.o.MemoryBytes > 0 || o.CPUs == 0 && s.o.CPUs > 0 || o.Cpuset == "" && s.o.Cpuset != "") {
		return o, &specs.UsageError{Msg: "a limit can be changed in place, not removed (dbduel run starts a container without it)"}
	}
	return o, nil
}

// limitsOnly says o differs from the container's options in memory, cpus
// and cpuset at most: Docker updates those in place.
func (s *Server) limitsOnly(o Options) bool {
	same := o
	same.MemoryBytes, same.CPUs, same.Cpuset = s.o.MemoryBytes, s.o.CPUs, s.o.Cpuset
	return fmt.Sprintf("%+v", same) == fmt.Sprintf("%+v", s.o)
}
