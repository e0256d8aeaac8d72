package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/distribution/reference"
	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/types"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets/ledger"
)

// DefaultPullStallTimeout is how long a pull may go without a progress
// report (the engine sends one about every 512 KiB) or a layer's step, or
// waiting for the registry's first answer, before it is given up
// (--pull-stall-timeout): a pull has no time limit of its own, as docker
// pull has none, while bytes arrive.
const DefaultPullStallTimeout = 60 * time.Second

// testImagePrefix names the images this project builds locally
// (scripts/build-test-image.sh): no registry serves them.
const testImagePrefix = "dbduel-test/"

// pullMessage is one message of the engine's pull stream.
type pullMessage struct {
	ID             string `json:"id"`
	Status         string `json:"status"`
	Error          string `json:"error"`
	ProgressDetail struct {
		Current int64 `json:"current"`
		Total   int64 `json:"total"`
	} `json:"progressDetail"`
}

// layerState is one layer's pull as the stream told it.
type layerState struct {
	current, total int64
	done           bool // pulled, or already present
}

// pullState folds the pull stream into the figures of the progress line.
type pullState struct {
	layers map[string]*layerState
}

func newPullState() *pullState { return &pullState{layers: map[string]*layerState{}} }

// apply folds one message in and says whether anything moved (a byte, a
// layer's step): what the stall timeout watches.
func (p *pullState) apply(m pullMessage) bool {
	if m.ID == "" || strings.HasPrefix(m.Status, "Pulling from") || strings.HasPrefix(m.Status, "Digest:") || strings.HasPrefix(m.Status, "Status:") {
		return false
	}
	l := p.layers[m.ID]
	if l == nil {
		l = &layerState{}
		p.layers[m.ID] = l
	}
	before := *l
	switch {
	case m.Status == "Downloading":
		l.current, l.total = m.ProgressDetail.Current, max(l.total, m.ProgressDetail.Total)
	case m.Status == "Download complete" || m.Status == "Verifying Checksum":
		l.current = l.total
	case m.Status == "Pull complete" || m.Status == "Already exists":
		l.done = true
		l.current = l.total
	case m.Status == "Extracting":
		l.current = l.total // its bytes are all here
	}
	return *l != before || m.Status == "Extracting"
}

// figures are the bytes received and known in all, and the layers done
// and seen.
func (p *pullState) figures() (got, total int64, done, layers int) {
	for _, l := range p.layers {
		got, total = got+l.current, total+l.total
		if l.done {
			done++
		}
	}
	return got, total, done, len(p.layers)
}

// line is "pull IMAGE: 45.2/210.0 MiB, 3/7 layers, 12.1 MiB/s".
func (p *pullState) line(img string, rate float64) string {
	got, total, done, layers := p.figures()
	return fmt.Sprintf("pull %s: %.1f/%.1f MiB, %d/%d layers, %.1f MiB/s", img, mebibytes(got), mebibytes(total), done, layers, rate)
}

func mebibytes(b int64) float64 { return float64(b) / (1 << 20) }

// registryHost is the registry an image reference names ("docker.io" for
// Docker Hub), or "" when the reference does not parse.
func registryHost(img string) string {
	named, err := reference.ParseNormalizedNamed(img)
	if err != nil {
		return ""
	}
	return reference.Domain(named)
}

// registryAuth is the X-Registry-Auth of a pull of img: the credentials
// Docker's CLI would use, from its config file and credential helpers (""
// without any). dbduel runs as root on shared machines, so the config is
// the effective user's own (DOCKER_CONFIG, else that user's home from the
// password database, not $HOME a sudo may have kept): a directory or file
// another user owns or may write is not read, and a credential helper
// whose name is not a plain word is not run.
func registryAuth(img string) (string, error) {
	host := registryHost(img)
	if host == "" {
		return "", nil
	}
	key := host
	if host == "docker.io" {
		key = "https://index.docker.io/v1/" // how docker login files Docker Hub
	}
	dir, err := dockerConfigDir()
	if err != nil || dir == "" {
		return "", err
	}
	cf, err := config.Load(dir)
	if err != nil {
		return "", fmt.Errorf("reading Docker's config in %s: %v", dir, driver.OneLine(err.Error()))
	}
	for _, helper := range append([]string{cf.CredentialsStore}, cf.CredentialHelpers[key]) {
		if helper == "" {
			continue
		}
		if !helperName.MatchString(helper) {
			return "", fmt.Errorf("Docker's config in %s names the credential helper %q: not a plain name, not run", dir, helper)
		}
		if err := trustedProgram("docker-credential-" + helper); err != nil {
			return "", fmt.Errorf("credential helper for %s: %w", host, err)
		}
	}
	type answer struct {
		ac  types.AuthConfig
		err error
	}
	got := make(chan answer, 1)
	go func() { ac, err := cf.GetAuthConfig(key); got <- answer{ac, err} }()
	var a answer
	select {
	case a = <-got:
	case <-time.After(credentialTimeout):
		return "", fmt.Errorf("the credential helper for %s did not answer within %s", host, credentialTimeout)
	}
	if a.err != nil {
		// The helper's own words may hold what it printed: not repeated.
		return "", fmt.Errorf("the credentials for %s in Docker's config (%s) could not be read", host, dir)
	}
	ac := a.ac
	if ac.Username == "" && ac.Password == "" && ac.Auth == "" && ac.IdentityToken == "" && ac.RegistryToken == "" {
		return "", nil
	}
	return registry.EncodeAuthConfig(registry.AuthConfig{Username: ac.Username, Password: ac.Password, Auth: ac.Auth,
		ServerAddress: ac.ServerAddress, IdentityToken: ac.IdentityToken, RegistryToken: ac.RegistryToken})
}

