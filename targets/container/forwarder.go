package container

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A published port reaches the server through a userland forwarder that
// copies every byte (Docker's docker-proxy, rootless Podman's
// rootlessport) or through the kernel's NAT alone (rootful Podman's
// netavark/CNI, Docker without its proxy). The forwarder is found by what
// a reader would check by hand: the process that holds the socket
// listening on the published port (ss -ltnp).

// forwarders are the userland forwarders by process name, as
// described.network_path names them.
var forwarders = map[string]bool{"docker-proxy": true, "rootlessport": true}

// forwarderOf finds the userland forwarder listening on port of this
// machine's network namespace: its pid and name (0, "": the port has
// none, its traffic goes by NAT).
func forwarderOf(procRoot string, port int) (pid int, name string) {
	inodes := listeningInodes(procRoot, port)
	if len(inodes) == 0 {
		return 0, ""
	}
	fds, _ := filepath.Glob(filepath.Join(procRoot, "[0-9]*", "fd", "*"))
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if !inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			continue
		}
		dir := filepath.Dir(filepath.Dir(fd))
		comm, _ := os.ReadFile(filepath.Join(dir, "comm"))
		if n := strings.TrimSpace(string(comm)); forwarders[n] {
			pid, _ = strconv.Atoi(filepath.Base(dir))
			return pid, n
		}
	}
	return 0, ""
}

// listeningInodes reads the socket inodes listening on TCP port from
// /proc/net/tcp and tcp6 (state 0A is LISTEN; the local port is hex).
func listeningInodes(procRoot string, port int) map[string]bool {
	out := map[string]bool{}
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		data, err := os.ReadFile(filepath.Join(procRoot, f))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n")[1:] {
			fs := strings.Fields(l)
			if len(fs) < 10 || fs[3] != "0A" {
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(p) == port {
				out[fs[9]] = true
			}
		}
	}
	return out
}
