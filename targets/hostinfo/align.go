package hostinfo

import "unsafe"

// alignedBlock is 4096 zero bytes at a 4096-byte boundary (O_DIRECT's rule).
func alignedBlock() []byte {
	const n = 4096
	b := make([]byte, 2*n)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) % n); r != 0 {
		off = n - r
	}
	return b[off : off+n]
}
