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
// include of the user's file, as the server sees it) and returns its path.
func WriteConfig(protocol, dir, include string) (string, error) {
	p, err := driver.Lookup(protocol)
	if err != nil {
		return "", err
	}
	if p.Config.Name == "" {
		return "", fmt.Errorf("%s servers have no shared config file", p.Title)
	}
	path := filepath.Join(dir, p.Config.Name)
	return path, os.WriteFile(path, p.Config.Render(include), 0o644)
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
