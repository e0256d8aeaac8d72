package cause

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/docker/go-units"

	"github.com/dbduel/dbduel/engine/result"
)

// majorConfigRank is the parity rank up to which every configuration
// difference is named whole (buffer and log sizes, flushing and
// durability, I/O method); the rest are counted.
const majorConfigRank = 1

// differences are what differs between target t and the baseline b, in
// the order it plausibly moves throughput: CPU limits, the memory limit
// (with the buffer pool against it), the configuration as the parity
// report ranks it (every major difference whole: "innodb_buffer_pool_size
// 128M → 6G", baseline first), the datadir's kind, the server version.
// What both sides share is not a difference.
func differences(r *result.Result, t, b result.Target) []string {
	var out []string
	dt, db := t.Described, b.Described
	if dt.CPUs != db.CPUs {
		out = append(out, fmt.Sprintf("CPU limit %s → %s", cpus(db.CPUs), cpus(dt.CPUs)))
	}
	if ct, cb := ownCPUs(r, dt.Cpuset), ownCPUs(r, db.Cpuset); ct != cb {
		out = append(out, fmt.Sprintf("cpuset %s → %s", orNone(cb), orNone(ct)))
	}
	if dt.MemoryLimitBytes != db.MemoryLimitBytes {
		s := fmt.Sprintf("memory limit %s → %s", memory(db.MemoryLimitBytes), memory(dt.MemoryLimitBytes))
		if bp := variable(r, t.Name, "innodb_buffer_pool_size"); bp != "" && dt.MemoryLimitBytes > 0 {
			s += " (with a " + bp + " buffer pool)"
		}
		out = append(out, s)
	}
	out = append(out, configuration(r, t.Name, b.Name)...)
	// docker-proxy is named with what it cost, measured alongside (costs).
	if pt, pb := pathOf(dt), pathOf(db); pt != pb && dt.NetworkPath != "docker-proxy" {
		out = append(out, fmt.Sprintf("network path %s → %s", pb, pt))
	}
	// A client in the container's namespace is its path (above); here
	// against beside is where the load was generated.
	if ct, cb := placement(dt), placement(db); ct != cb && dt.ClientPlacement != "netns" && db.ClientPlacement != "netns" {
		out = append(out, fmt.Sprintf("client %s → %s", cb, ct))
	}
	if dt.Datadir != nil && db.Datadir != nil && dt.Datadir.Kind != db.Datadir.Kind {
		out = append(out, fmt.Sprintf("datadir %s → %s", db.Datadir.Kind, dt.Datadir.Kind))
	}
	if p := r.Parity; p != nil {
		if vt, vb := p.Versions[t.Name], p.Versions[b.Name]; vt != "" && vb != "" && vt != vb {
			out = append(out, fmt.Sprintf("server version %s → %s", vb, vt))
		}
	}
	return out
}

// configuration names the variables that differ between target and base,
// the parity report's order: the major ones whole, the rest counted.
func configuration(r *result.Result, target, base string) []string {
	if r.Parity == nil {
		return nil
	}
	var out []string
	minor := 0
	for _, d := range r.Parity.VariablesDiff {
		vt, vb := d.Values[target], d.Values[base]
		if vt == vb {
			continue
		}
		if d.Rank > majorConfigRank && len(out) >= 2 {
			minor++
			continue
		}
		out = append(out, fmt.Sprintf("%s %s → %s", d.Name, sizeValue(d.Name, vb), sizeValue(d.Name, vt)))
	}
	if minor > 0 {
		out = append(out, fmt.Sprintf("%d more setting(s) (parity.variables_diff)", minor))
	}
	if len(out) > 0 {
		out[0] = "configuration " + out[0]
	}
	return out
}

// variable is target's value of a variable that differs between targets
// ("" when the parity report does not list it).
func variable(r *result.Result, target, name string) string {
	if r.Parity == nil {
		return ""
	}
	for _, d := range r.Parity.VariablesDiff {
		if d.Name == name {
			if v := d.Values[target]; v != "" {
				if n, err := units.RAMInBytes(v); err == nil && n >= 1<<20 {
					return units.BytesSize(float64(n))
				}
				return v
			}
		}
	}
	return ""
}

