package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/internal/testregistry"
	tcontainer "github.com/dbduel/dbduel/targets/container"
)

// dbduel demo takes the official image of the native server's version
// (mariadb:MAJOR.MINOR) from a registry that serves it, pulls it with
// progress and records its digest; where no registry answers it falls back
// to the local build of the same version, saying so.
func TestDemoTakesTheOfficialImageFromARegistry(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	local := testImage(t)
	v := strings.TrimPrefix(local, "dbduel-test/mariadb:")
	parts := strings.SplitN(v, ".", 3)
	official := "library/mariadb:" + parts[0] + "." + parts[1]
	cli, err := tcontainer.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	reg := testregistry.New(t, "")
	digest := reg.PushLocal(t, cli, local, official)
	t.Cleanup(func() {
		if n := reg.RemoveImages(cli); n != 0 {
			t.Errorf("%d image(s) from the test registry left in Docker's store", n)
		}
	})
	want := reg.Host + "/" + official

	stdout, stderr, code := dbduel(t, "demo", "--registry", reg.Host, "--show-image")
	if code != 0 || stdout != want+"\n" || !strings.Contains(stderr, "the official image of the native server's family and version, from registry "+reg.Host) {
		t.Fatalf("--show-image: exit %d, %q, %q", code, stdout, stderr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code = dbduel(t, "demo", "--registry", reg.Host, "--no-tui", "--runs", "2", "--time", "2", "--threads", "2", "-o", out)
	if code != 0 || !strings.Contains(stderr, "dbduel: pull "+want+": done") {
		t.Fatalf("demo: exit %d\n%s", code, stderr)
	}
	t.Logf("the demo's first lines:\n%s", firstLines(stderr, 12))
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, tg := range r.Targets {
		if tg.Kind != "container" {
			continue
		}
		if d := tg.Described; d.Image != want || d.ImageDigest != digest {
			t.Errorf("%s: image %q digest %q, want %q %q", tg.Name, d.Image, d.ImageDigest, want, digest)
		}
		checked++
	}
	if checked != 2 {
		t.Fatalf("%d container targets in the result", checked)
	}

	stdout, stderr, code = dbduel(t, "demo", "--registry", "127.0.0.1:1", "--show-image")
	if code != 0 || stdout != local+"\n" || !strings.Contains(stderr, "did not serve 127.0.0.1:1/"+official) {
		t.Fatalf("no registry answering: exit %d, %q, %q", code, stdout, stderr)
	}
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
