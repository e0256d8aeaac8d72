package hostinfo

import "strings"

// Mount is one line of a mountinfo table (/proc/PID/mountinfo).
type Mount struct {
	Point        string // where it is mounted
	Options      string // per-mount options ("rw,noatime")
	FSType       string
	SuperOptions string // the superblock's options
}

// MountAt is the mount with the longest mount point holding path, read
// from a mountinfo table (the zero Mount when none does): the one parser of
// mountinfo for the filesystem type, the environment's mount options and
// the system facts' options.
func MountAt(mountinfo, path string) Mount {
	var best Mount
	for _, l := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 6 || len(g) < 3 {
			continue
		}
		if mp := f[4]; strings.HasPrefix(path, mp) && len(mp) > len(best.Point) {
			best = Mount{Point: mp, Options: f[5], FSType: g[0], SuperOptions: g[2]}
		}
	}
	return best
}

// FSTypeAt is the filesystem type of the mount holding path.
func FSTypeAt(mountinfo, path string) string { return MountAt(mountinfo, path).FSType }
