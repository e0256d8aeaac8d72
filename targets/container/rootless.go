package container

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
)

// Rootless Podman (podman:IMAGE,rootless=USER): dbduel's private Podman
// service runs as an unprivileged user, whose containers live in a user
// namespace over that user's subordinate ids, whose storage and volumes
// are the user's own, and whose published ports go through rootlessport,
// a userland forwarder like docker-proxy (slirp4netns carries the
// container's own outgoing traffic).

// rootlessUser is the user a rootless service runs as.
type rootlessUser struct {
	name     string
	uid, gid int
	home     string
}

// lookupRootless checks that this machine lets name run rootless Podman
// (root is "/" but in tests) and says what is missing when it does not.
func lookupRootless(root, name string) (rootlessUser, error) {
	fail := func(format string, args ...any) (rootlessUser, error) {
		return rootlessUser{}, fmt.Errorf("rootless=%s: "+format, append([]any{name}, args...)...)
	}
	u, ok := passwdEntry(filepath.Join(root, "etc/passwd"), name)
	if !ok {
		return fail("no such user (useradd -m %s, then usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s)", name, name)
	}
	if u.uid == 0 {
		return fail("root is not rootless: name an unprivileged user, or drop rootless= for rootful Podman")
	}
	for _, f := range []string{"etc/subuid", "etc/subgid"} {
		if !hasSubordinateIDs(filepath.Join(root, f), u) {
			return fail("the user has no range in /%s (usermod --add-subuids 100000-165535 --add-subgids 100000-165535 %s)", f, name)
		}
	}
	if n, err := os.ReadFile(filepath.Join(root, "proc/sys/user/max_user_namespaces")); err == nil && strings.TrimSpace(string(n)) == "0" {
		return fail("this machine does not allow user namespaces (user.max_user_namespaces is 0)")
	}
	for bin, pkg := range map[string]string{"newuidmap": "uidmap", "newgidmap": "uidmap", "slirp4netns": "slirp4netns"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fail("%s is not installed (apt-get install %s)", bin, pkg)
		}
	}
	if me := os.Getuid(); me != 0 && me != u.uid {
		return fail("dbduel runs as uid %d: run it as root or as %s", me, name)
	}
	return u, nil
}

// passwdEntry reads name's uid, gid and home from a passwd file.
func passwdEntry(path, name string) (rootlessUser, bool) {
	f, err := os.Open(path)
	if err != nil {
		return rootlessUser{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ":")
		if len(fs) < 6 || fs[0] != name {
			continue
		}
		uid, err1 := strconv.Atoi(fs[2])
		gid, err2 := strconv.Atoi(fs[3])
		if err1 != nil || err2 != nil {
			return rootlessUser{}, false
		}
		return rootlessUser{name: name, uid: uid, gid: gid, home: fs[5]}, true
	}
	return rootlessUser{}, false
}

// hasSubordinateIDs says whether a subuid/subgid file gives u a range
// (its lines are NAME-or-UID:START:COUNT).
func hasSubordinateIDs(path string, u rootlessUser) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		fs := strings.Split(strings.TrimSpace(l), ":")
		if len(fs) != 3 || (fs[0] != u.name && fs[0] != strconv.Itoa(u.uid)) {
			continue
		}
		if n, err := strconv.Atoi(fs[2]); err == nil && n > 0 {
			return true
		}
	}
	return false
}

// rootlessUsers are the users whose Podman stores a clean must look in:
// those with subordinate ids and a container store in their home.
func rootlessUsers(root string) []rootlessUser {
	data, err := os.ReadFile(filepath.Join(root, "etc/subuid"))
	if err != nil {
		return nil
	}
	var out []rootlessUser
	seen := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(l), ":")
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		u, ok := passwdEntry(filepath.Join(root, "etc/passwd"), name)
		if !ok {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, u.home, ".local/share/containers/storage")); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// runtimeDir is the user's runtime directory, /run/user/UID, made as a
// login session would make it when there is none (0700, the user's).
// dbduel running as the user itself uses its own XDG_RUNTIME_DIR.
func (u rootlessUser) runtimeDir() (string, error) {
	if os.Getuid() == u.uid {
		if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
			return d, nil
		}
	}
	d := filepath.Join("/run/user", strconv.Itoa(u.uid))
	if _, err := os.Stat(d); err == nil {
		return d, nil
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("rootless=%s: the user's runtime directory: %w", u.name, err)
	}
	return d, os.Chown(d, u.uid, u.gid)
}

// pausePIDs are uid's rootless Podman pause processes: each holds a user
// namespace that later podman commands join; it outlives the command that
// started it, in a session of its own.
func pausePIDs(procRoot string, uid int) map[int]bool {
	out := map[int]bool{}
	dirs, _ := filepath.Glob(filepath.Join(procRoot, "[0-9]*"))
	for _, d := range dirs {
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil || strings.TrimSpace(string(comm)) != "podman pause" {
			continue
		}
		if fi, err := os.Stat(d); err != nil || !ownedBy(fi, uid) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			out[pid] = true
		}
	}
	return out
}

