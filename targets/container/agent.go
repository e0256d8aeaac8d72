package container

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/hostinfo"
	"github.com/dbduel/dbduel/targets/provision"
	"github.com/dbduel/dbduel/targets/specs"
)

// Where the agent lives in its container: its binary, and the directory
// a database's datadir would be (fileio's files go there).
const (
	agentBinary  = "/.dbduel/dbduel"
	AgentDataDir = "/var/lib/dbduel"
	agentTimeout = 30 * time.Second
)

// Agent is a container that runs dbduel's agent instead of a database
// server, for the system micro-benchmarks: a copy of the dbduel binary,
// started in a container made from the image with the SPEC's limits,
// network and datadir, answering the engine over its attached stdin and
// stdout (no network needed).
type Agent struct {
	*Server
	binary string
	conn   types.HijackedResponse
	stderr *provision.TailBuffer
	dial   AgentDialer
	client AgentClient
	netOf  string // a container whose network namespace the agent joins ("": the SPEC's network)
}

// AgentClient is the engine's side of dbduel's agent: a DB that runs the
// workload inside the container. The container target does not know the
// engine; its caller (ui/cli) makes the client from the agent's stdio.
type AgentClient interface {
	driver.DB
	// SystemFacts are the agent's own view of its place (CPUs, quota,
	// filesystem, O_DIRECT), read at hello.
	SystemFacts() map[string]string
	// Reach names the server the agent's workloads connect to, and the
	// workload's flags.
	Reach(ep driver.Endpoint, args []string)
}

// AgentDialer says hello to an agent over its attached stdin and stdout
// within timeout; lost explains a missing answer (the agent's last words).
type AgentDialer func(ctx context.Context, stdin io.Writer, stdout io.Reader, dir string, timeout time.Duration, lost func() string) (AgentClient, error)

// AgentGrouper makes one client of several agents that share a target's
// threads (agents=N); counter, idle during runs, reads the server's
// counters between them.
type AgentGrouper func(members []AgentClient, counter AgentClient) (AgentClient, error)

// agentKeys are the SPEC keys that mean something without a server.
var agentKeys = []string{"memory", "cpus", "cpuset", "network", "datadir", "pull", "env", "seccomp"}

// NewAgent returns an unstarted agent container for SPEC (without
// "docker:"); binary is the dbduel to copy in, dial makes its client.
func NewAgent(name, spec, runID, binary string, dial AgentDialer) (*Agent, error) {
	s, err := New(name, spec, runID)
	if err != nil {
		return nil, err
	}
	if s.o.Cnf != "" || len(s.o.Args) > 0 || s.o.Protocol != "" {
		return nil, &specs.UsageError{Msg: fmt.Sprintf("docker: the system micro-benchmarks run dbduel's agent, not a server: only %s apply", strings.Join(agentKeys, ", "))}
	}
	return &Agent{Server: s, binary: binary, dial: dial, stderr: &provision.TailBuffer{Max: 4096}}, nil
}

// Prepare connects to the engine, pulls the image as the SPEC says and
// checks its platform (the agent is a Linux binary of this machine's).
func (a *Agent) Prepare(ctx context.Context) error { return a.Server.prepare(ctx, false) }

// Endpoint is the host protocol: the agent runs the workload itself.
func (a *Agent) Endpoint() targets.Endpoint { return targets.Endpoint{Protocol: system.Protocol} }

