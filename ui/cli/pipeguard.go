package cli

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// BrokenPipe guards stdout and stderr: when the reader of either goes away
// (`dbduel run ... | head -1`), the run stops as it does on SIGINT: the
// engine ends, managed targets are removed, and dbduel exits.
//
// Go kills a program that writes to a closed stdout or stderr with SIGPIPE
// unless it asks for SIGPIPE itself, so it does (the signal is only
// swallowed: a socket's EPIPE must not stop the run, only a write here).
type BrokenPipe struct {
	once   sync.Once
	cancel func()
}

// NewBrokenPipe calls cancel once when a guarded writer meets EPIPE.
func NewBrokenPipe(cancel func()) *BrokenPipe {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGPIPE)
	go func() {
		for range sigs {
		}
	}()
	return &BrokenPipe{cancel: cancel}
}

// Guard wraps w so that a write failing with EPIPE stops the run.
func (b *BrokenPipe) Guard(w *os.File) io.Writer { return &guardedWriter{File: w, b: b} }

type guardedWriter struct {
	*os.File
	b *BrokenPipe
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	n, err := g.File.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		g.b.once.Do(g.b.cancel)
	}
	return n, err
}

// fileOf returns the file behind w (for terminal checks), or nil.
func fileOf(w io.Writer) *os.File {
	switch f := w.(type) {
	case *os.File:
		return f
	case *guardedWriter:
		return f.File
	}
	return nil
}