// pauseFile, in a rootless service's socket directory, records the pause
// processes it started, for a clean after a killed run.
const pauseFile = "pauses"

// notePauses records the pause processes that appeared since the service
// was launched (it starts one, or joins the user's existing one, within
// moments of starting).
func (p *podmanService) notePauses() {
	var started []int
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		started = started[:0]
		for pid := range pausePIDs("/proc", p.uid) {
			if !p.pausesBefore[pid] {
				started = append(started, pid)
			}
		}
		if len(started) > 0 || len(p.pausesBefore) > 0 || time.Now().After(deadline) {
			break
		}
	}
	notePausesOf(p.uid, started)
	var b strings.Builder
	for _, pid := range started {
		fmt.Fprintf(&b, "%d %d\n", p.uid, pid)
	}
	// In the service's directory, root's: a new file, never through a link.
	if f, err := os.OpenFile(filepath.Join(p.dir, pauseFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600); err == nil {
		f.WriteString(b.String())
		f.Close()
	}
}

// recordedPauses reads a killed run's pause file: pids by uid.
func recordedPauses(dir string, into map[int][]int) {
	data, _ := os.ReadFile(filepath.Join(dir, pauseFile))
	for _, l := range strings.Split(string(data), "\n") {
		var uid, pid int
		if _, err := fmt.Sscanf(l, "%d %d", &uid, &pid); err == nil {
			into[uid] = append(into[uid], pid)
		}
	}
}

// ourPauses are the pause processes this dbduel started (or a killed
// run's did, for a clean), by uid: several rootless targets of one user
// share one, which ends when the last of them finds the user idle.
var ourPauses = struct {
	sync.Mutex
	byUID map[int]map[int]bool
}{byUID: map[int]map[int]bool{}}

// notePausesOf adds pids to uid's pause processes of this dbduel's.
func notePausesOf(uid int, pids []int) {
	ourPauses.Lock()
	defer ourPauses.Unlock()
	if ourPauses.byUID[uid] == nil {
		ourPauses.byUID[uid] = map[int]bool{}
	}
	for _, pid := range pids {
		ourPauses.byUID[uid][pid] = true
	}
}

// endPauses ends uid's pause processes of this dbduel's that are still
// running as such (a pid reused since is left alone).
func endPauses(procRoot string, uid int) {
	ourPauses.Lock()
	pids := ourPauses.byUID[uid]
	delete(ourPauses.byUID, uid)
	ourPauses.Unlock()
	live := pausePIDs(procRoot, uid)
	var killed []int
	for pid := range pids {
		if live[pid] {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	// A killed process runs on for a moment, tearing down its namespaces:
	// a clean that returned before it is dead would leave it behind.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !anyRunning(procRoot, killed) {
			return
		}
	}
}

// anyRunning says whether any of pids is still a process that has not
// exited (a zombie has: it waits only for its parent to reap it).
func anyRunning(procRoot string, pids []int) bool {
	for _, pid := range pids {
		stat, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		// The state follows the command's closing parenthesis.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X' {
			return true
		}
	}
	return false
}

// userIdle says whether the rootless user has no running container left
// on this engine, so the pause process may end: it holds the namespace
// every one of them runs in.
func (e *engine) userIdle() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{})
	return err == nil && len(cs) == 0
}

func ownedBy(fi os.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

// endServiceOf ends the processes serving the socket in dir (found by the
// socket's path in their command line, which only they have): SIGTERM,
// then SIGKILL after 5 s.
func endServiceOf(procRoot, dir string) {
	want := []byte(filepath.Join(dir, "sock", "podman.sock"))
	owner := -1 // the user of the socket's directory: a service of another user is not this one
	if fi, err := os.Lstat(filepath.Join(dir, "sock")); err == nil && fi.IsDir() {
		owner = int(fi.Sys().(*syscall.Stat_t).Uid)
	}
	find := func() []int {
		var pids []int
		cmdlines, _ := filepath.Glob(filepath.Join(procRoot, "[0-9]*", "cmdline"))
		for _, c := range cmdlines {
			data, err := os.ReadFile(c)
			if err != nil || !bytes.Contains(data, want) {
				continue
			}
			if fi, err := os.Stat(filepath.Dir(c)); err != nil || !ownedBy(fi, owner) || !isPodman(filepath.Dir(c)) {
				continue
			}
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(c))); err == nil && pid != os.Getpid() {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	sig := syscall.SIGTERM
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pids := find()
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			sig = syscall.SIGKILL
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, sig)
		}
		if sig == syscall.SIGKILL {
			return
		}
	}
}

// isPodman says the process at /proc/PID (dir) runs podman.
func isPodman(dir string) bool {
	exe, err := os.Readlink(filepath.Join(dir, "exe"))
	return err == nil && filepath.Base(strings.TrimSuffix(exe, " (deleted)")) == "podman"
}
