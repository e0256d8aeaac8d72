package kube

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/docker/go-units"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets/specs"
)

// Options are the keys of a k8s: SPEC.
type Options struct {
	Image     string
	Context   string // kubeconfig context ("": the current one)
	Namespace string // "": the context's namespace, else default
	Node      string // pin the server pod (and a beside client) to this node
	// MemoryBytes and CPUs are the server pod's requests and limits
	// (equal: the Guaranteed QoS class); 1 CPU and 1 GiB when not given.
	MemoryBytes int64
	CPUs        float64
	// Storage is the datadir: emptydir (the node's disk, the default) or
	// pvc (a PersistentVolumeClaim of StorageClass and StorageBytes).
	Storage      string
	StorageClass string
	StorageBytes int64
	Cnf          string
	// Client is where the benchmark client runs: beside (the default: an
	// agent pod on the server's node), netns (an agent container in the
	// server's pod, over its loopback) or here (dbduel's own process).
	Client string
	// ClientCPUs is a client=netns agent container's requests and limits
	// (the pod stays Guaranteed).
	ClientCPUs float64
	// Via is the path a client=here takes: pod (the pod IP), service (the
	// Service's ClusterIP, through kube-proxy) or nodeport (the node's
	// address and the Service's NodePort).
	Via string
	// Network is the server pod's network: pod (its own, the default) or
	// host (hostNetwork: the node's, the server on its loopback).
	Network string
	// Agents is how many agent pods share a beside client's threads
	// (agents=N), on the server's node or, with Spread "nodes", over the
	// cluster's nodes.
	Agents int
	Spread string
	// ClientNode puts a beside client's one agent pod on this node instead
	// of the server's (the cluster network between nodes on its path).
	ClientNode string
	Protocol   string // mysql|postgres|mongodb ("": from the image's name)
	Args       []string
	Env        []string
}

// Defaults of a server pod without memory= or cpus=: both fit a 2-core
// node beside a Burstable agent pod.
const (
	defaultCPUs        = 1.0
	defaultMemoryBytes = 1 << 30
	// A client=netns agent container's share, and its memory (dbduel's
	// agent needs little).
	defaultClientCPUs       = 0.5
	clientMemoryBytes int64 = 256 << 20
)

var allowedKeys = map[string]bool{"context": true, "namespace": true, "node": true, "memory": true, "cpus": true,
	"storage": true, "cnf": true, "client": true, "via": true, "network": true, "protocol": true, "args": true, "env": true,
	"agents": true, "spread": true, "client-cpus": true, "client-node": true}

// maxAgents bounds agents=N: each is a pod and a stream through the API
// server.
const maxAgents = 32

// dnsLabel is a Kubernetes namespace or node name's shape (RFC 1123).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// ParseSpec parses "IMAGE[,key=value...]" (after "k8s:").
func ParseSpec(spec string) (Options, error) {
	head, kvs, err := specs.SplitSpec(spec)
	if err != nil {
		return Options{}, err
	}
	bad := func(format string, args ...any) (Options, error) {
		return Options{}, &specs.UsageError{Msg: "k8s: " + fmt.Sprintf(format, args...)}
	}
	if head == "" || strings.ContainsAny(head, " =") {
		return bad("SPEC needs an image: k8s:IMAGE[,key=value...]")
	}
	if err := specs.CheckKeys("k8s:", kvs, allowedKeys, map[string]bool{"args": true, "env": true}); err != nil {
		return Options{}, err
	}
	o := Options{Image: head, Storage: "emptydir", Client: "beside", Via: "pod", Network: "pod", Agents: 1, Spread: "node", ClientCPUs: defaultClientCPUs,
		CPUs: defaultCPUs, MemoryBytes: defaultMemoryBytes}
	for _, kv := range kvs {
		if err := o.set(kv.Key, kv.Value); err != nil {
			return bad("%v", err)
		}
	}
	switch {
	case o.Client == "beside" && o.Via != "pod":
		return bad("via=%s is the path of a client=here; a client beside the server reaches its pod IP", o.Via)
	case o.Network == "host" && o.Via != "pod":
		return bad("network=host puts the server on its node's loopback: no Service reaches it, so via=%s cannot", o.Via)
	case o.Client == "netns" && o.Via != "pod":
		return bad("via=%s is the path of a client=here; a client=netns reaches the server on its pod's loopback", o.Via)
	case o.Agents > 1 && o.Client != "beside":
		return bad("agents=%d are agent pods of a client=beside; a client=here is dbduel's own process", o.Agents)
	case o.Spread == "nodes" && o.Agents < 2:
		return bad("spread=nodes spreads agents=N (N at least 2) over the nodes")
	case o.ClientNode != "" && (o.Client != "beside" || o.Agents > 1):
		return bad("client-node= places a client=beside's one agent pod; agents=N go over the nodes with spread=nodes")
	case o.ClientNode != "" && o.Network == "host":
		return bad("network=host puts the server on its node's loopback: an agent on another node cannot reach it (client-node=)")
	case o.Spread == "nodes" && o.Network == "host":
		return bad("network=host puts the server on its node's loopback: agents on other nodes cannot reach it (spread=nodes)")
	}
	if o.Protocol == "" {
		if o.Protocol = protocolOfImage(o.Image); o.Protocol == "" {
			return bad("cannot tell the protocol of image %s from its name: say protocol=mysql, postgres or mongodb", o.Image)
		}
	}
	if o.Agents > 1 && o.Protocol == "mongodb" {
		return bad("agents=%d: a MongoDB server counts each agent pool's own commands (handshakes, heartbeats) with the workload's, so the check of its count would not hold; use one agent", o.Agents)
	}
	return o, nil
}

