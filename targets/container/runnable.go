package container

import (
	"fmt"
	"os"
	"strings"

	dockerspec "github.com/moby/docker-image-spec/specs-go/v1"

	"github.com/dbduel/dbduel/targets/specs"
)

// runnable says, in one line, why dbduel cannot run an image as the SPEC
// asks (nil when it can): an image for another platform than the
// engine's would fail in the container's first second with "exec format
// error"; a server whose image runs it as a user other than root cannot
// make the overlay datadir's directory, which only root may create.
func runnable(o Options, imageOS, imageArch, user, engineOS, engineArch string, emulates func(arch string) bool) error {
	if imageOS != "" && engineOS != "" && imageOS != engineOS {
		return &specs.UsageError{Msg: fmt.Sprintf("docker: image %s is for %s, the engine runs %s containers", o.Image, imageOS, engineOS)}
	}
	if imageArch != "" && engineArch != "" && imageArch != engineArch && !natively[engineArch+"/"+imageArch] && !emulates(imageArch) {
		return &specs.UsageError{Msg: fmt.Sprintf("docker: image %s is built for %s/%s, the engine runs %s/%s (it would fail with exec format error): pull the image's %s variant", o.Image, imageOS, imageArch, engineOS, engineArch, engineArch)}
	}
	if o.Datadir == "overlay" && !rootUser(user) {
		return &specs.UsageError{Msg: fmt.Sprintf("docker: image %s runs its server as user %s, which cannot create %s for datadir=overlay: use datadir=volume or datadir=bind", o.Image, user, overlayDatadir)}
	}
	return nil
}

// natively are the engine/image architecture pairs a CPU runs without
// emulation (a 64-bit x86 runs 32-bit x86 binaries, an arm64 32-bit arm).
var natively = map[string]bool{"amd64/386": true, "arm64/arm": true}

// emulates says whether this machine's kernel runs binaries of arch
// through an emulator (binfmt_misc's qemu-ARCH), as docker run relies on
// for another platform's image. Only a local engine shares this kernel.
func (s *Server) emulates(arch string) bool {
	if s.remote() {
		return false
	}
	qemu := map[string]string{"arm64": "aarch64", "arm": "arm", "amd64": "x86_64", "386": "i386", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}[arch]
	if qemu == "" {
		return false
	}
	b, err := os.ReadFile("/proc/sys/fs/binfmt_misc/qemu-" + qemu)
	return err == nil && strings.HasPrefix(string(b), "enabled")
}

// imageUser is the user an image's processes start as ("" is root).
func imageUser(c *dockerspec.DockerOCIImageConfig) string {
	if c == nil {
		return ""
	}
	return c.User
}

// rootUser says whether an image's USER is root: empty, "root" or uid 0,
// with or without a group.
func rootUser(user string) bool {
	u, _, _ := strings.Cut(user, ":")
	return u == "" || u == "root" || u == "0"
}
