package container

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/driver"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"

	"github.com/dbduel/dbduel/targets/provision"
	"github.com/dbduel/dbduel/targets/specs"
)

// Prepare connects to the engine, pulls the image as the SPEC says and
// checks that dbduel can run it: dbduel prepares every target before it
// starts any, so an image it cannot run is refused before a server starts.
func (s *Server) Prepare(ctx context.Context) error {
	return s.prepare(ctx, true)
}

// prepare is Prepare; server is false for dbduel's agent, which runs in
// the image as root and serves no protocol.
func (s *Server) prepare(ctx context.Context, server bool) error {
	if s.prepared {
		return nil
	}
	if s.eng == nil { // a Prepare that failed after connecting kept its engine, for Stop
		eng, err := connectEngine(ctx, s.o, s.name, s.runID)
		if err != nil {
			return err
		}
		s.eng, s.cli = eng, eng.cli
	}
	if !s.pulled {
		// Once per target: a live respec restarts the container on the
		// image it ran, never a newer pull=always brought mid-session.
		if err := s.ensureImage(ctx); err != nil {
			return err
		}
		s.pulled = true
	}
	insp, err := s.cli.ImageInspect(ctx, s.o.Image)
	if err != nil {
		return fmt.Errorf("inspect image %s: %w", s.o.Image, err)
	}
	ver, err := s.cli.ServerVersion(ctx)
	if err != nil {
		return fmt.Errorf("engine version: %w", err)
	}
	user := imageUser(insp.Config)
	if !server {
		user = "0:0"
	}
	if err := runnable(s.o, insp.Os, insp.Architecture, user, ver.Os, ver.Arch, s.emulates); err != nil {
		return err
	}
	if server && s.o.Protocol == "" {
		if s.o.Protocol, err = s.imageProtocol(ctx); err != nil {
			return err
		}
	}
	s.prepared = true
	return nil
}

// Start creates and starts the container and waits until the server answers.
func (s *Server) Start(ctx context.Context) error {
	if err := s.Prepare(ctx); err != nil {
		return err
	}
	cli := s.cli
	var err error
	if s.hostDir, s.cfgDir, err = makeHostDir(s.runID, s.name, s.o.Rootless != ""); err != nil {
		return err
	}
	port, err := provision.FreePort()
	if err != nil {
		return err
	}
	hc := &container.HostConfig{
		Mounts: []mount.Mount{{Type: mount.TypeBind, Source: s.cfgDir, Target: configDir, ReadOnly: true}},
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
	if size, ok := TestDatadirTmpfs.Load(s.runID); ok {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeTmpfs, Target: s.dataPath,
			TmpfsOptions: &mount.TmpfsOptions{SizeBytes: size.(int64), Mode: 0o777}})
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

// ensureImage makes the image present as docker run would: pull=missing
// (the default) pulls it when absent, pull=always pulls it anew and says
// whether its digest changed, pull=never refuses. A Podman target first
// copies it from Docker's store.
func (s *Server) ensureImage(ctx context.Context) error {
	img := s.o.Image
	before, err := s.cli.ImageInspect(ctx, img)
	present := err == nil
	if err != nil && !client.IsErrNotFound(err) && !strings.Contains(err.Error(), "No such image") {
		return fmt.Errorf("inspect image %s: %w", img, err)
	}
	if present && s.o.Pull != "always" {
		return nil
	}
	if !present && s.eng != nil && s.eng.kind == enginePodman && s.o.Pull != "always" {
		if copied, err := s.copyFromDocker(ctx); err != nil || copied {
			return err
		}
	}
	switch {
	case strings.HasPrefix(img, testImagePrefix) && !present:
		return fmt.Errorf("image %s is one of this project's test images, built locally, not pulled: build it with scripts/build-test-image.sh", img)
	case strings.HasPrefix(img, testImagePrefix):
		return nil // pull=always of a local build: there is no registry to ask
	case s.o.Pull == "never":
		return fmt.Errorf("image %s is not present and pull=never: pull it (docker pull %s), or drop pull=never", img, img)
	}
	if err := s.pullImage(ctx, img, s.pullStall(), s.progress); err != nil {
		return err
	}
	after, err := s.cli.ImageInspect(ctx, img)
	if err != nil {
		return fmt.Errorf("pull %s: image still missing after the pull", img)
	}
	if present && s.progress != nil {
		was, now := imageDigest(before.RepoDigests, img, before.ID), imageDigest(after.RepoDigests, img, after.ID)
		if was == before.ID && before.ID != after.ID {
			// It had no digest of this repository: a local build or load.
			fmt.Fprintf(s.progress, "dbduel: pull %s: the registry's image %s replaces a local one (%s)\n", img, now, before.ID)
		} else if was == now {
			fmt.Fprintf(s.progress, "dbduel: pull %s: digest unchanged, %s\n", img, now)
		} else {
			fmt.Fprintf(s.progress, "dbduel: pull %s: digest changed, %s → %s\n", img, was, now)
		}
	}
	return nil
}

// pullStall is the target's --pull-stall-timeout.
func (s *Server) pullStall() time.Duration {
	if s.stall > 0 {
		return s.stall
	}
	return DefaultPullStallTimeout
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
	path := filepath.Join(s.cfgDir, name) // a live edit writes it anew
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	if err := provision.WriteNew(path, data, 0o644, -1, -1); err != nil {
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
		if err := provision.WriteNew(filepath.Join(s.cfgDir, p.Config.Name), p.Config.Render(in.UserConfig), 0o644, -1, -1); err != nil {
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
