package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Plain TCP to an engine on another host is refused when the SPEC is
// parsed, so --dry-run refuses it too (exit 2, one line naming the ways
// that keep the link private); --insecure-engine lets it through with a
// warning that says what crosses; loopback, TLS and SSH engines pass.
func TestPlainRemoteEngineRefusedAtParse(t *testing.T) {
	plain := "c=docker:mariadb:11,engine=tcp://10.254.77.2:2375"
	_, stderr, code := runCLI(t, "run", "--dry-run", "--target", plain)
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("plain remote engine: exit %d, stderr %q; want exit 2 and one line", code, stderr)
	}
	for _, want := range []string{"engine=tcp://10.254.77.2:2375", "TLS", "ssh://", "--insecure-engine"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refusal %q does not name %q", stderr, want)
		}
	}

	stdout, stderr, code := runCLI(t, "run", "--dry-run", "--insecure-engine", "--target", plain)
	if code != 0 || !strings.Contains(stdout, "dry run") {
		t.Fatalf("--insecure-engine: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "root password") || !strings.Contains(stderr, "in clear") {
		t.Errorf("--insecure-engine warns %q; want what crosses the link named", stderr)
	}

	tlsDir := t.TempDir()
	for _, f := range []string{"ca.pem", "cert.pem", "key.pem"} {
		if err := os.WriteFile(filepath.Join(tlsDir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, spec := range []string{
		"c=docker:mariadb:11,engine=tcp://127.0.0.1:2375",
		"c=docker:mariadb:11,engine=tcp://10.254.77.2:2376,tls=" + tlsDir,
		"c=docker:mariadb:11,engine=ssh://me@10.254.77.2",
	} {
		if _, stderr, code := runCLI(t, "run", "--dry-run", "--target", spec); code != 0 || stderr != "" {
			t.Errorf("%s: exit %d, stderr %q; want a quiet dry run", spec, code, stderr)
		}
	}
	// The Docker CLI's environment gives TLS to an engine= without tls=.
	t.Setenv("DOCKER_TLS_VERIFY", "1")
	t.Setenv("DOCKER_CERT_PATH", tlsDir)
	if _, stderr, code := runCLI(t, "run", "--dry-run", "--target", plain); code != 0 || stderr != "" {
		t.Errorf("DOCKER_TLS_VERIFY: exit %d, stderr %q; want TLS from the environment", code, stderr)
	}
}
