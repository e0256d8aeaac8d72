// Package testregistry is the tests' image registry: go-containerregistry's
// in-process registry on a loopback port (Docker pulls from 127.0.0.0/8 over
// plain HTTP), optionally behind basic auth, with blob downloads that can be
// made to hang, and what pushes images into it and removes what came from it.
package testregistry

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Password is the password of a registry's user.
const Password = "pw"

// Registry is one running test registry.
type Registry struct {
	Host  string      // 127.0.0.1:PORT
	User  string      // basic auth required when set
	Stall atomic.Bool // blob downloads hang (no byte) while set
	// StallManifests makes manifest requests hang: the engine then has no
	// message to send (it sends none before the manifest).
	StallManifests atomic.Bool
	free           chan struct{}
}

// New starts a registry for the test; it stops at the test's end.
func New(t testing.TB, user string) *Registry {
	t.Helper()
	r := &Registry{User: user, free: make(chan struct{})}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.User != "" {
			if u, p, ok := req.BasicAuth(); !ok || u != r.User || p != Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="dbduel-test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
		}
		if r.Stall.Load() && req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") ||
			r.StallManifests.Load() && strings.Contains(req.URL.Path, "/manifests/") {
			select { // a registry that stops sending: no byte until the test ends
			case <-r.free:
			case <-req.Context().Done():
			}
			return
		}
		inner.ServeHTTP(w, req)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() { close(r.free); srv.Close() })
	r.Host = l.Addr().String()
	return r
}

// PushRandom writes a random image of three 2 MiB layers as repoTag and
// returns its digest.
func (r *Registry) PushRandom(t testing.TB, repoTag string) string {
	t.Helper()
	img, err := random.Image(2<<20, 3)
	if err != nil {
		t.Fatal(err)
	}
	return r.push(t, img, repoTag)
}

// PushLocal copies an image of the local Docker engine to repoTag (docker
// save into a file of the test's) and returns its digest there. Its layers
// are compressed by the gzip program, not in the test's process: the race
// detector made Go's own compression of a server image's layers (done twice,
// once for the digest and once for the upload) take minutes.
func (r *Registry) PushLocal(t testing.TB, cli *client.Client, local, repoTag string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "image.tar")
	rc, err := cli.ImageSave(context.Background(), []string{local})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err == nil {
		_, err = io.Copy(f, rc)
		err = errors.Join(err, f.Close())
	}
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(local)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	img, err := gzipped(saved, dir)
	if err != nil {
		t.Fatal(err)
	}
	return r.push(t, img, repoTag)
}

func (r *Registry) push(t testing.TB, img v1.Image, repoTag string) string {
	t.Helper()
	ref, err := name.ParseReference(r.Host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	var opts []remote.Option
	if r.User != "" {
		opts = append(opts, remote.WithAuth(&authn.Basic{Username: r.User, Password: Password}))
	}
	if err := remote.Write(ref, img, opts...); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// RemoveImages removes from Docker's store every reference to an image of
// the registry (its tags, and the digests a moved tag left) and says how
// many are still there after. By reference, not by ID: an image pushed
// from a local one shares its ID, and the local tag must stay.
func (r *Registry) RemoveImages(cli *client.Client) int {
	ctx := context.Background()
	refs := func() []string {
		list, _ := cli.ImageList(ctx, image.ListOptions{All: true})
		var out []string
		for _, im := range list {
			for _, ref := range append(append([]string{}, im.RepoTags...), im.RepoDigests...) {
				if strings.HasPrefix(ref, r.Host+"/") {
					out = append(out, ref)
				}
			}
		}
		return out
	}
	for _, ref := range refs() {
		_, _ = cli.ImageRemove(ctx, ref, image.RemoveOptions{PruneChildren: true})
	}
	return len(refs())
}
