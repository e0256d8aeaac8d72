package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/internal/integration"
	tcontainer "github.com/dbduel/dbduel/targets/container"
)

// The test images follow the official images' conventions (docs/testing.md),
// so every test that runs one exercises what an official image does: the
// server steps down to its own user (uid 999), the init directory's files
// run on first start, and MariaDB's image has MariaDB 11's names only.
func TestTestImagesFollowOfficialConventions(t *testing.T) {
	integration.Require(t, "Docker and the test images")
	t.Parallel()
	dc, err := tcontainer.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("mariadb names", func(t *testing.T) {
		out := runShell(ctx, t, dc, testImage(t),
			`for n in mysqld mysql mysqladmin mariadbd mariadb mariadb-admin; do if command -v $n >/dev/null; then echo "has $n"; else echo "no $n"; fi; done; ls -d /docker-entrypoint-initdb.d`)
		for _, want := range []string{"no mysqld", "no mysql\n", "no mysqladmin", "has mariadbd", "has mariadb\n", "has mariadb-admin", "/docker-entrypoint-initdb.d"} {
			if !strings.Contains(out, want) {
				t.Errorf("want %q in:\n%s", want, out)
			}
		}
	})
	// A backslash and a quote: the entrypoint's SQL must keep them.
	pw := `conv\'"-` + newRunID()
	for _, c := range []struct {
		name, image, server string
		env                 []string
		initSQL, initSh     string // the .sql runs first, then the .sh, as the official images order them
		query               []string
	}{
		// The .sh is the official images' documented kind: the client on
		// its default socket, with the variables the image was given.
		{"mariadb", testImage(t), "mariadbd", []string{"MARIADB_ROOT_PASSWORD=" + pw, "MARIADB_DATABASE=sbtest"},
			"CREATE TABLE init_mark (n INT); INSERT INTO init_mark VALUES (42);",
			`mariadb -uroot -p"$MARIADB_ROOT_PASSWORD" "$MARIADB_DATABASE" -e "INSERT INTO init_mark VALUES (7)"`,
			[]string{"mariadb", "--protocol=tcp", "-h127.0.0.1", "-uroot", "-p" + pw, "-N", "-e", "SELECT SUM(n) FROM sbtest.init_mark"}},
		{"postgres", postgresImage(t), "postgres", []string{"POSTGRES_PASSWORD=" + pw, "POSTGRES_DB=sbtest", "POSTGRES_INITDB_ARGS=--data-checksums"},
			"CREATE TABLE init_mark (n INT); INSERT INTO init_mark VALUES (42);",
			`psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -c "INSERT INTO init_mark VALUES (7)"`,
			[]string{"env", "PGPASSWORD=" + pw, "psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "sbtest", "-Atc", "SELECT SUM(n) FROM init_mark UNION ALL SELECT 1000 + (current_setting('data_checksums') = 'on')::int"}},
	} {
		t.Run(c.name+" steps down and runs the init directory", func(t *testing.T) {
			id := createContainer(ctx, t, dc, &container.Config{Image: c.image, Env: c.env,
				Labels: map[string]string{"dbduel.test-container": "conventions"}})
			files := map[string]string{"docker-entrypoint-initdb.d/10-mark.sql": c.initSQL, "docker-entrypoint-initdb.d/20-more.sh": c.initSh}
			if err := dc.CopyToContainer(ctx, id, "/", tarOf(t, files), container.CopyToContainerOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := dc.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
				t.Fatal(err)
			}
			// Over TCP: the temporary server of the init (as the official
			// images run it) answers on the socket only, so a TCP answer is
			// the final server's, after every init file ran.
			var out string
			for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
				if out, err = execIn(ctx, dc, id, c.query); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the init file's table never answered: %v (%s)", err, out)
				}
			}
			if !strings.HasPrefix(strings.TrimSpace(out), "49") {
				t.Errorf("the init files' rows (42 from the .sql, 7 from the .sh): %q", out)
			}
			if c.name == "postgres" && !strings.Contains(out, "1001") {
				t.Errorf("POSTGRES_INITDB_ARGS=--data-checksums not applied: %q", out)
			}
			top, err := dc.ContainerTop(ctx, id, []string{"-o", "pid,uid,args"})
			if err != nil {
				t.Fatal(err)
			}
			servers := 0
			for _, p := range top.Processes {
				if len(p) < 3 || !strings.Contains(p[2], c.server) {
					continue
				}
				servers++
				if p[1] != "999" {
					t.Errorf("%s runs as uid %s, want the official images' 999: %v", c.server, p[1], p)
				}
			}
			if servers == 0 {
				t.Errorf("no %s among the container's processes: %v", c.server, top.Processes)
			}
		})
	}
}

