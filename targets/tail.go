package targets

import "sync"

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