// helperName is what a credential helper's name may be: docker runs
// docker-credential-NAME from PATH, and a name with a slash would be a path.
var helperName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// credentialTimeout bounds a credential helper (one waiting for a
// passphrase would hold the start-up for ever).
const credentialTimeout = 30 * time.Second

// dockerConfigDir is the effective user's Docker config directory, or ""
// when there is none or it is not safe to read (owned by another user, or
// writable by group or others).
func dockerConfigDir() (string, error) {
	dir := os.Getenv("DOCKER_CONFIG")
	if dir == "" {
		u, err := user.Current()
		if err != nil {
			return "", nil
		}
		dir = filepath.Join(u.HomeDir, ".docker")
	}
	for _, p := range []string{dir, filepath.Join(dir, "config.json")} {
		fi, err := os.Lstat(p)
		if os.IsNotExist(err) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("Docker's config %s: %v", p, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != os.Geteuid() || fi.Mode()&0o022 != 0 || fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("Docker's config %s is not this user's own (owned by uid %d, mode %v): not read; fix its owner and mode as docker login would leave them", p, statUID(fi), fi.Mode())
		}
	}
	return dir, nil
}

// errRefused marks a registry's refusal of a pull (credentials missing
// or wrong).
var errRefused = errors.New("refused")

// credentialsMayGo says (nil) whether this user's registry credentials
// may go to the engine at host: only over a unix socket that this user or
// root owns, no other account may write, in directories only they may
// change. An engine on tcp:// or ssh://, or on a socket another account
// made, could be anyone's: it gets none.
func credentialsMayGo(host string) error {
	u, err := url.Parse(host)
	if err != nil || u.Scheme != "unix" || u.Path == "" {
		return fmt.Errorf("the engine at %s is not on a local unix socket", host)
	}
	mine := func(fi os.FileInfo) bool { uid := statUID(fi); return uid == 0 || uid == os.Geteuid() }
	fi, err := os.Lstat(u.Path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || !mine(fi) || fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("the engine's socket %s is not root's or this user's own", u.Path)
	}
	if dir, why, err := ledger.OthersMayChange(filepath.Dir(u.Path)); err != nil || dir != "" {
		return fmt.Errorf("the engine's socket %s is in %s, which another account may change (it %s)", u.Path, dir, why)
	}
	return nil
}

// trustedProgram checks the program that PATH names (a credential
// helper, run as root with a password's worth of trust): the file and
// every directory above it must be root's or this user's and not
// writable by others, so no other account put it there.
func trustedProgram(name string) error {
	p, err := exec.LookPath(name)
	if err != nil {
		return fmt.Errorf("%s is not on PATH", name)
	}
	if p, err = filepath.EvalSymlinks(p); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if uid := statUID(fi); uid != 0 && uid != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s (%s) is owned by uid %d or writable by others: not run", name, p, statUID(fi))
	}
	if dir, why, err := ledger.OthersMayChange(filepath.Dir(p)); err != nil || dir != "" {
		return fmt.Errorf("%s (%s) is in %s, which another account may change (it %s): not run", name, p, dir, why)
	}
	return nil
}

