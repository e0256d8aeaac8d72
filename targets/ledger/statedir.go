package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// The state directory holds what dbduel must find again (pidfiles, kept
// URLs, the managed servers' directories) and dbduel runs as root: no one
// else may be able to put, rename or swap anything in it, or in any
// directory above it. So it is made 0700 and owned by whoever runs dbduel,
// never made looser afterwards, and refused when it is not so, or when a
// directory above it can be changed by another user.

// Dir is dbduel's state directory: DBDUEL_STATE_DIR, else /var/lib/dbduel
// for root, else $XDG_STATE_HOME/dbduel (~/.local/state/dbduel). Not under
// /tmp or $XDG_RUNTIME_DIR: the managed servers' datadirs and fileio's
// files live here, and belong on a disk.
func Dir() string {
	if d := os.Getenv("DBDUEL_STATE_DIR"); d != "" {
		return filepath.Clean(d)
	}
	if os.Geteuid() == 0 {
		return "/var/lib/dbduel"
	}
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "dbduel")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "dbduel")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("dbduel-%d", os.Geteuid()))
}

// ErrUnsafe is a state directory (or a directory above it) that another
// user could change.
var ErrUnsafe = errors.New("unsafe state directory")

// Ensure makes the state directory when it is missing (0700, this user's)
// and checks it: an error names what is wrong and how to fix it.
func Ensure() (string, error) {
	dir := Dir()
	if err := checkAncestors(filepath.Dir(dir)); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("state directory %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil { // its parents (~/.local/state), this user's
			return "", fmt.Errorf("state directory %s: %w", dir, err)
		}
	}
	if err := checkPrivate(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// checkPrivate refuses dir unless it is a directory (not a symlink) of
// this user's that no one else may enter.
func checkPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("state directory %s: %w", dir, err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return unsafe(dir, "is a symbolic link", "remove it (dbduel makes its own), or set DBDUEL_STATE_DIR to a directory of yours")
	case !fi.IsDir():
		return unsafe(dir, "is not a directory", "remove it, or set DBDUEL_STATE_DIR elsewhere")
	case int(st.Uid) != os.Geteuid():
		return unsafe(dir, fmt.Sprintf("belongs to uid %d, not to this user (uid %d)", st.Uid, os.Geteuid()),
			"remove it (someone else made it), or set DBDUEL_STATE_DIR to a directory of yours")
	case fi.Mode().Perm()&0o077 != 0:
		return unsafe(dir, fmt.Sprintf("has mode %04o: others may enter it", fi.Mode().Perm()), "chmod 700 "+dir)
	}
	return nil
}

// checkAncestors refuses a directory above the state directory that a
// user other than root and this one could change (OthersMayChange).
func checkAncestors(dir string) error {
	at, why, err := OthersMayChange(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if at != "" {
		return unsafe(at, "(above the state directory) "+why, "set DBDUEL_STATE_DIR to a directory under one of root's or yours")
	}
	return nil
}

// OthersMayChange is the first of dir and its parents that a user other
// than root and this one could change, and why ("" when none): one they
// own, or one they may write to without the sticky bit (which keeps them
// from renaming what is not theirs, as in /tmp). A directory that does not
// exist is passed over; a symlink is as safe as the directory it names.
func OthersMayChange(dir string) (at, why string, err error) {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			owner := int(fi.Sys().(*syscall.Stat_t).Uid)
			switch {
			case owner != 0 && owner != os.Geteuid():
				return d, fmt.Sprintf("belongs to uid %d", owner), nil
			case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&os.ModeSticky == 0:
				return d, fmt.Sprintf("has mode %04o: others may write to it", fi.Mode().Perm()), nil
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("%s: %w", d, err)
		}
		if d == filepath.Dir(d) {
			return "", "", nil
		}
	}
}

func unsafe(path, what, fix string) error {
	return fmt.Errorf("%w: %s %s: %s", ErrUnsafe, path, what, fix)
}

// nameRE is what a run id or a target name may be before it becomes part
// of a path: no separator, no dot-dot, nothing a shell or a glob reads.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// CheckName refuses a run id or target name that is not fit for a path.
func CheckName(what, s string) error {
	if !nameRE.MatchString(s) {
		return fmt.Errorf("%s %q: want lowercase letters, digits, - and _ (at most 63)", what, s)
	}
	return nil
}

