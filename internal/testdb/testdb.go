// Package testdb starts real MariaDB servers for integration tests: each
// test package gets its own mariadbd on a free port with a temp datadir,
// through the same code as dbduel's local: target, and never touches a
// system server on 3306. A missing server binary fails the test: CI never skips.
package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dbduel/dbduel/internal/integration"

	mysqldrv "github.com/dbduel/dbduel/engine/driver/mysql"

	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/local"
)

// Server is a running test server.
type Server struct {
	*local.Server
	RunID string
}

// Start starts a mariadbd for the test and stops it when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	integration.Require(tb, "mariadbd")
	runID := "test-" + ledger.NewRunID()
	srv := startLocal(tb, "testdb", "mariadbd", runID, "apt-get install mariadb-server")
	return &Server{Server: srv, RunID: runID}
}

// URL is a mysql:// SPEC for the server's database db ("" = sbtest).
func (s *Server) URL(db string) string {
	ep := s.Endpoint()
	if db == "" {
		db = ep.DB
	}
	return fmt.Sprintf("mysql://%s:%s@%s:%d/%s", url.PathEscape(ep.User), url.PathEscape(ep.Password), ep.Host, ep.Port, db)
}

// DB opens the server's sbtest database.
func (s *Server) DB(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := mysqldrv.SQLOpen(s.Endpoint())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Exec runs statements, failing the test on error.
func (s *Server) Exec(tb testing.TB, stmts ...string) {
	tb.Helper()
	db := s.DB(tb)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
}

// StartPostgres starts a private PostgreSQL cluster (dbduel's local:postgres)
// for the test and stops it when the test ends.
func StartPostgres(tb testing.TB) *local.Server {
	tb.Helper()
	integration.Require(tb, "PostgreSQL")
	return startLocal(tb, "pgtest", "postgres", "test-"+ledger.NewRunID(), "apt-get install postgresql")
}

// startLocal starts a managed server for the test and stops it at its end.
func startLocal(tb testing.TB, name, bin, runID, install string) *local.Server {
	tb.Helper()
	setStateDir()
	srv, err := local.New(name, bin, runID)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		srv.Stop(context.Background())
		tb.Fatalf("testdb: start %s (%s): %v", bin, install, err)
	}
	tb.Cleanup(func() { srv.Stop(context.Background()) })
	return srv
}

// setStateDir gives test servers a state directory of the test
// process's own (a fresh one: dbduel refuses one it did not make private)
// when the package did not choose one.
func setStateDir() {
	stateDirOnce.Do(func() {
		if os.Getenv("DBDUEL_STATE_DIR") != "" {
			return
		}
		if dir, err := os.MkdirTemp("", "dbduel-test-state-"); err == nil {
			os.Setenv("DBDUEL_STATE_DIR", dir)
		}
	})
}

var stateDirOnce sync.Once

// shared are the package's shared servers, started on first use and
// stopped by StopShared (each a server of its own kind).
var shared struct {
	sync.Mutex
	servers map[string]*local.Server
}

// Shared is a mariadbd the whole test package shares: each test works in
// a database of its own (Database), so tests run side by side on it.
// TestMain calls StopShared after the tests.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	integration.Require(tb, "mariadbd")
	return &Server{Server: sharedLocal(tb, "mariadbd", "apt-get install mariadb-server")}
}

// SharedPostgres is Shared's PostgreSQL cluster.
func SharedPostgres(tb testing.TB) *local.Server {
	tb.Helper()
	integration.Require(tb, "PostgreSQL")
	return sharedLocal(tb, "postgres", "apt-get install postgresql")
}

func sharedLocal(tb testing.TB, bin, install string) *local.Server {
	tb.Helper()
	shared.Lock()
	defer shared.Unlock()
	if s := shared.servers[bin]; s != nil {
		return s
	}
	setStateDir()
	srv, err := local.New("shared-"+bin, bin, "test-"+ledger.NewRunID())
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := srv.Start(ctx); err != nil {
		srv.Stop(context.Background())
		tb.Fatalf("testdb: start %s (%s): %v", bin, install, err)
	}
	if shared.servers == nil {
		shared.servers = map[string]*local.Server{}
	}
	shared.servers[bin] = srv
	return srv
}

// StopShared stops the package's shared servers.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	for bin, s := range shared.servers {
		s.Stop(context.Background())
		delete(shared.servers, bin)
	}
}

// DatabaseName is a database name of tb's own, from base: tests on a
// shared server keep out of each other's way.
func DatabaseName(tb testing.TB, base string) string {
	h := fnv.New32a()
	h.Write([]byte(tb.Name()))
	return fmt.Sprintf("%s_%08x", base, h.Sum32())
}
