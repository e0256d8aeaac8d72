// Package provision is what dbduel gives a server it manages: a free
// port on 127.0.0.1, a generated password, the protocol's shared config
// file, and the tail of the server's output for its error messages.
package provision

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/dbduel/dbduel/engine/driver"
)

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// NewPassword returns a random password for a generated account.
func NewPassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// WriteConfig writes the protocol's shared config file into dir (with an
// include of the user's file, as the server sees it) and returns its path:
// a new file, readable by the server's account, written by dbduel's.
func WriteConfig(protocol, dir, include string) (string, error) {
	p, err := driver.Lookup(protocol)
	if err != nil {
		return "", err
	}
	if p.Config.Name == "" {
		return "", fmt.Errorf("%s servers have no shared config file", p.Title)
	}
	path := filepath.Join(dir, p.Config.Name)
	return path, WriteNew(path, p.Config.Render(include), 0o644, -1, -1)
}

// TailBuffer keeps the last Max bytes written to it (safe for concurrent
// use): a server's or agent's last words, for an error message.
type TailBuffer struct {
	mu  sync.Mutex
	buf []byte
	Max int
}

func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.Max {
		b.buf = b.buf[len(b.buf)-b.Max:]
	}
	return len(p), nil
}

func (b *TailBuffer) String() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// WriteNew writes a new file (never through a link, never over one that
// exists) with perm, and gives it to uid:gid when uid >= 0.
func WriteNew(path string, data []byte, perm os.FileMode, uid, gid int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if uid >= 0 {
		if err := f.Chown(uid, gid); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Mkdir makes a new directory (an existing one is an error) with perm,
// and gives it to uid:gid when uid >= 0.
func Mkdir(path string, perm os.FileMode, uid, gid int) error {
	if err := os.Mkdir(path, perm); err != nil {
		return err
	}
	if uid >= 0 {
		return os.Lchown(path, uid, gid)
	}
	return nil
}
