// Package system is the driver of the system micro-benchmarks (cpu,
// memory, fileio): the machine itself, no server, no connections. They run
// in the process that holds this DB, and fileio keeps its files in Dir.
// Its protocol is named "host", as the target is.
package system

import (
	"context"
	"fmt"

	"github.com/dbduel/dbduel/engine/driver"
)

// Protocol is what host targets (and dbduel's agent inside a container) speak.
const Protocol = "host"

// DB is a place to run: a directory for fileio's files.
type DB struct{ dir string }

// New returns the machine as a DB; dir holds fileio's files.
func New(dir string) *DB { return &DB{dir: dir} }

// Opener opens the machine (maxConns does not apply: there is no server).
func Opener(dir string) driver.Opener {
	return func(context.Context, int) (driver.DB, error) { return New(dir), nil }
}

// Dir is where fileio's files live.
func (d *DB) Dir() string { return d.dir }

// Conn is one thread's handle; it only knows the directory.
func (d *DB) Conn(context.Context) (driver.Conn, error) { return Conn{dir: d.dir}, nil }

// Classify makes every error fatal: a failed system call is not retried
// (sysbench stops the test too).
func (d *DB) Classify(err error) driver.Failure {
	return driver.Failure{Action: driver.Fatal, Err: err}
}

// OpCount has no server to ask: the micro-benchmarks count their own work.
func (d *DB) OpCount(context.Context) (driver.OpCount, error) {
	return driver.OpCount{}, fmt.Errorf("%w: the system micro-benchmarks run without a server and count their own operations", driver.ErrNoOpCount)
}

// Unblock has nothing to shut: events are system calls that return.
func (d *DB) Unblock() {}

// Close releases nothing.
func (d *DB) Close() error { return nil }

// Conn carries the directory to a worker.
type Conn struct{ dir string }

// Dir is where fileio's files live.
func (c Conn) Dir() string { return c.dir }

// Discard does nothing: there is no connection to break.
func (c Conn) Discard() {}

// Close does nothing.
func (c Conn) Close() error { return nil }

// Placed is a DB or Conn that says where files go.
type Placed interface{ Dir() string }
