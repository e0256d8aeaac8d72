package container

import (
	"context"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/container"

	"github.com/dbduel/dbduel/targets/specs"
)

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
