package postgres_test

import (
	"context"
	"testing"

	"github.com/dbduel/dbduel/engine/driver"
	pgdrv "github.com/dbduel/dbduel/engine/driver/postgres"
	"github.com/dbduel/dbduel/internal/testdb"
)

// ReleaseIdle closes the idle connections (each a server process) and
// keeps the held ones; what the closed ones ran is in the database's
// transaction count at once, not when their processes exit.
func TestReleaseIdleClosesIdleConnectionsAndKeepsTheirCounts(t *testing.T) {
	srv := testdb.StartPostgres(t)
	ctx := context.Background()
	db, err := pgdrv.Open(srv.Endpoint(), 8)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before, err := db.Transactions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var idle []driver.Conn
	for range 3 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	held, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range idle {
		for range 5 { // five transactions a connection, unpublished
			if _, err := c.(driver.SQLConn).SQL().ExecContext(ctx, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	if err := db.ReleaseIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if s := db.DB.Stats(); s.Idle != 0 || s.OpenConnections != 1 {
		t.Fatalf("after ReleaseIdle: %d idle, %d open; want 0 and the held one", s.Idle, s.OpenConnections)
	}
	if _, err := held.(driver.SQLConn).SQL().ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatalf("the held connection: %v", err)
	}
	if err := held.(interface{ PublishStats(context.Context) error }).PublishStats(ctx); err != nil {
		t.Fatal(err)
	}
	// The pool keeps connections again: the next run's threads, returned.
	held.Close()
	if s := db.DB.Stats(); s.Idle != 1 {
		t.Fatalf("a connection returned after ReleaseIdle: %d idle, want 1 (the pool's idle limit not restored)", s.Idle)
	}
	after, err := db.Transactions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := after - before; d != 20 {
		t.Fatalf("%d transactions counted, want 20 (3 closed connections × 5, the held one's 1, and each of the 4 backends' start-up)", d)
	}
}
