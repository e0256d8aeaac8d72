package sys

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// fsNames are statfs magic numbers of the filesystems a datadir is on.
var fsNames = map[int64]string{
	0xEF53: "ext4", 0x58465342: "xfs", 0x9123683E: "btrfs", 0x01021994: "tmpfs",
	0x794c7630: "overlay", 0x2FC12FC1: "zfs", 0x6969: "nfs", 0x65735546: "fuse",
}

// FSType names the filesystem dir is on ("unknown" when statfs fails).
func FSType(dir string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "unknown"
	}
	if n, ok := fsNames[int64(st.Type)]; ok {
		return n
	}
	return "0x" + strconv.FormatUint(uint64(st.Type), 16)
}
