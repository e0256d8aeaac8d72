package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// brokenPipe guards stdout and stderr: when the reader of either goes away
// (`dbduel run ... | head -1`), the run stops as it does on SIGINT: the
// engine ends, managed targets are removed, and dbduel exits.
//
// Go kills a program that writes to a closed stdout or stderr with SIGPIPE
// unless it asks for SIGPIPE itself, so it does (the signal is only
// swallowed: a socket's EPIPE must not stop the run, only a write here).
type brokenPipe struct {
	once   sync.Once
	cancel func()
}

func newBrokenPipe(cancel func()) *brokenPipe {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGPIPE)
	go func() {
		for range sigs {
		}
	}()
	return &brokenPipe{cancel: cancel}
}

// guard wraps w so that a write failing with EPIPE stops the run.
func (b *brokenPipe) guard(w *os.File) io.Writer { return &guardedWriter{File: w, b: b} }

type guardedWriter struct {
	*os.File
	b *brokenPipe
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
