package container

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/internal/testregistry"
	"github.com/dbduel/dbduel/targets/ledger"
)

// pullServer is a Server on the local Docker engine with only what a
// pull needs, and the image removed again at the end.
func pullServer(t *testing.T, reg *testregistry.Registry, img, pull string) (*Server, *bytes.Buffer) {
	t.Helper()
	integration.Require(t, "Docker")
	cli, err := NewClient()
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	s := &Server{name: "c", cli: cli, o: Options{Image: img, Pull: pull}, progress: out, stall: 5 * time.Second}
	t.Cleanup(func() {
		defer cli.Close()
		// Every image from the test registry, the ones a moved tag left
		// untagged too.
		if n := reg.RemoveImages(cli); n != 0 {
			t.Errorf("%d image(s) of %s left in Docker's store", n, img)
		}
	})
	return s, out
}

// A pull into an engine that lacks the image: progress lines in the
// issue's form, the registry's digest read back; pull=always says whether
// the digest changed; a missing tag is named.
func TestPullFromARegistry(t *testing.T) {
	reg := testregistry.New(t, "")
	first := reg.PushRandom(t, "library/tiny:1")
	img := reg.Host + "/library/tiny:1"
	s, out := pullServer(t, reg, img, "missing")
	ctx := context.Background()
	if err := s.ensureImage(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("as printed:\n%s", out)
	progress := regexp.MustCompile(`(?m)^dbduel: pull ` + regexp.QuoteMeta(img) + `: \d+\.\d/\d+\.\d MiB, \d/3 layers, \d+\.\d MiB/s$`)
	if !progress.MatchString(out.String()) || !strings.Contains(out.String(), "dbduel: pull "+img+": done, 6.0 MiB in ") {
		t.Fatalf("progress lines:\n%s", out)
	}
	insp, err := s.cli.ImageInspect(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	if got := imageDigest(insp.RepoDigests, img, insp.ID); got != first {
		t.Fatalf("digest %s, pushed %s", got, first)
	}

	out.Reset()
	s.o.Pull = "always"
	if err := s.ensureImage(ctx); err != nil || !strings.Contains(out.String(), "digest unchanged, "+first) {
		t.Fatalf("pull=always of the same tag: %v\n%s", err, out)
	}
	second := reg.PushRandom(t, "library/tiny:1") // the tag moves to new bits
	out.Reset()
	if err := s.ensureImage(ctx); err != nil || !strings.Contains(out.String(), "digest changed, "+first+" → "+second) {
		t.Fatalf("pull=always of a moved tag: %v\n%s", err, out)
	}

	missing, _ := pullServer(t, reg, reg.Host+"/library/tiny:404", "missing")
	if err := missing.ensureImage(ctx); err == nil || !strings.Contains(err.Error(), "has no such image or tag") {
		t.Fatalf("a missing tag: %v", err)
	}
	never, _ := pullServer(t, reg, reg.Host+"/library/tiny:2", "never")
	if err := never.ensureImage(ctx); err == nil || !strings.Contains(err.Error(), "pull=never") {
		t.Fatalf("pull=never: %v", err)
	}
}

// A registry that needs credentials: refused without them, with the
// registry and `docker login` named; pulled with them from a Docker config
// file (DOCKER_CONFIG), as docker pull takes them.
func TestPullWithCredentials(t *testing.T) {
	reg := testregistry.New(t, "alice")
	reg.PushRandom(t, "library/private:1")
	img := reg.Host + "/library/private:1"
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	s, out := pullServer(t, reg, img, "missing")
	err := s.ensureImage(context.Background())
	if err == nil || !strings.Contains(err.Error(), "registry "+reg.Host+" refused") || !strings.Contains(err.Error(), "docker login "+reg.Host) {
		t.Fatalf("no credentials: %v", err)
	}
	cfg := `{"auths":{"` + reg.Host + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("alice:pw")) + `"}}}`
	if err := os.WriteFile(filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.ensureImage(context.Background()); err != nil {
		t.Fatalf("with credentials: %v\n%s", err, out)
	}
	if strings.Contains(out.String(), "alice:pw") || strings.Contains(out.String(), base64.StdEncoding.EncodeToString([]byte("alice:pw"))) {
		t.Fatalf("a credential was printed:\n%s", out)
	}
}

// A pull whose registry stops sending ends after the stall timeout with
// the cause named, and leaves no image behind.
func TestPullStallTimeout(t *testing.T) {
	reg := testregistry.New(t, "")
	reg.PushRandom(t, "library/slow:1")
	reg.Stall.Store(true)
	img := reg.Host + "/library/slow:1"
	s, _ := pullServer(t, reg, img, "missing")
	s.stall = 2 * time.Second
	start := time.Now()
	err := s.ensureImage(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no progress for 2s (--pull-stall-timeout)") || !strings.Contains(err.Error(), "registry "+reg.Host) {
		t.Fatalf("a stalled pull: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the stalled pull took %s to end", d)
	}
	if _, err := s.cli.ImageInspect(context.Background(), img); err == nil {
		t.Fatal("a stalled pull left the image")
	}
}

// A registry that answers nothing before the manifest (the engine sends
// no message until it has it) is bounded by the stall timeout too.
func TestPullStallBeforeTheManifest(t *testing.T) {
	reg := testregistry.New(t, "")
	reg.PushRandom(t, "library/mute:1")
	reg.StallManifests.Store(true)
	img := reg.Host + "/library/mute:1"
	s, _ := pullServer(t, reg, img, "missing")
	s.stall = 2 * time.Second
	start := time.Now()
	err := s.ensureImage(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the registry sent nothing for 2s (--pull-stall-timeout)") {
		t.Fatalf("a registry mute before the manifest: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s to end", d)
	}
}

// The progress line's figures from the engine's stream: bytes of the
// layers known, layers done of those seen, already-present layers done.
func TestPullStateFigures(t *testing.T) {
	st := newPullState()
	msg := func(id, status string, cur, total int64) pullMessage {
		m := pullMessage{ID: id, Status: status}
		m.ProgressDetail.Current, m.ProgressDetail.Total = cur, total
		return m
	}
	for _, m := range []pullMessage{
		{Status: "Pulling from library/x", ID: "1"},
		msg("a", "Already exists", 0, 0),
		msg("b", "Pulling fs layer", 0, 0),
		msg("c", "Pulling fs layer", 0, 0),
		msg("b", "Downloading", 1<<20, 4<<20),
		msg("c", "Downloading", 2<<20, 2<<20),
		msg("c", "Download complete", 0, 0),
		msg("c", "Pull complete", 0, 0),
	} {
		st.apply(m)
	}
	if got := st.line("x", 1.5); got != "pull x: 3.0/6.0 MiB, 2/3 layers, 1.5 MiB/s" {
		t.Fatalf("line %q", got)
	}
	if st.apply(msg("b", "Waiting", 0, 0)) || !st.apply(msg("b", "Downloading", 3<<20, 4<<20)) {
		t.Fatal("a status without a byte counted as progress, or a byte did not")
	}
}

// The digest that names an image's bits: the repo digest of its own
// repository, else the local ID (never another repository's digest).
func TestImageDigest(t *testing.T) {
	rd := []string{"other/img@sha256:bbb", "docker.io/library/mysql@sha256:aaa"}
	if got := imageDigest(rd, "mysql:8.4", "sha256:id"); got != "sha256:aaa" {
		t.Fatalf("got %s", got)
	}
	if got := imageDigest([]string{"other/img@sha256:bbb"}, "mysql:8.4", "sha256:id"); got != "sha256:id" {
		t.Fatalf("got %s", got)
	}
	if got := imageDigest(nil, "dbduel-test/mariadb:1", "sha256:id"); got != "sha256:id" {
		t.Fatalf("got %s", got)
	}
}

// Docker's config is read only when it is this user's own: a directory or
// file another user owns or may write, or a credential helper named by a
// path, is refused in one line; none at all is no credentials.
func TestDockerConfigMustBeOurOwn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "docker")
	t.Setenv("DOCKER_CONFIG", dir)
	if got, err := dockerConfigDir(); got != "" || err != nil {
		t.Fatalf("no config: %q %v", got, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"credsStore":"../../tmp/evil"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := registryAuth("127.0.0.1:5000/x:1"); err == nil || !strings.Contains(err.Error(), "not a plain name, not run") {
		t.Fatalf("a helper named by a path: %v", err)
	}
	if err := os.Chmod(cfg, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := dockerConfigDir(); err == nil || !strings.Contains(err.Error(), "not this user's own") {
		t.Fatalf("a config others may write: %v", err)
	}
	if err := os.Chmod(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := dockerConfigDir(); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("a config directory nobody owns: %v", err)
		}
	}
}

// Podman pulls through its Docker-compatible API as Docker does, from a
// registry marked insecure in a registries.conf of the test's own
// (CONTAINERS_REGISTRIES_CONF: Podman, unlike Docker, does not take plain
// HTTP from 127.0.0.0/8 by default); what it pulled is removed after.
func TestPullIntoPodman(t *testing.T) {
	integration.Require(t, "Podman")
	if os.Getenv("DBDUEL_STATE_DIR") == "" {
		t.Setenv("DBDUEL_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	}
	reg := testregistry.New(t, "")
	digest := reg.PushRandom(t, "library/tiny:1")
	conf := filepath.Join(t.TempDir(), "registries.conf")
	if err := os.WriteFile(conf, []byte("[[registry]]\nlocation = \""+reg.Host+"\"\ninsecure = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONTAINERS_REGISTRIES_CONF", conf)
	ctx := context.Background()
	eng, err := connectEngine(ctx, Options{Engine: enginePodman}, "p", "test-"+ledger.NewRunID())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.close()
	img := reg.Host + "/library/tiny:1"
	out := &bytes.Buffer{}
	s := &Server{name: "p", cli: eng.cli, eng: eng, o: Options{Image: img, Pull: "missing", Engine: enginePodman}, progress: out, stall: 10 * time.Second}
	defer func() {
		if n := reg.RemoveImages(eng.cli); n != 0 {
			t.Errorf("%d image(s) of the test registry left in Podman's store", n)
		}
	}()
	if err := s.ensureImage(ctx); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "dbduel: pull "+img+": done") {
		t.Fatalf("progress:\n%s", out)
	}
	insp, err := eng.cli.ImageInspect(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	if got := imageDigest(insp.RepoDigests, img, insp.ID); got != digest {
		t.Fatalf("digest %s, pushed %s (repo digests %v)", got, digest, insp.RepoDigests)
	}
}
