package container

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
)

// healthServer is a Server whose engine is the unix socket at path.
func healthServer(t *testing.T, path string) *Server {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+path), client.WithVersion("1.41"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return &Server{cli: cli, eng: &engine{cli: cli, addr: "unix://" + path}, id: "c0ffee"}
}

// health asks Health as the run's watcher does: one bounded read.
func health(s *Server, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.Health(ctx)
}

// An engine that accepts and never answers is slow, not gone: the run
// goes on through enginePatience of timed-out reads, and ends after it.
func TestHealthWaitsOutASlowEngine(t *testing.T) {
	old := enginePatience
	enginePatience = 600 * time.Millisecond
	t.Cleanup(func() { enginePatience = old })
	path := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() }) // held open, never answered
		}
	}()
	s := healthServer(t, path)
	start := time.Now()
	var err2 error
	for err2 == nil && time.Since(start) < 10*time.Second {
		err2 = health(s, 100*time.Millisecond)
	}
	took := time.Since(start)
	if err2 == nil || !strings.Contains(err2.Error(), "engine unreachable") || !strings.Contains(err2.Error(), "for 600ms") {
		t.Fatalf("a silent engine ended the run with %v, want engine unreachable for 600ms", err2)
	}
	if took < enginePatience {
		t.Fatalf("the run ended after %s of a slow engine, before the %s of patience", took, enginePatience)
	}
}

// An engine whose socket refuses the connection is gone: the first read
// ends the run.
func TestHealthEndsAtOnceOnARefusedEngine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // the path is left with no listener: connect is refused
	s := healthServer(t, path)
	err = health(s, time.Second)
	if err == nil || !strings.Contains(err.Error(), "engine unreachable") {
		t.Fatalf("a refused engine gave %v, want engine unreachable at once", err)
	}
}
