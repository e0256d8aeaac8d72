package container

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/docker/go-units"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets/specs"
)

// Options are the keys of a docker: SPEC.
type Options struct {
	Image       string
	MemoryBytes int64   // memory=2g (Docker units: 1g = 1073741824 bytes)
	CPUs        float64 // cpus=1.5
	Cpuset      string  // cpuset=0-1
	Network     string  // bridge|host
	Datadir     string  // volume|bind|overlay
	Pull        string  // missing (the default)|always|never
	Args        []string
	Env         []string
	Cnf         string
	Protocol    string // protocol=mysql|postgres|mongodb; "" until read from the image's exposed port
	Seccomp     string // seccomp=unconfined: no syscall filter ("" : Docker's default profile)
	// Client is where dbduel's agent, the benchmark client, runs instead
	// of dbduel's process: "netns" (the server's network namespace) or
	// "beside" (a container of its own on the engine's host network).
	Client   string
	ShmBytes int64    // shm=64m: /dev/shm's size
	Ulimits  []Ulimit // ulimit=nofile=65536[:65536], repeatable
	// Engine is the engine= key: "" (the Docker engine of the
	// environment), podman, or an endpoint (unix:///..., tcp://...).
	Engine string
	// Publish is the address the port is published on (publish=ADDR).
	Publish string
	// Rootless is the user a rootless Podman service runs as (rootless=USER).
	Rootless string
	// TLSDir is tls=DIR: the CA, certificate and key of a tcp:// engine.
	TLSDir    string
	pullGiven bool // the SPEC has pull= (Podman's default is missing)
}

// Ulimit is one ulimit= key: a resource's soft and hard limits.
type Ulimit struct {
	Name       string
	Soft, Hard int64
}

var allowedKeys = map[string]bool{"memory": true, "cpus": true, "cpuset": true, "network": true,
	"datadir": true, "pull": true, "args": true, "env": true, "cnf": true, "protocol": true, "seccomp": true, "client": true,
	"shm": true, "ulimit": true, "engine": true, "publish": true, "rootless": true, "tls": true}

// ParseSpec parses "IMAGE[,key=value...]" (after "docker:").
func ParseSpec(spec string) (Options, error) {
	head, kvs, err := specs.SplitSpec(spec)
	if err != nil {
		return Options{}, err
	}
	bad := func(format string, args ...any) (Options, error) {
		return Options{}, &specs.UsageError{Msg: "docker: " + fmt.Sprintf(format, args...)}
	}
	if head == "" || strings.ContainsAny(head, " =") {
		return bad("SPEC needs an image: docker:IMAGE[,key=value...]")
	}
	if err := specs.CheckKeys("docker:", kvs, allowedKeys, map[string]bool{"args": true, "env": true, "ulimit": true}); err != nil {
		return Options{}, err
	}
	o := Options{Image: head, Network: "bridge", Datadir: "volume", Pull: "missing"}
	for _, kv := range kvs {
		v := kv.Value
		if limit, err := o.parseLimit(kv.Key, v); err != nil {
			return bad("%v", err)
		} else if limit {
			continue
		}
		switch kv.Key {
		case "network":
			if v != "bridge" && v != "host" {
				return bad("network=%q: want bridge or host", v)
			}
			o.Network = v
		case "datadir":
			if v != "volume" && v != "bind" && v != "overlay" {
				return bad("datadir=%q: want volume, bind or overlay", v)
			}
			o.Datadir = v
		case "pull":
			if v != "never" && v != "missing" && v != "always" {
				return bad("pull=%q: want missing, always or never", v)
			}
			o.Pull, o.pullGiven = v, true
		case "engine":
			if err := checkEngineKey(v); err != nil {
				return Options{}, &specs.UsageError{Msg: "docker: " + err.Error()}
			}
			o.Engine = v
		case "tls":
			if err := checkTLSDir(v); err != nil {
				return bad("%v", err)
			}
			o.TLSDir = v
		case "rootless":
			if v == "" || strings.ContainsAny(v, ":/ ") {
				return bad("rootless=%q: want a user name", v)
			}
			o.Rootless = v
		case "publish":
			if net.ParseIP(v) == nil {
				return bad("publish=%q: want an IP address of the engine's host", v)
			}
			o.Publish = v
		case "args":
			if !strings.HasPrefix(v, "-") {
				return bad("args=%q: want one server flag such as --innodb-buffer-pool-size=1G", v)
			}
			o.Args = append(o.Args, v)
		case "env":
			if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
				return bad("env=%q: want K=V", v)
			}
			o.Env = append(o.Env, v)
		case "protocol":
			if p, err := driver.Lookup(v); err != nil || p.Image.Setup == nil {
				return bad("protocol=%q: want one of %s", v, strings.Join(imageProtocols(), ", "))
			}
			o.Protocol = v
		case "client":
			switch v {
			case "here":
				o.Client = "" // the default written out: the client in dbduel, here
			case "netns", "beside":
				o.Client = v
			default:
				return bad("client=%q: want here (the default: the client in dbduel), netns (in the container's network namespace) or beside (in a container of its own on the engine's host network)", v)
			}
		case "seccomp":
			if v != "unconfined" {
				return bad("seccomp=%q: want unconfined (Docker's default profile applies without the key)", v)
			}
			o.Seccomp = v
		case "cnf":
			abs, err := specs.CheckCnf(v)
			if err != nil {
				return bad("%v", err)
			}
			o.Cnf = abs
		}
	}
	if o.TLSDir != "" && !strings.HasPrefix(o.Engine, "tcp://") {
		return bad("tls= is for tcp:// engines (engine=%q)", o.Engine)
	}
	return o, nil
}