// Start creates the container with the binary copied in, attaches to its
// stdin and stdout, starts it and waits for the agent's hello.
func (a *Agent) Start(ctx context.Context) error {
	s := a.Server
	if err := a.Prepare(ctx); err != nil {
		return err
	}
	cli := s.cli
	bin, err := os.ReadFile(a.binary)
	if err != nil {
		return fmt.Errorf("read the dbduel binary to copy into the container: %w", err)
	}
	if s.hostDir, s.cfgDir, err = makeHostDir(s.runID, s.name, false); err != nil {
		return err
	}
	hc := &container.HostConfig{NetworkMode: "bridge"}
	switch {
	case a.netOf != "":
		hc.NetworkMode = container.NetworkMode("container:" + a.netOf)
	case s.o.Network == "host":
		hc.NetworkMode = "host"
	}
	if a.netOf == "" {
		if err := s.mountDatadir(ctx, hc, AgentDataDir); err != nil {
			return err
		}
	}
	s.limits(hc)
	cc := &container.Config{Image: s.o.Image, Labels: s.labels(), Env: s.o.Env,
		Entrypoint: []string{agentBinary, "agent", "--dir", AgentDataDir}, Cmd: []string{},
		// root: the volume's directory belongs to root, whatever the image's user.
		User:      "0:0",
		OpenStdin: true, AttachStdin: true, AttachStdout: true, AttachStderr: true}
	created, err := cli.ContainerCreate(ctx, cc, hc, nil, nil, "dbduel-"+s.runID+"-"+s.name)
	if err != nil {
		return fmt.Errorf("create container: %w", err)
	}
	s.id = created.ID
	if err := cli.CopyToContainer(ctx, s.id, "/", binaryTar(bin), container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copy dbduel into the container: %w", err)
	}
	if a.conn, err = cli.ContainerAttach(ctx, s.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true}); err != nil {
		return fmt.Errorf("attach to the agent: %w", err)
	}
	if err := cli.ContainerStart(ctx, s.id, container.StartOptions{}); err != nil {
		return fmt.Errorf("start container: %v (%s)", err, s.lastLogs(5))
	}
	s.recordStart(ctx)
	stdout, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, a.stderr, a.conn.Reader)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	a.client, err = a.dial(ctx, a.conn.Conn, stdout, AgentDataDir, agentTimeout, a.lastWords)
	if err != nil {
		return fmt.Errorf("dbduel's agent in %s: %w", s.o.Image, err)
	}
	return nil
}

