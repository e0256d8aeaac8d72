// Package container is a server in a Docker container, driven through the
// Docker Engine API: the image's own entrypoint (official mariadb/mysql
// conventions), dbduel's defaults file mounted and passed first, the port
// published on 127.0.0.1 only, the datadir on a labelled volume, and
// everything removed on Stop.
package container

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dbduel/dbduel/engine/driver"

	"github.com/docker/docker/client"

	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/specs"
)

// Where the container sees dbduel's files and its datadir.
const (
	configDir      = "/etc/dbduel"
	defaultDatadir = "/var/lib/mysql"
	overlayDatadir = "/var/lib/dbduel-datadir" // off any VOLUME the image declares
	readyTimeout   = 180 * time.Second
)

// TestDatadirTmpfs, when a test sets it for a run id, puts the datadirs
// of that run's containers on a tmpfs of this many bytes (a disk that
// fills up on demand): no SPEC key offers it.
var TestDatadirTmpfs sync.Map // run id → int64

// NewClient connects to the engine from the environment (DOCKER_HOST...),
// negotiating the API version (the engine here speaks 1.41).
func NewClient() (*client.Client, error) {
	if err := checkDockerHost(os.Getenv("DOCKER_HOST")); err != nil {
		return nil, err
	}
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "ssh://") {
		return remoteClient(Options{Engine: h})
	}
	return client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
}

// checkDockerHost refuses a DOCKER_HOST dbduel cannot use. A remote
// engine publishes the server's port on its host's address (publishAddr).
func checkDockerHost(h string) error {
	if strings.HasPrefix(h, "ssh://") {
		if _, err := url.Parse(h); err != nil {
			return &specs.UsageError{Msg: fmt.Sprintf("DOCKER_HOST=%s: want ssh://USER@HOST[:PORT]", h)}
		}
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
	cfgDir            string // the configuration the container mounts: hostDir, or a directory in it
	ep                targets.Endpoint
	progress          io.Writer     // pull progress; nil discards it
	stall             time.Duration // --pull-stall-timeout (0: the default)
	pid, proxyPID     int           // cached for Sample; reset on restart
	dataPath          string        // the datadir as the container sees it
	startedAt         string        // the engine's State.StartedAt when dbduel last (re)started it
	prepared          bool          // Prepare has connected the engine and checked the image
	pulled            bool          // the image was pulled (or found) once, as the SPEC's pull= says
	engineSlowSince   time.Time     // Health's first timed-out inspect of a streak
}

// SetProgress sends pull progress lines to w.
func (s *Server) SetProgress(w io.Writer) { s.progress = w }

// SetPullStallTimeout gives up a pull after d without progress.
func (s *Server) SetPullStallTimeout(d time.Duration) { s.stall = d }

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
func (s *Server) SpecRedacted() string       { return driver.Redact(s.spec) }
func (s *Server) Endpoint() targets.Endpoint { return s.ep }

// SetMemory sets the memory limit before Start (explain sizes its
// memory-limit rung from the native server's footprint).
func (s *Server) SetMemory(bytes int64) { s.o.MemoryBytes = bytes }

// PlainRemoteEngine is the engine when plain TCP on another host ("":
// none, or TLS, SSH, a local socket).
func (s *Server) PlainRemoteEngine() string { return s.o.PlainRemoteEngine() }

// ID is the container id once started.
func (s *Server) ID() string { return s.id }

func (s *Server) labels() map[string]string {
	return map[string]string{ledger.Label: s.runID, "dbduel.target": s.name, ledger.OwnerLabel: ledger.Owner()}
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
