package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/provision"
)

// PostgreSQL is the flavour of local:postgres.
const PostgreSQL Flavour = "postgres"

// isPostgres says a local: binary is PostgreSQL's server.
func isPostgres(bin string) bool { return filepath.Base(bin) == "postgres" }

// postgresBinDir finds PostgreSQL's programs: Debian keeps them in
// /usr/lib/postgresql/<major>/bin (the newest major wins), or on PATH.
func postgresBinDir(bin string) (string, error) {
	if filepath.IsAbs(bin) {
		return filepath.Dir(bin), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	if len(dirs) > 0 {
		return filepath.Dir(dirs[0]), nil
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL's server was not found in /usr/lib/postgresql/*/bin or on PATH: install it (apt-get install postgresql)")
}

func majorOf(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

// runAs is the account PostgreSQL runs under: initdb and postgres refuse to
// run as root, so root runs them as Debian's "postgres" user.
func runAs() (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		return nil, "", nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, "", errors.New("PostgreSQL refuses to run as root, and there is no \"postgres\" user to run it as (apt-get install postgresql creates it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, u.Username, nil
}

// startPostgres makes a private cluster: initdb with a generated password
// in the state directory, dbduel's settings, a free 127.0.0.1 port, and the
// sbtest database with pg_stat_statements.
func (s *Server) startPostgres(ctx context.Context, notices io.Writer) error {
	bindir, err := postgresBinDir(s.o.Binary)
	if err != nil {
		return err
	}
	s.binary = filepath.Join(bindir, "postgres")
	s.flavour = PostgreSQL
	cred, account, err := runAs()
	if err != nil {
		return err
	}
	s.cred = cred
	if account != "" && notices != nil {
		fmt.Fprintf(notices, "dbduel: %s: PostgreSQL refuses to run as root: running initdb and postgres as the %q user\n", s.name, account)
	}
	// dbduel's directory (the configuration, which the server reads and
	// cannot change); in it run/ (the socket, the password file initdb
	// reads once) and data/, the account's.
	uid, gid := credUID(cred), credGID(cred)
	if s.dir, err = ledger.MkdirServer(ledger.ServerDirPrefix(s.runID, s.name), uid); err != nil {
		return err
	}
	runDir, password := filepath.Join(s.dir, "run"), provision.NewPassword()
	s.datadir, s.logPath = filepath.Join(s.dir, "data"), filepath.Join(runDir, "server.log")
	for _, d := range []string{runDir, s.datadir} {
		if err := provision.Mkdir(d, 0o700, uid, gid); err != nil {
			return err
		}
	}
	pwfile := filepath.Join(runDir, "pwfile")
	if err := provision.WriteNew(pwfile, []byte(password+"\n"), 0o600, uid, gid); err != nil {
		return err
	}
	include := ""
	if s.o.Cnf != "" {
		include = filepath.Join(s.dir, s.userConfigName())
		if err := s.copyUserConfig(); err != nil {
			return err
		}
	}
	conf, err := provision.WriteConfig("postgres", s.dir, include)
	if err != nil {
		return err
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bindir, "initdb"), "-D", s.datadir, "-U", "postgres",
		"--auth=scram-sha-256", "--pwfile="+pwfile, "--encoding=UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v: %s", err, errorLines(string(out), 3))
	}
	os.Remove(pwfile)
	port, err := provision.FreePort()
	if err != nil {
		return err
	}
	// dbduel's file is the whole configuration, as in a container: what
	// initdb wrote into postgresql.conf (locale, time zone) is not used
	// by either, so the two start from the same settings.
	// No unix socket: dbduel connects over TCP, and a socket's path in
	// the servers' directory could pass the 107 bytes one may have.
	args := append([]string{"-D", s.datadir, "-c", "config_file=" + conf, "-p", strconv.Itoa(port), "-k", "",
		"-c", "listen_addresses=127.0.0.1"}, s.o.Args...)
	if err := s.spawnPinned(s.binary, args); err != nil {
		return err
	}
	s.ep = targets.Endpoint{Protocol: "postgres", Host: "127.0.0.1", Port: port, User: "postgres", Password: password, DB: "sbtest"}
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		return err
	}
	return s.setUpPostgres(ctx)
}

// setUpPostgres creates the sbtest database and pg_stat_statements in it.
func (s *Server) setUpPostgres(ctx context.Context) error {
	if _, err := driver.EnsureDatabase(ctx, s.ep); err != nil {
		return err
	}
	return driver.Ready(ctx, s.ep)
}
