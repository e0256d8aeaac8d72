package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PostgreSQL's commit and rollback counters (pg_stat_database) are exact
// only once every connection that ran transactions has published its
// counts: a busy connection publishes at most once a second, an idle one
// within 10 s, a closing one as its process exits. dbduel makes its
// reading exact on PostgreSQL 15 and later: the workload's threads publish
// before the first reading and after their last event
// (pg_stat_force_next_flush), each of dbduel's own reads on the database
// publishes itself at once, and those own transactions are counted and
// left out. The reading itself is taken from another database, so it
// adds nothing to the count it reads.

// publishSQL makes the calling connection publish its pending counts when
// the statement ends (before the server says it is ready for the next).
// PostgreSQL publishes a connection's commit count only along with other
// pending statistics (a table's), and skips a flush with none: the scan of
// a catalog table makes sure there are some, so that the count of a
// connection that did nothing else, this statement's own commit included,
// is published too.
const publishSQL = "SELECT pg_stat_force_next_flush() FROM pg_namespace LIMIT 1"

// ownTxns are the transactions of dbduel's own (readings and
// publications) that this pool's connections have published.
type ownTxns struct {
	n atomic.Uint64
	// tooOld says the server has no pg_stat_force_next_flush (before 15).
	tooOld atomic.Bool
}

// publish runs publishSQL on c and counts own transactions of dbduel's
// (those the publication made visible, itself included) as left out;
// published is false on a server without it (the error is then nil).
func (o *ownTxns) publish(ctx context.Context, c *sql.Conn, own uint64) (published bool, err error) {
	if o.tooOld.Load() {
		return false, nil
	}
	if _, err := c.ExecContext(ctx, publishSQL); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42883" { // undefined_function
			o.tooOld.Store(true)
			return false, nil
		}
		return false, fmt.Errorf("publish the connection's counts: %w", err)
	}
	o.n.Add(own)
	return true, nil
}

// OwnRead runs query (one statement, over the simple protocol so that it
// is one transaction) on a connection of the pool, scans its row into
// dest, and publishes the connection's counts: the read and the
// publication are two transactions of dbduel's own.
func (d *DB) OwnRead(ctx context.Context, query string, dest ...any) error {
	_, err := d.ownRead(ctx, query, dest...)
	return err
}

// ownRead is OwnRead, saying whether the read was published (a server
// before 15 cannot).
func (d *DB) ownRead(ctx context.Context, query string, dest ...any) (published bool, err error) {
	c, err := d.DB.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	readErr := c.QueryRowContext(ctx, query, pgx.QueryExecModeSimpleProtocol).Scan(dest...)
	// A failed read is a rolled-back transaction: published the same way.
	published, err = d.own.publish(ctx, c, 2)
	if readErr != nil {
		return published, readErr
	}
	return published, err
}

// PublishStats publishes the thread's pending counts: its one statement
// is a transaction of dbduel's own.
func (c *conn) PublishStats(ctx context.Context) error {
	_, err := c.own.publish(ctx, c.SQL(), 1)
	return err
}

// Transactions reads xact_commit + xact_rollback of the pool's database,
// less dbduel's own transactions, from the maintenance database (a
// reading there is not counted here). Every idle connection of the pool
// publishes first: a loader's or a check's counts would otherwise land
// within the next ten seconds, mid-run.
func (d *DB) Transactions(ctx context.Context) (uint64, error) {
	if err := d.publishIdle(ctx); err != nil {
		return 0, err
	}
	if d.own.tooOld.Load() {
		return 0, fmt.Errorf("PostgreSQL before 15 publishes its transaction counts up to 10 s late and has no pg_stat_force_next_flush to publish them at once")
	}
	side := maintenance(d.ep)
	if side.DB == d.ep.DB {
		side.DB = "template1"
	}
	db, err := SQLOpen(side)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	own := d.own.n.Load()
	if err := db.QueryRowContext(ctx, "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1", d.ep.DB).Scan(&n); err != nil {
		return 0, fmt.Errorf("read pg_stat_database from database %s: %w", side.DB, err)
	}
	if uint64(n) < own {
		return 0, fmt.Errorf("pg_stat_database counts %d transactions in %s, fewer than dbduel's own %d (the statistics were reset?)", n, d.ep.DB, own)
	}
	return uint64(n) - own, nil
}

// publishIdle publishes the counts of every idle connection of the pool
// (taking them all at once, so that each is a different one).
func (d *DB) publishIdle(ctx context.Context) error {
	var held []*sql.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range d.DB.Stats().Idle {
		c, err := d.DB.Conn(ctx)
		if err != nil {
			return err
		}
		held = append(held, c)
		if published, err := d.own.publish(ctx, c, 1); err != nil || !published {
			return err
		}
	}
	return nil
}
