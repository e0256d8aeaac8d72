package container

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/driver"

	"github.com/docker/docker/api/types/mount"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/hostinfo"
	"github.com/dbduel/dbduel/targets/specs"
)

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
	d.Image, d.ImageUser = insp.Config.Image, insp.Config.User
	d.ImageID, d.ImageDigest = insp.Image, insp.Image
	if img, err := s.cli.ImageInspect(ctx, insp.Image); err == nil {
		d.ImageDigest = imageDigest(img.RepoDigests, insp.Config.Image, insp.Image)
	}
	d.Address = net.JoinHostPort(s.ep.Host, strconv.Itoa(s.ep.Port))
	d.Engine, d.Host, d.ClientPlacement = s.eng.kind, specs.HostOf(s.eng.addr), "here"
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
