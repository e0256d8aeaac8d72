package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/provision"
)

// MongoDB is the flavour of local:mongod.
const MongoDB Flavour = "mongodb"

func isMongod(bin string) bool { return filepath.Base(bin) == "mongod" }

// errNoMongod says why local:mongod cannot run here, and what can.
var errNoMongod = errors.New("local:mongod: no mongod binary on PATH or in /usr/bin: Debian has no MongoDB package; install MongoDB's own, or use a running server (mongodb://HOST:PORT) or a container (docker:mongo:7)")

// startMongod runs a private mongod with authentication on: its own
// dbpath in a directory of dbduel's, and a user made before it listens on
// any port. The first start listens only on a socket in that directory
// (0700: no one else may connect), where the localhost exception lets
// dbduel make the user; it is then started again with --auth on a free
// 127.0.0.1 port.
func (s *Server) startMongod(ctx context.Context) error {
	bin := s.o.Binary
	if !filepath.IsAbs(bin) {
		p, err := exec.LookPath(bin)
		if err != nil {
			return errNoMongod
		}
		bin = p
	} else if _, err := os.Stat(bin); err != nil {
		return errNoMongod
	}
	s.binary, s.flavour = bin, MongoDB
	var err error
	if s.dir, err = ledger.MkdirTemp(ledger.ServerDirPrefix(s.runID, s.name)); err != nil {
		return err
	}
	s.datadir = filepath.Join(s.dir, "db")
	if err := os.Mkdir(s.datadir, 0o700); err != nil {
		return err
	}
	s.logPath = filepath.Join(s.dir, "mongod.log")
	port, err := provision.FreePort()
	if err != nil {
		return err
	}
	s.ep = targets.Endpoint{Protocol: "mongodb", Host: "127.0.0.1", Port: port, User: "dbduel", Password: provision.NewPassword(), DB: "sbtest",
		Params: "authSource=admin"}
	if err := s.mongodFirstStart(ctx); err != nil {
		return err
	}
	if err := s.spawnPinned(s.binary, s.mongodArgs("--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1", "--unixSocketPrefix", s.dir)); err != nil {
		return err
	}
	return s.waitReady(ctx, 60*time.Second)
}

// mongodArgs are the server's arguments with authentication on and where
// it listens.
func (s *Server) mongodArgs(listen ...string) []string {
	args := append([]string{"--dbpath", s.datadir, "--auth", "--logpath", s.logPath, "--logappend"}, listen...)
	if s.o.Cnf != "" {
		args = append(args, "--config", s.o.Cnf)
	}
	return append(args, s.o.Args...)
}

// mongodSocket is the first start's only listener.
func (s *Server) mongodSocket() string { return filepath.Join(s.dir, "mongod.sock") }

// mongodFirstStart starts mongod on its socket alone, makes dbduel's user
// there and stops it.
func (s *Server) mongodFirstStart(ctx context.Context) error {
	// Its sockets: mongod.sock, and mongodb-PORT.sock in the directory.
	if err := checkSocketPath(filepath.Join(s.dir, "mongodb-65535.sock")); err != nil {
		return err
	}
	if err := s.spawn(s.binary, s.mongodArgs("--bind_ip", s.mongodSocket(), "--unixSocketPrefix", s.dir)); err != nil {
		return err
	}
	if err := createMongoUser(ctx, s.mongodSocket(), s.ep.User, s.ep.Password, s.exited); err != nil {
		s.stopProcess()
		return fmt.Errorf("make mongod's user: %w (the server said: %s)", err, s.exitReason())
	}
	return s.stopProcess()
}

// createMongoUser makes the user through the socket once the server
// answers there (or says why not: the server exited, the time ran out).
func createMongoUser(ctx context.Context, socket, user, password string, exited <-chan struct{}) error {
	p, err := driver.Lookup("mongodb")
	if err != nil || p.MakeAdmin == nil {
		return errors.New("the MongoDB protocol cannot make a user here")
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(socket); err == nil {
			return p.MakeAdmin(ctx, socket, user, password)
		}
		select {
		case <-exited:
			return errors.New("mongod exited during its first start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("mongod did not open its socket within 60 s")
		}
	}
}