func statUID(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// pullError words an engine's pull error: which registry refused and how
// to log in, an image or tag the registry lacks, or the engine's words.
func pullError(img string, err error) error {
	msg := driver.OneLine(err.Error())
	low := strings.ToLower(msg)
	host := registryHost(img)
	switch {
	case strings.Contains(low, "unauthorized") || strings.Contains(low, "authentication required") ||
		strings.Contains(low, "access denied") || strings.Contains(low, "requested access") ||
		strings.Contains(low, "no basic auth credentials"):
		return fmt.Errorf("pull %s: registry %s refused the pull (%s); log in as docker pull would need: docker login %s: %w", img, host, msg, host, errRefused)
	case strings.Contains(low, "manifest unknown") || strings.Contains(low, "not found") && strings.Contains(low, "manifest"):
		return fmt.Errorf("pull %s: registry %s has no such image or tag (%s)", img, host, msg)
	}
	return fmt.Errorf("pull %s: %s", img, msg)
}

// pullImage pulls img through the engine as docker pull does, with the
// CLI's credentials: no time limit while bytes arrive, an error once
// stall passes without any. Progress goes to out once a second at most
// while it changes.
func (s *Server) pullImage(ctx context.Context, img string, stall time.Duration, out io.Writer) error {
	auth, withheld := "", ""
	if s.o.Rootless != "" {
		withheld = "a rootless engine"
	} else if err := credentialsMayGo(s.cli.DaemonHost()); err != nil {
		withheld = err.Error()
	} else {
		// Credentials go only to an engine of this account on this
		// machine: any other would hand this user's registry password
		// to whoever runs it.
		if auth, err = registryAuth(img); err != nil {
			return fmt.Errorf("pull %s: %w", img, err)
		}
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The engine says nothing until it has the manifest: a registry that
	// stalls before (its /v2/, a token, the manifest) is bounded here.
	early := time.AfterFunc(stall, cancel)
	rc, err := s.cli.ImagePull(pctx, img, image.PullOptions{RegistryAuth: auth})
	if !early.Stop() {
		if rc != nil {
			rc.Close()
		}
		return fmt.Errorf("pull %s: the registry sent nothing for %s (--pull-stall-timeout): gave up", img, stall)
	}
	if err != nil {
		err = pullError(img, err)
		if withheld != "" && errors.Is(err, errRefused) {
			err = fmt.Errorf("%w (no credentials were sent: %s)", err, withheld)
		}
		return err
	}
	defer rc.Close()
	msgs, errc := make(chan pullMessage), make(chan error, 1)
	go func() {
		dec := json.NewDecoder(rc)
		for {
			var m pullMessage
			if err := dec.Decode(&m); err != nil {
				if err == io.EOF {
					err = nil
				}
				errc <- err
				return
			}
			select {
			case msgs <- m:
			case <-pctx.Done():
				errc <- pctx.Err()
				return
			}
		}
	}()
	return followPull(ctx, img, stall, out, msgs, errc, cancel)
}

// followPull reads the pull's messages until the stream ends, an error
// comes, or stall passes without progress (then cancel ends the pull).
func followPull(ctx context.Context, img string, stall time.Duration, out io.Writer, msgs <-chan pullMessage, errc <-chan error, cancel func()) error {
	st := newPullState()
	start := time.Now()
	lastAt, lastGot, lastLine := start, int64(0), ""
	timer := time.NewTimer(stall)
	defer timer.Stop()
	say := func(force bool) {
		now := time.Now()
		if out == nil || !force && lastLine != "" && now.Sub(lastAt) < time.Second {
			return // the first line at once, then at most one a second
		}
		got, _, _, _ := st.figures()
		rate := 0.0
		if dt := now.Sub(lastAt).Seconds(); dt > 0 && got > lastGot {
			rate = mebibytes(got-lastGot) / dt // a retried layer counts down: no negative rate
		}
		if line := st.line(img, rate); line != lastLine || force {
			fmt.Fprintf(out, "dbduel: %s\n", line)
			lastLine = line
		}
		lastAt, lastGot = now, got
	}
	for {
		select {
		case m := <-msgs:
			if m.Error != "" {
				return pullError(img, errors.New(m.Error))
			}
			if st.apply(m) {
				if !timer.Stop() {
					select {
					case <-timer.C:
					default:
					}
				}
				timer.Reset(stall)
				say(false)
			}
		case err := <-errc:
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return pullError(img, err)
			}
			if out != nil {
				got, _, _, _ := st.figures()
				fmt.Fprintf(out, "dbduel: pull %s: done, %.1f MiB in %s\n", img, mebibytes(got), time.Since(start).Round(100*time.Millisecond))
			}
			return nil
		case <-timer.C:
			cancel()
			got, total, done, layers := st.figures()
			return fmt.Errorf("pull %s: no progress for %s (--pull-stall-timeout): %.1f/%.1f MiB, %d/%d layers when it stalled; registry %s", img, stall, mebibytes(got), mebibytes(total), done, layers, registryHost(img))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// imageDigest is what names an image's bits: its repo digest in the
// repository it was named by (sha256:…), or its local ID when it has none
// there (a locally built or loaded image).
func imageDigest(repoDigests []string, img, id string) string {
	named, err := reference.ParseNormalizedNamed(img)
	if err != nil {
		return id
	}
	for _, rd := range repoDigests {
		name, dg, ok := strings.Cut(rd, "@")
		if !ok {
			continue
		}
		if rn, rerr := reference.ParseNormalizedNamed(name); rerr == nil && rn.Name() == named.Name() {
			return dg
		}
	}
	return id
}

// RegistryServes asks the Docker engine whether a registry serves ref:
// its manifest, no layer pulled (GET /distribution/REF/json), within
// timeout; nil when it does.
func RegistryServes(ctx context.Context, ref string, timeout time.Duration) error {
	cli, err := NewClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	auth := ""
	if credentialsMayGo(cli.DaemonHost()) == nil {
		if auth, err = registryAuth(ref); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := cli.DistributionInspect(ctx, ref, auth); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer within %s", timeout)
		}
		return errors.New(driver.OneLine(err.Error()))
	}
	return nil
}