// pathOf names how the client reaches a target's server: the host's
// network directly (a native server, a container on the host network), a
// published port through a userland proxy (docker-proxy, rootless
// Podman's rootlessport), a published port by the kernel's
// NAT alone (Podman's netavark/CNI, Docker without its proxy), or the
// container's own loopback (the client in its network namespace), or a
// pod's address, Service or NodePort.
func pathOf(d result.Described) string {
	switch {
	case d.ClientPlacement == "netns" && d.Engine == "kubernetes":
		return "the pod's own loopback"
	case d.ClientPlacement == "netns":
		return "the container's own loopback"
	case d.NetworkPath == "docker-proxy":
		return "docker-proxy"
	case d.NetworkPath == "rootlessport":
		return "rootless Podman's rootlessport (a userland proxy)"
	case d.NetworkPath == "bridge-direct" && d.Engine == "podman":
		return "Podman's published port (NAT, no proxy)"
	case d.NetworkPath == "bridge-direct":
		return "published port (NAT, no proxy)"
	case d.NetworkPath == "remote-published":
		return "the engine host's published port"
	case d.Engine == "kubernetes" && d.NetworkPath == "pod-ip":
		return "the pod IP (the node's bridge)"
	case d.Engine == "kubernetes" && d.NetworkPath == "cluster-ip":
		return "the Service's ClusterIP (kube-proxy's NAT)"
	case d.Engine == "kubernetes" && d.NetworkPath == "node-port":
		return "the node's NodePort (kube-proxy's NAT)"
	}
	return "direct" // the host network, or a server outside any container
}

// placement names where a target's benchmark client ran.
func placement(d result.Described) string {
	if d.ClientPlacement == "beside" && d.ClientAgents > 1 && len(d.ClientNodes) > 1 {
		return fmt.Sprintf("dbduel's %d agents over nodes %s", d.ClientAgents, strings.Join(d.ClientNodes, ", "))
	}
	if d.ClientPlacement == "beside" && d.ClientAgents > 1 {
		return fmt.Sprintf("dbduel's %d agents beside the server", d.ClientAgents)
	}
	if d.ClientPlacement == "beside" && len(d.ClientNodes) == 1 && d.ClientNodes[0] != d.Node {
		return "dbduel's agent on another node (" + d.ClientNodes[0] + ")"
	}
	if d.ClientPlacement == "beside" {
		return "dbduel's agent beside the server"
	}
	return "in dbduel's process"
}

// shared is what both sides have in common that a reader might take for
// the cause, said once as context ("" when nothing is).
func shared(et, eb map[string]any) string {
	if p := Str(et["network_path"]); userlandProxy(p) && Str(eb["network_path"]) == p {
		return "both sides behind " + p
	}
	return ""
}

func cpus(n float64) string {
	if n <= 0 {
		return "none"
	}
	return fmt.Sprintf("%g", n)
}

func memory(n int64) string {
	if n <= 0 {
		return "none"
	}
	return units.BytesSize(float64(n))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// sizeValue shows a size variable's bytes as a size ("134217728" → "128MiB").
func sizeValue(name, v string) string {
	if v == "" {
		return "none"
	}
	if !strings.Contains(name, "size") && !strings.Contains(name, "buffer") {
		return v
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 1<<20 {
		return units.BytesSize(float64(n))
	}
	return v
}

// ownCPUs is a cpuset that limits anything ("" for none, or for every CPU
// of the machine: a container's cgroup reads back all of them unasked).
func ownCPUs(r *result.Result, cpuset string) string {
	n, err := strconv.Atoi(r.Environment["cpu_count"])
	if err != nil || n <= 0 {
		n = runtime.NumCPU()
	}
	if cpuset == fmt.Sprintf("0-%d", n-1) || (n == 1 && cpuset == "0") {
		return ""
	}
	return cpuset
}