// Marker is the file dbduel puts in every directory it makes in the state
// directory: clean removes a directory only with it (and only one of its
// own user's, or of a server's account it made the directory for).
const Marker = ".dbduel-made"

// MkdirTemp makes a new directory in the state directory, named prefix
// and a random suffix, 0700, with the marker.
func MkdirTemp(prefix string) (string, error) {
	base, err := Ensure()
	if err != nil {
		return "", err
	}
	return mkdirMarked(base, prefix)
}

func mkdirMarked(base, prefix string) (string, error) {
	if strings.ContainsAny(prefix, "/\x00") {
		return "", fmt.Errorf("directory prefix %q", prefix)
	}
	dir, err := os.MkdirTemp(base, prefix)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(filepath.Join(dir, Marker), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, f.Close()
}

// RemoveMarked removes dir if dbduel made it: in the state directory, the
// servers' directory or the temporary one, with the marker, owned by root
// or this user. It says why not otherwise.
func RemoveMarked(dir string) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if parent != Dir() && parent != ServersDir() && parent != filepath.Clean(os.TempDir()) {
		return fmt.Errorf("%s is not in dbduel's state directory: left alone", dir)
	}
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 || !ownedByUs(fi) {
		return fmt.Errorf("%s is not a directory dbduel made: left alone", dir)
	}
	m, err := os.Lstat(filepath.Join(dir, Marker))
	if err != nil || !m.Mode().IsRegular() || !ownedByUs(m) {
		if _, gone := os.Lstat(dir); errors.Is(gone, os.ErrNotExist) {
			return nil // removed meanwhile (by the run that made it)
		}
		return fmt.Errorf("%s has no mark of dbduel's: left alone", dir)
	}
	return os.RemoveAll(dir) // never follows a symbolic link inside
}

func ownedByUs(fi os.FileInfo) bool {
	uid := int(fi.Sys().(*syscall.Stat_t).Uid)
	return uid == os.Geteuid() || uid == 0
}

// ServersDir is where servers that run as another account (postgres,
// mysql) have their directories, when dbduel runs as root: 0711 and
// root's (each server's own 0700 and its account's), beside the state
// directory, which stays root's alone. Otherwise it is the state
// directory.
func ServersDir() string {
	if os.Geteuid() != 0 {
		return Dir()
	}
	return Dir() + "-servers"
}

// MkdirServer makes a server's directory, with the marker, for a server
// that runs as another account (uid; -1: this user): dbduel's, 0711, so
// that the account reaches the directories its caller makes for it in
// there, and changes nothing else.
func MkdirServer(prefix string, uid int) (string, error) {
	if uid < 0 || os.Geteuid() != 0 {
		return MkdirTemp(prefix)
	}
	base := ServersDir()
	if _, err := Ensure(); err != nil { // the same checks of the directories above
		return "", err
	}
	if err := os.Mkdir(base, 0o711); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(base)
	if err != nil {
		return "", err
	}
	if st := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
		return "", unsafe(base, "is not a directory of root's that only root may write to", "remove it; dbduel makes it")
	}
	dir, err := mkdirMarked(base, prefix)
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o711) // a directory of dbduel's own, just made
}

// ServerDirPrefix is the name of a managed server's directory before its
// random suffix, short enough that its socket's path stays under the
// 107 bytes a unix socket's path may have.
func ServerDirPrefix(runID, target string) string {
	return "dbduel-" + runID[:min(len(runID), 17)] + "-" + target[:min(len(target), 10)] + "-"
}

// MkdirTempIn is MkdirTemp in base (the temporary directory, for what
// another user must reach): a new directory, 0700, with the marker.
func MkdirTempIn(base, prefix string) (string, error) { return mkdirMarked(base, prefix) }

// RemoveOwn removes a directory dbduel made, its marker last: a clean of
// the run running meanwhile still finds it marked, or finds it gone.
func RemoveOwn(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, e := range entries {
		if e.Name() != Marker {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	errs = append(errs, os.RemoveAll(dir))
	return errors.Join(errs...)
}
