// Command mongo-test-server is dbduel's MongoDB-protocol test fixture:
// FerretDB (embedded, PostgreSQL backend) behind a small front that counts
// the operations it serves as mongod's serverStatus.opcounters do. It is a
// protocol fixture for dbduel's tests and demos, not MongoDB's performance:
// buildInfo says ferretdbVersion, and dbduel labels its results so.
//
// It lives in its own module so that FerretDB's dependency tree stays out
// of dbduel's go.mod.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/build/version"
	"github.com/FerretDB/FerretDB/ferretdb"
)

// ferretVersion is the FerretDB module this program was built with: an
// embedded FerretDB reports "unknown" (its version file is generated at
// release), so buildInfo's ferretdbVersion is set from the build's record.
func ferretVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/FerretDB/FerretDB" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address the MongoDB protocol is served on")
	pgURL := flag.String("postgresql-url", os.Getenv("FERRETDB_POSTGRESQL_URL"), "PostgreSQL backend, e.g. postgres://user@127.0.0.1:5432/ferretdb?pool_max_conns=200")
	quiet := flag.Bool("quiet", true, "log only FerretDB's errors")
	flag.Parse()
	if *pgURL == "" {
		fmt.Fprintln(os.Stderr, "mongo-test-server: --postgresql-url (or FERRETDB_POSTGRESQL_URL) is required")
		os.Exit(2)
	}
	if err := run(*listen, *pgURL, *quiet); err != nil {
		fmt.Fprintln(os.Stderr, "mongo-test-server:", err)
		os.Exit(1)
	}
}

func run(listen, pgURL string, quiet bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir, err := os.MkdirTemp("", "mongo-test-server-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "ferretdb.sock")

	level := slog.LevelInfo
	if quiet {
		level = slog.LevelError
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	version.Get().Version = ferretVersion()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{Unix: sock},
		Logger:        logger,
		Handler:       "postgresql",
		PostgreSQLURL: pgURL,
	})
	if err != nil {
		return err
	}
	ferretDone := make(chan struct{})
	go func() {
		defer close(ferretDone)
		_ = f.Run(ctx)
	}()
	if err := waitForSocket(ctx, sock, 30*time.Second); err != nil {
		return err
	}

	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fr := &front{counts: &opCounters{}, dial: func() (net.Conn, error) { return net.Dial("unix", sock) }}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	// The URI on a line of its own: scripts read it.
	fmt.Printf("mongodb://%s/\n", l.Addr())
	os.Stdout.Sync()
	for {
		c, err := l.Accept()
		if err != nil {
			break
		}
		go fr.serve(c)
	}
	<-ferretDone
	return nil
}

func waitForSocket(ctx context.Context, path string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("FerretDB did not listen on %s within %s", path, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
