package container

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The listening socket's inode leads to its process: a forwarder is
// named by its process name, any other listener is none.
func TestForwarderOf(t *testing.T) {
	root := fakeRoot(t, map[string]string{
		// 0x3039 = 12345 listening (0A) with inode 777; the same port
		// established (01) with inode 888; 12346 listening with inode 999.
		"net/tcp": "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
			"   0: 0100007F:3039 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0 100 0 0 10 0\n" +
			"   1: 0100007F:3039 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 888 1 0 100 0 0 10 0\n" +
			"   2: 0100007F:303A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 999 1 0 100 0 0 10 0\n",
		"net/tcp6": "  sl  local_address\n",
		"41/comm":  "rootlessport\n",
		"42/comm":  "conmon\n",
		"43/comm":  "docker-proxy\n",
	})
	link := func(pid, fd int, target string) {
		dir := filepath.Join(root, strconv.Itoa(pid), "fd")
		os.MkdirAll(dir, 0o755)
		if err := os.Symlink(target, filepath.Join(dir, strconv.Itoa(fd))); err != nil {
			t.Fatal(err)
		}
	}
	link(41, 3, "socket:[888]") // a connection, not the listener
	link(41, 12, "socket:[777]")
	link(42, 5, "socket:[999]") // conmon holding a port is no forwarder
	link(43, 4, "/dev/null")
	if pid, name := forwarderOf(root, 12345); pid != 41 || name != "rootlessport" {
		t.Fatalf("12345: %d %q", pid, name)
	}
	if pid, name := forwarderOf(root, 12346); pid != 0 || name != "" {
		t.Fatalf("12346: %d %q", pid, name)
	}
	if pid, _ := forwarderOf(root, 1); pid != 0 {
		t.Fatalf("port 1: %d", pid)
	}
}

// On this machine's own /proc: a listener of this process is found by its
// socket, and is no forwarder.
func TestForwarderOfRealListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if len(listeningInodes("/proc", port)) != 1 {
		t.Fatalf("no listening inode for port %d", port)
	}
	if pid, name := forwarderOf("/proc", port); pid != 0 || name != "" {
		t.Fatalf("a test's listener taken for a forwarder: %d %q", pid, name)
	}
}

// A PID namespace's usage counts its processes' CPU, what its init
// reaped, and their proportional sets, and nothing outside it.
func TestReadPIDNamespaceUsage(t *testing.T) {
	stat := func(utime, stime, cutime, cstime int) string {
		return "10 (x y) S 1 1 1 0 -1 0 0 0 0 0 " + strconv.Itoa(utime) + " " + strconv.Itoa(stime) + " " +
			strconv.Itoa(cutime) + " " + strconv.Itoa(cstime) + " 20 0 1 0 0 0 0\n"
	}
	root := fakeRoot(t, map[string]string{
		"10/stat": stat(100, 50, 7, 3), "10/smaps_rollup": "Rss: 9000 kB\nPss: 4000 kB\n",
		"11/stat": stat(20, 10, 99, 99), "11/smaps_rollup": "Pss: 1000 kB\n",
		"12/stat": stat(5000, 5000, 0, 0), "12/smaps_rollup": "Pss: 500000 kB\n", // another namespace
	})
	for pid, ns := range map[int]string{10: "pid:[4026532000]", 11: "pid:[4026532000]", 12: "pid:[4026531836]"} {
		dir := filepath.Join(root, strconv.Itoa(pid), "ns")
		os.MkdirAll(dir, 0o755)
		if err := os.Symlink(ns, filepath.Join(dir, "pid")); err != nil {
			t.Fatal(err)
		}
	}
	u := readPIDNamespaceUsage(root, 10)
	// (100+50+7+3) + (20+10) ticks; only the init's reaped children count.
	if wantNS := uint64(190) * 10_000_000; !u.ok || u.cpuNS != wantNS || u.memBytes != 5000*1024 {
		t.Fatalf("usage %+v, want cpu %d mem %d", u, uint64(190)*10_000_000, 5000*1024)
	}
}

// A namespace's network bytes are its interfaces' counters, loopback aside.
func TestReadNetDev(t *testing.T) {
	root := fakeRoot(t, map[string]string{"7/net/dev": "Inter-|   Receive                                                |  Transmit\n" +
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n" +
		"    lo: 999999     10    0    0    0     0          0         0   999999     10    0    0    0     0       0          0\n" +
		"  eth0:   1200     12    0    0    0     0          0         0     3400     20    0    0    0     0       0          0\n" +
		"  tap0:     34      1    0    0    0     0          0         0       56      1    0    0    0     0       0          0\n"})
	rx, tx, ok := readNetDev(root, 7)
	if !ok || rx != 1234 || tx != 3456 {
		t.Fatalf("rx %d tx %d ok %v", rx, tx, ok)
	}
	if _, _, ok := readNetDev(root, 8); ok {
		t.Fatal("a missing process measured")
	}
}