// parseLimit reads the resource keys (memory, cpus, cpuset, shm, ulimit)
// into o; limit is false for any other key.
func (o *Options) parseLimit(key, v string) (limit bool, err error) {
	switch key {
	case "memory":
		n, err := units.RAMInBytes(v)
		if err != nil || n <= 0 {
			return true, fmt.Errorf("memory=%q: want a size such as 512m or 2g", v)
		}
		if n < 6*1024*1024 {
			return true, fmt.Errorf("memory=%q: Docker needs at least 6m", v)
		}
		o.MemoryBytes = n
	case "cpus":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return true, fmt.Errorf("cpus=%q: want a positive number such as 1.5", v)
		}
		o.CPUs = f
	case "cpuset":
		if err := specs.CheckCpuset(v); err != nil {
			return true, err
		}
		o.Cpuset = v
	case "shm":
		n, err := units.RAMInBytes(v)
		if err != nil || n <= 0 {
			return true, fmt.Errorf("shm=%q: want a size such as 64m or 1g", v)
		}
		o.ShmBytes = n
	case "ulimit":
		u, err := parseUlimit(v)
		if err != nil {
			return true, err
		}
		o.Ulimits = append(o.Ulimits, u)
	default:
		return false, nil
	}
	return true, nil
}

// imageProtocols are the registered protocols whose images dbduel can run.
func imageProtocols() []string {
	var names []string
	for _, p := range driver.All() {
		if p.Image.Setup != nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// parseUlimit reads NAME=SOFT[:HARD] (HARD defaults to SOFT), as docker
// run --ulimit does.
func parseUlimit(v string) (Ulimit, error) {
	name, limits, ok := strings.Cut(v, "=")
	soft, hard, twoParts := strings.Cut(limits, ":")
	if !twoParts {
		hard = soft
	}
	s, err1 := strconv.ParseInt(soft, 10, 64)
	h, err2 := strconv.ParseInt(hard, 10, 64)
	if !ok || name == "" || err1 != nil || err2 != nil || s > h {
		return Ulimit{}, fmt.Errorf("ulimit=%q: want NAME=SOFT[:HARD] such as nofile=65536:65536", v)
	}
	return Ulimit{Name: name, Soft: s, Hard: h}, nil
}
