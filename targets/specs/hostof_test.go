package specs

import "testing"

// A server or engine on this machine is "local", whatever the address
// says; elsewhere, its host.
func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///var/run/docker.sock": "local", "": "local", "tcp://127.0.0.1:2375": "local", "127.0.0.1:3306": "local",
		"localhost:5432": "local", "[::1]:3306": "local", "tcp://10.254.77.2:2375": "10.254.77.2", "db.example:3306": "db.example", "ssh://me@10.254.77.2": "10.254.77.2", "ssh://me@db1:2222": "db1",
	} {
		if got := HostOf(in); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", in, got, want)
		}
	}
}