// set reads one key into o.
func (o *Options) set(key, v string) error {
	switch key {
	case "context":
		if v == "" {
			return fmt.Errorf("context=: want a kubeconfig context's name")
		}
		o.Context = v
	case "namespace", "node", "client-node":
		if !dnsLabel.MatchString(v) {
			return fmt.Errorf("%s=%q: want a Kubernetes name (lowercase letters, digits, - and .)", key, v)
		}
		switch key {
		case "node":
			o.Node = v
		case "client-node":
			o.ClientNode = v
		default:
			o.Namespace = v
		}
	case "memory":
		n, err := units.RAMInBytes(v)
		if err != nil || n < 16<<20 {
			return fmt.Errorf("memory=%q: want a size such as 512m or 2g (at least 16m)", v)
		}
		o.MemoryBytes = n
	case "cpus":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0.001 || f > 1024 {
			return fmt.Errorf("cpus=%q: want a number of CPUs such as 1 or 1.5", v)
		}
		o.CPUs = f
	case "storage":
		return o.setStorage(v)
	case "cnf":
		abs, err := specs.CheckCnf(v)
		if err != nil {
			return err
		}
		o.Cnf = abs
	case "client":
		if v != "beside" && v != "here" && v != "netns" {
			return fmt.Errorf("client=%q: want beside (the default: an agent pod on the server's node), netns (an agent container in the server's pod) or here (dbduel's own process)", v)
		}
		o.Client = v
	case "client-cpus":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0.01 || f > 1024 {
			return fmt.Errorf("client-cpus=%q: want the client=netns agent container's CPUs, such as 0.5", v)
		}
		o.ClientCPUs = f
	case "via":
		if v != "pod" && v != "service" && v != "nodeport" {
			return fmt.Errorf("via=%q: want pod (the pod IP), service (the ClusterIP, through kube-proxy) or nodeport", v)
		}
		o.Via = v
	case "network":
		if v != "pod" && v != "host" {
			return fmt.Errorf("network=%q: want pod (the pod's own network, the default) or host (hostNetwork: the node's)", v)
		}
		o.Network = v
	case "agents":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAgents {
			return fmt.Errorf("agents=%q: want a number of agent pods from 1 to %d", v, maxAgents)
		}
		o.Agents = n
	case "spread":
		if v != "node" && v != "nodes" {
			return fmt.Errorf("spread=%q: want node (every agent on the server's node, the default) or nodes (over the cluster's nodes)", v)
		}
		o.Spread = v
	case "protocol":
		if p, err := driver.Lookup(v); err != nil || p.Image.Setup == nil {
			return fmt.Errorf("protocol=%q: want mysql, postgres or mongodb", v)
		}
		o.Protocol = v
	case "args":
		if !strings.HasPrefix(v, "-") {
			return fmt.Errorf("args=%q: want one server flag such as --innodb-buffer-pool-size=1G", v)
		}
		o.Args = append(o.Args, v)
	case "env":
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return fmt.Errorf("env=%q: want K=V", v)
		}
		o.Env = append(o.Env, v)
	}
	return nil
}

// setStorage reads storage=emptydir|CLASS:SIZE.
func (o *Options) setStorage(v string) error {
	if v == "emptydir" {
		o.Storage = v
		return nil
	}
	class, size, ok := strings.Cut(v, ":")
	q, err := resource.ParseQuantity(size)
	if !ok || !dnsLabel.MatchString(class) || err != nil || q.Value() <= 0 {
		return fmt.Errorf("storage=%q: want emptydir or STORAGECLASS:SIZE such as standard:10Gi", v)
	}
	o.Storage, o.StorageClass, o.StorageBytes = "pvc", class, q.Value()
	return nil
}

// protocolOfImage guesses the protocol from an image's repository name, as
// a user reading it would (the API cannot inspect an image the node has).
func protocolOfImage(image string) string {
	repo := image
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		repo = repo[i+1:]
	}
	repo, _, _ = strings.Cut(repo, ":")
	repo, _, _ = strings.Cut(repo, "@")
	for _, m := range []struct{ word, protocol string }{
		{"mariadb", "mysql"}, {"mysql", "mysql"}, {"percona", "mysql"},
		{"postgres", "postgres"}, {"mongo", "mongodb"},
	} {
		if strings.Contains(repo, m.word) {
			if _, err := driver.Lookup(m.protocol); err == nil {
				return m.protocol
			}
		}
	}
	return ""
}
