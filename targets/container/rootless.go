package container

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
