// Command pause-image writes the test cluster's sandbox image as a
// docker-archive tarball (the format of `docker save`) for `ctr images
// import`: one layer holding the static pause binary, its entrypoint. No
// registry is reachable here, and Docker's image store is left alone
// (nothing goes through `docker import`). The archive is written with the
// standard library: go-containerregistry would move a third of the
// Kubernetes release's pinned dependencies.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

func main() {
	binary := flag.String("binary", "", "the static pause binary")
	tag := flag.String("tag", "", "the image's name, e.g. docker.io/dbduel-test/pause:3.10")
	out := flag.String("o", "", "the tarball to write")
	flag.Parse()
	if err := run(*binary, *tag, *out); err != nil {
		fmt.Fprintln(os.Stderr, "pause-image:", err)
		os.Exit(1)
	}
}

func run(binary, tag, out string) error {
	if binary == "" || tag == "" || out == "" {
		return fmt.Errorf("--binary, --tag and -o are required")
	}
	program, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	layer, err := tarOf([]file{{"pause", 0o755, program}})
	if err != nil {
		return err
	}
	layerDigest := digest(layer)
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": []string{"/pause"}, "User": "65535:65535"},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerDigest}},
	})
	if err != nil {
		return err
	}
	configName := digest(config) + ".json"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": []string{tag}, "Layers": []string{layerDigest + "/layer.tar"},
	}})
	if err != nil {
		return err
	}
	archive, err := tarOf([]file{
		{layerDigest + "/layer.tar", 0o644, layer},
		{configName, 0o644, config},
		{"manifest.json", 0o644, manifest},
	})
	if err != nil {
		return err
	}
	return os.WriteFile(out, archive, 0o600)
}

type file struct {
	name string
	mode int64
	data []byte
}

func tarOf(files []file) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
