package local

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/provision"
)

// MongoDB is the flavour of local:mongod.
const MongoDB Flavour = "mongodb"

func isMongod(bin string) bool { return filepath.Base(bin) == "mongod" }

// errNoMongod says why local:mongod cannot run here, and what can.
var errNoMongod = errors.New("local:mongod: no mongod binary on PATH or in /usr/bin: Debian has no MongoDB package; install MongoDB's own, or use a running server (mongodb://HOST:PORT) or a container (docker:mongo:7)")

// startMongod runs a private mongod: its own dbpath in the state
// directory, a free 127.0.0.1 port, no users (it listens on loopback only,
// as a fresh mongod does).
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
	if err := os.MkdirAll(ledger.Dir(), 0o700); err != nil {
		return err
	}
	var err error
	if s.dir, err = os.MkdirTemp(ledger.Dir(), "dbduel-local-"+s.runID+"-"+s.name+"-"); err != nil {
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
	args := []string{"--dbpath", s.datadir, "--port", strconv.Itoa(port), "--bind_ip", "127.0.0.1", "--logpath", s.logPath}
	if s.o.Cnf != "" {
		args = append(args, "--config", s.o.Cnf)
	}
	args = append(args, s.o.Args...)
	if err := s.spawnPinned(s.binary, args); err != nil {
		return err
	}
	s.ep = targets.Endpoint{Protocol: "mongodb", Host: "127.0.0.1", Port: port, DB: "sbtest"}
	return s.waitReady(ctx, 60*time.Second)
}