// lastWords is what the agent said on stderr and how its container ended.
func (a *Agent) lastWords() string {
	var parts []string
	if e := strings.TrimSpace(a.stderr.String()); e != "" {
		parts = append(parts, "agent said: "+driver.OneLine(e))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if d := a.Server.Diagnose(ctx); d != "" {
		parts = append(parts, d)
		if strings.Contains(a.stderr.String(), "no such file") || strings.Contains(d, "127") {
			parts = append(parts, "a dynamically linked dbduel cannot run in this image: build a static one (CGO_ENABLED=0 go build)")
		}
	}
	return strings.Join(parts, "; ")
}

// binaryTar is the tar stream CopyToContainer unpacks at /.
func binaryTar(bin []byte) io.Reader {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	_ = tw.WriteHeader(&tar.Header{Name: ".dbduel/", Typeflag: tar.TypeDir, Mode: 0o755})
	_ = tw.WriteHeader(&tar.Header{Name: ".dbduel/dbduel", Mode: 0o755, Size: int64(len(bin))})
	_, _ = tw.Write(bin)
	_ = tw.Close()
	return &buf
}

// Open gives the engine the agent (the same one for every pool).
func (a *Agent) Open(context.Context, int) (driver.DB, error) {
	if a.client == nil {
		return nil, errors.New("the agent is not running")
	}
	return a.client, nil
}

// Describe reads the container back and adds the agent's own view of its
// place: CPUs, quota, filesystem, O_DIRECT.
func (a *Agent) Describe(ctx context.Context) (result.Target, error) {
	s := a.Server
	t := result.Target{Name: s.name, Kind: "container", SpecRedacted: s.SpecRedacted()}
	insp, err := s.cli.ContainerInspect(ctx, s.id)
	if err != nil {
		return t, err
	}
	d := &t.Described
	d.Image, d.ImageID = insp.Config.Image, insp.Image
	d.Engine, d.Host, d.ClientPlacement = "docker", specs.HostOf(s.eng.addr), "inside"
	d.NetworkMode = "bridge"
	if string(insp.HostConfig.NetworkMode) == "host" {
		d.NetworkMode = "host"
	}
	facts := a.client.SystemFacts()
	d.Datadir = &result.Datadir{Kind: "overlay", Path: AgentDataDir, FSType: facts["fs_type"]}
	for _, m := range insp.Mounts {
		if strings.TrimSuffix(m.Destination, "/") == AgentDataDir {
			switch m.Type {
			case mount.TypeVolume:
				d.Datadir.Kind = "volume"
			case mount.TypeBind:
				d.Datadir.Kind = "bind"
			}
		}
	}
	readLimits(d, insp)
	d.Seccomp = "default"
	if s.o.Seccomp != "" {
		d.Seccomp = s.o.Seccomp
	}
	d.SeccompMode = hostinfo.SeccompMode(insp.State.Pid)
	d.System = facts
	return t, nil
}

// Restart has no server to restart: the agent keeps running.
func (a *Agent) Restart(context.Context) error { return nil }

// Stop ends the agent (its stdin closes) and removes the container, its
// volume and host files.
func (a *Agent) Stop(ctx context.Context) error {
	if a.conn.Conn != nil {
		_ = a.conn.CloseWrite()
		a.conn.Close()
		a.conn = types.HijackedResponse{}
	}
	return a.Server.Stop(ctx)
}

// NetnsClient is a database container whose benchmark client is dbduel's
// agent in a container of its own on the same engine: in the server's
// network namespace (client=netns), where the queries go over that
// namespace's loopback, neither through docker-proxy nor through the
// host's network stack (explain's bridge-direct rung); or beside it
// (client=beside), on the engine host's network, reaching the server's
// published port there: the load is generated on the database's host and
// only results cross the network to dbduel. The agent talks to dbduel
// over the engine's attach stream, local or remote.
type NetnsClient struct {
	*Server
	agent *Agent
	args  []string
}

// NewNetnsClient wraps a database container SPEC with client=netns; args
// are the workload's flags, binary the dbduel to copy into the client,
// dial makes its client.
func NewNetnsClient(s *Server, binary string, args []string, dial AgentDialer) *NetnsClient {
	return &NetnsClient{Server: s, args: args,
		agent: &Agent{Server: &Server{name: s.name + "-client", spec: s.spec, runID: s.runID, o: Options{Image: s.o.Image, Pull: "never", Engine: s.o.Engine, TLSDir: s.o.TLSDir, Network: agentNetwork(s.o.Client)}},
			binary: binary, dial: dial, stderr: &provision.TailBuffer{Max: 4096}}}
}

// Start starts the server, then the client container in its namespace.
func (n *NetnsClient) Start(ctx context.Context) error {
	if err := n.Server.Start(ctx); err != nil {
		return err
	}
	ep := n.Server.ep // beside: the published port, on the engine's host
	if n.o.Client == "netns" {
		n.agent.netOf = n.Server.id
		ep.Host, ep.Port = "127.0.0.1", n.protocol().Image.Port
	}
	if err := n.agent.Start(ctx); err != nil {
		return fmt.Errorf("the client (client=%s): %w", n.o.Client, err)
	}
	n.agent.client.Reach(ep, n.args)
	return nil
}

// Open gives the engine the client agent.
func (n *NetnsClient) Open(ctx context.Context, maxConns int) (driver.DB, error) {
	return n.agent.Open(ctx, maxConns)
}

// Describe reads the server back; in the namespace the path is its own
// loopback, beside it the published port's.
func (n *NetnsClient) Describe(ctx context.Context) (result.Target, error) {
	t, err := n.Server.Describe(ctx)
	if n.o.Client == "netns" {
		t.Described.NetworkPath = "bridge-direct"
	}
	t.Described.ClientPlacement = n.o.Client
	return t, err
}

// agentNetwork is the agent container's network for a client placement.
func agentNetwork(client string) string {
	if client == "beside" {
		return "host"
	}
	return "bridge" // netns: joined to the server's (Agent.netOf)
}

// Sample adds the client's CPU (its container's cgroup) to the server's.
func (n *NetnsClient) Sample(ctx context.Context) (targets.Sample, error) {
	s, err := n.Server.Sample(ctx)
	if err != nil {
		return s, err
	}
	if c, err := n.agent.Server.Sample(ctx); err == nil {
		s.ClientCPUNS, s.ClientAt = c.CPUNS, c.At
	}
	return s, nil
}

// Stop removes the client container, then the server's.
func (n *NetnsClient) Stop(ctx context.Context) error {
	return errors.Join(n.agent.Stop(ctx), n.Server.Stop(ctx))
}

// ClientInNetns says the SPEC asks for the client in a container of its
// own (client=netns or client=beside), not in dbduel's process.
func (s *Server) ClientInNetns() bool { return s.o.Client != "" }
