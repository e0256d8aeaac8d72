package testregistry

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// gzipped is img with every layer compressed once by `gzip -1` into a file
// of dir: a Docker image (schema 2) whose config, and so its layers' diff
// IDs, are img's own.
func gzipped(img v1.Image, dir string) (v1.Image, error) {
	config, err := img.RawConfigFile()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.DockerManifestSchema2,
		Config: v1.Descriptor{
			MediaType: types.DockerConfigJSON,
			Size:      int64(len(config)),
			Digest:    v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256(config))},
		},
	}
	core := &gzippedImage{config: config, layers: map[v1.Hash]*gzipLayer{}}
	for i, l := range layers {
		gl, err := gzipLayerOf(l, filepath.Join(dir, fmt.Sprintf("layer%d.gz", i)))
		if err != nil {
			return nil, err
		}
		core.layers[gl.digest] = gl
		m.Layers = append(m.Layers, v1.Descriptor{MediaType: types.DockerLayer, Size: gl.size, Digest: gl.digest})
	}
	if core.manifest, err = json.Marshal(m); err != nil {
		return nil, err
	}
	return partial.CompressedToImage(core)
}

// gzipLayerOf writes l's uncompressed bytes through `gzip -1 -n` (no name
// or time in the header: the same bytes each time) into path.
func gzipLayerOf(l v1.Layer, path string) (*gzipLayer, error) {
	in, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	h := sha256.New()
	cmd := exec.Command("gzip", "-1", "-n", "-c")
	cmd.Stdin = in
	cmd.Stdout = io.MultiWriter(out, h)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	st, err := out.Stat()
	if err != nil {
		return nil, err
	}
	return &gzipLayer{path: path, size: st.Size(), digest: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", h.Sum(nil))}}, nil
}

type gzippedImage struct {
	config, manifest []byte
	layers           map[v1.Hash]*gzipLayer
}

func (g *gzippedImage) RawConfigFile() ([]byte, error) { return g.config, nil }
func (g *gzippedImage) MediaType() (types.MediaType, error) {
	return types.DockerManifestSchema2, nil
}
func (g *gzippedImage) RawManifest() ([]byte, error) { return g.manifest, nil }
func (g *gzippedImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if l, ok := g.layers[h]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("no layer %s", h)
}

type gzipLayer struct {
	path   string
	size   int64
	digest v1.Hash
}

func (l *gzipLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *gzipLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }
func (l *gzipLayer) Size() (int64, error)                { return l.size, nil }
func (l *gzipLayer) MediaType() (types.MediaType, error) { return types.DockerLayer, nil }
