package explain

import (
	"fmt"
	"math"

	"github.com/dbduel/dbduel/engine/cause"
)

// contradiction says how the evidence contradicts the rung's label ("":
// it does not).
func contradiction(e Expect, ev map[string]any) string {
	check := []struct{ what, want, got string }{
		{"network path", e.NetworkPath, cause.Str(ev["network_path"])},
		{"datadir", e.Datadir, cause.Str(ev["datadir_kind"])},
		{"seccomp", e.Seccomp, cause.Str(ev["seccomp_mode"])},
		{"cpuset", e.Cpuset, cause.Str(ev["cpuset"])},
		{"engine", e.Engine, cause.Str(ev["engine"])},
		{"client placement", e.Client, cause.Str(ev["client_placement"])},
	}
	for _, c := range check {
		if c.want != "" && c.got != c.want {
			return fmt.Sprintf("%s is %q, the rung needs %q", c.what, c.got, c.want)
		}
	}
	if e.ClientNode != "" {
		client, server := cause.Str(ev["client_nodes"]), cause.Str(ev["node"])
		if client == "" || (client == server) != (e.ClientNode == "server") {
			return fmt.Sprintf("the client ran on node %q, the server on %q; the rung needs the client on the %s node", client, server, map[string]string{"server": "server's", "other": "other"}[e.ClientNode])
		}
	}
	if rootless, _ := ev["rootless"].(bool); rootless != e.Rootless {
		return fmt.Sprintf("rootless is %v, the rung needs %v", rootless, e.Rootless)
	}
	if _, ok := ev["memory_limit_bytes"]; e.MemoryLimited && !ok {
		return "no memory limit was read back, the rung needs one"
	}
	if got, _ := ev["memory_limit_bytes"].(float64); e.MemoryBytes > 0 && int64(got) != e.MemoryBytes {
		return fmt.Sprintf("memory limit is %.0f bytes, the rung needs %d", got, e.MemoryBytes)
	}
	if e.CPUs > 0 {
		if got, _ := ev["cpus"].(float64); math.Abs(got-e.CPUs) > 1e-6 {
			return fmt.Sprintf("CPU quota is %g, the rung needs %g", got, e.CPUs)
		}
	}
	return ""
}