// An image whose USER is not root (an image built FROM an official one
// with USER 999, as users do) runs under dbduel as any image does, and a
// datadir it cannot make is refused in one line before any target starts.
func TestNonRootImage(t *testing.T) {
	integration.Require(t, "mariadbd, Docker and the test image")
	t.Parallel()
	dc, err := tcontainer.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	ctx := context.Background()
	tag := "dbduel-test/mariadb-user999:" + strings.ToLower(newRunID())
	dockerfile := fmt.Sprintf("FROM %s\nUSER 999:999\n", testImage(t))
	resp, err := dc.ImageBuild(ctx, tarOf(t, map[string]string{"Dockerfile": dockerfile}), build.ImageBuildOptions{Tags: []string{tag}, Remove: true})
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Cleanup(func() { dc.ImageRemove(context.Background(), tag, image.RemoveOptions{}) })
	if _, err := dc.ImageInspect(ctx, tag); err != nil {
		t.Fatalf("build %s: %v: %s", tag, err, msgs)
	}

	runID := newRunID()
	_, stderr, code := dbduelWith(t, []string{runEnv(runID)}, "run", "oltp_point_select", "--target", "native=local:mariadbd",
		"--target", "c=docker:"+tag+",datadir=overlay", "--time", "1", "--table-size", "500", "--cooldown", "0", "--no-tui")
	if code != 2 || !strings.Contains(stderr, "runs its server as user 999:999") || strings.Contains(stderr, "starting native") {
		t.Fatalf("datadir=overlay in a non-root image: want a refusal before anything starts, got exit %d: %s", code, stderr)
	}
	res := filepath.Join(t.TempDir(), "r.json")
	_, stderr, code = dbduelWith(t, []string{runEnv(runID)}, "run", "oltp_point_select", "--target", "c=docker:"+tag,
		"--time", "2", "--table-size", "500", "--no-tui", "--format", "text", "-o", res)
	if code != 0 {
		t.Fatalf("USER 999 image: exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Runs) != 1 || r.Runs[0].Target != "c" || r.Runs[0].Summary.Events == 0 || r.Targets[0].Described.ImageUser != "999:999" {
		t.Fatalf("USER 999 image: want a measured run of c read back as user 999:999: runs %+v, described %+v", r.Runs, r.Targets[0].Described)
	}
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left behind", n, runID)
	}
}

// runShell runs script in a fresh container of img (its entrypoint
// bypassed) and returns what it printed.
func runShell(ctx context.Context, t *testing.T, dc *client.Client, img, script string) string {
	t.Helper()
	id := createContainer(ctx, t, dc, &container.Config{Image: img, Entrypoint: []string{"/bin/sh", "-c", script},
		Labels: map[string]string{"dbduel.test-container": "conventions"}})
	if err := dc.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	waitC, errC := dc.ContainerWait(ctx, id, container.WaitConditionNotRunning)
	select {
	case <-waitC:
	case err := <-errC:
		t.Fatal(err)
	}
	logs, err := dc.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, logs)
	return out.String()
}

// createContainer creates a container that the test removes at its end.
func createContainer(ctx context.Context, t *testing.T, dc *client.Client, cc *container.Config) string {
	t.Helper()
	created, err := dc.ContainerCreate(ctx, cc, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dc.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	})
	return created.ID
}

// execIn runs cmd in a running container; an exit code other than 0 is an error.
func execIn(ctx context.Context, dc *client.Client, id string, cmd []string) (string, error) {
	ex, err := dc.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", err
	}
	att, err := dc.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return "", err
	}
	defer att.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, att.Reader)
	insp, err := dc.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		return out.String(), err
	}
	if insp.ExitCode != 0 {
		return out.String(), fmt.Errorf("%v: exit %d", cmd[0], insp.ExitCode)
	}
	return out.String(), nil
}

// tarOf is a tar stream of files (name → content), each mode 0644.
func tarOf(t *testing.T, files map[string]string) io.Reader {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for name, body := range files {
		if d, _, ok := strings.Cut(name, "/"); ok && !dirs[d] {
			dirs[d] = true
			tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir})
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}
