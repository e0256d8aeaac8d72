package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/provision"
)

// A managed MySQL/MariaDB server is no one else's: it runs as the mysql
// account where there is one (not as root), its password is set before
// any client can authenticate (an init file the server reads before it
// accepts a connection), its files live in directories no other user can
// enter, and it reads and writes files only in a directory of its own
// (secure_file_priv).
//
// Its directory (dir) is dbduel's: the defaults file and a copy of the
// user's cnf=, which the server reads and cannot change. In it, run/ is
// the server's: its datadir, socket, pid file, error log, temporary
// tables and secure_file_priv directory.

// mysqlAccount is the account a root dbduel runs the server as: Debian's
// mysql user, or nil (then the server runs as dbduel's own user).
func mysqlAccount() *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("mysql")
	if err != nil {
		return nil
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// startMariaDB initialises a datadir, starts the server with its
// password set by an init file, and waits until it answers.
func (s *Server) startMariaDB(ctx context.Context) error {
	bin, err := resolveBinary(s.o.Binary)
	if err != nil {
		return err
	}
	s.binary = bin
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v", bin, err)
	}
	s.flavour = DetectFlavour(string(out))
	account := mysqlAccount()
	s.switchesTo = account
	if os.Geteuid() == 0 && account == nil && s.notices != nil {
		fmt.Fprintf(s.notices, "dbduel: %s: no mysql user here: the server runs as root (its files and port are still dbduel's alone)\n", s.name)
	}
	runDir, err := s.makeMariaDBDirs(account)
	if err != nil {
		return err
	}
	s.ep = targets.Endpoint{Protocol: "mysql", Host: "127.0.0.1", User: "root", Password: provision.NewPassword(), DB: "sbtest"}
	if err := s.initDatadir(ctx, account); err != nil {
		return err
	}
	initFile := filepath.Join(runDir, "init.sql")
	if err := provision.WriteNew(initFile, []byte(s.accountsSQL()), 0o600, credUID(account), credGID(account)); err != nil {
		return err
	}
	defer os.Remove(initFile) // read once, at the first start
	if s.ep.Port, err = provision.FreePort(); err != nil {
		return err
	}
	args := s.mariadbArgs(runDir, account)
	if err := s.spawnPinned(bin, append(args, "--init-file="+initFile)); err != nil {
		return err
	}
	// A restart (live's iterations, --restart-between-runs) starts with
	// the arguments less the init file: the accounts are made.
	s.restartArgs = append([]string(nil), s.cmd.Args[1:len(s.cmd.Args)-1]...)
	return s.waitReady(ctx, 60*time.Second)
}

// makeMariaDBDirs makes the server's directory (dbduel's, with the
// defaults file) and in it run/ (the server account's).
func (s *Server) makeMariaDBDirs(account *syscall.Credential) (runDir string, err error) {
	uid, gid := credUID(account), credGID(account)
	if s.dir, err = ledger.MkdirServer(ledger.ServerDirPrefix(s.runID, s.name), uid); err != nil {
		return "", err
	}
	if err := checkSocketPath(filepath.Join(s.dir, "run", "mysqld.sock")); err != nil {
		return "", err
	}
	include := ""
	if s.o.Cnf != "" {
		include = filepath.Join(s.dir, s.userConfigName())
		if err := s.copyUserConfig(); err != nil {
			return "", err
		}
	}
	if s.defaultsFile, err = provision.WriteConfig("mysql", s.dir, include); err != nil {
		return "", err
	}
	runDir = filepath.Join(s.dir, "run")
	for _, d := range []string{runDir, filepath.Join(runDir, "tmp"), filepath.Join(runDir, "files")} {
		if err := provision.Mkdir(d, 0o700, uid, gid); err != nil {
			return "", err
		}
	}
	s.datadir = filepath.Join(runDir, "data")
	s.logPath = filepath.Join(runDir, "server.log")
	return runDir, nil
}

// initDatadir runs the flavour's initialisation (one retry: a bootstrap
// can fail transiently on a loaded host). Its temporary tables go in the
// server's own tmp/ (TMPDIR, which mysqld takes as its tmpdir), not the
// shared /tmp: a CI bootstrap there lost one to another process's
// clean-up ("Could not remove temporary table '/tmp/#sql-temptable-…'").
func (s *Server) initDatadir(ctx context.Context, account *syscall.Credential) error {
	init := InitCommand(s.flavour, s.binary, s.defaultsFile, s.datadir, runAsUser(account))
	tmpDir := filepath.Join(filepath.Dir(s.datadir), "tmp")
	var initErr error
	for attempt := 0; attempt < 2; attempt++ {
		cmd := exec.CommandContext(ctx, init[0], init[1:]...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmpDir)
		out, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		initErr = fmt.Errorf("initialise datadir: %v: %s", err, errorLines(string(out), 3))
		os.RemoveAll(s.datadir)
		if ctx.Err() != nil {
			break
		}
	}
	return initErr
}

// mariadbArgs are the server's arguments: dbduel's defaults file first,
// everything in run/, the port on 127.0.0.1 alone, files read and
// written by SQL only in run/files.
func (s *Server) mariadbArgs(runDir string, account *syscall.Credential) []string {
	args := []string{"--defaults-file=" + s.defaultsFile, "--datadir=" + s.datadir,
		"--tmpdir=" + filepath.Join(runDir, "tmp"), "--secure-file-priv=" + filepath.Join(runDir, "files"),
		"--port=" + strconv.Itoa(s.ep.Port), "--bind-address=127.0.0.1", "--socket=" + filepath.Join(runDir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(runDir, "mysqld.pid"), "--log-error=" + s.logPath}
	if u := runAsUser(account); u != "" {
		args = append(args, "--user="+u)
	}
	return append(args, s.o.Args...)
}

// runAsUser is the --user= the server takes: mysql, root, or none.
func runAsUser(account *syscall.Credential) string {
	switch {
	case account != nil:
		return "mysql"
	case os.Geteuid() == 0:
		return "root"
	}
	return ""
}

// accountsSQL makes the accounts before the server accepts a connection:
// no anonymous user (they shadow a named one over 127.0.0.1), root with
// the generated password from anywhere it may connect, and the database.
func (s *Server) accountsSQL() string {
	pw := strings.ReplaceAll(strings.ReplaceAll(s.ep.Password, `\`, `\\`), "'", "''")
	anon := "DELETE FROM mysql.user WHERE User='';"
	if s.flavour == MariaDB {
		anon = "DELETE FROM mysql.global_priv WHERE User='';"
	}
	return strings.Join([]string{anon, "FLUSH PRIVILEGES;",
		"ALTER USER 'root'@'localhost' IDENTIFIED BY '" + pw + "';",
		"CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '" + pw + "';",
		"GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;",
		"DROP USER IF EXISTS 'root'@'127.0.0.1';", "DROP USER IF EXISTS 'root'@'::1';",
		"CREATE DATABASE IF NOT EXISTS sbtest;", ""}, "\n")
}

func credUID(c *syscall.Credential) int {
	if c == nil {
		return -1
	}
	return int(c.Uid)
}

func credGID(c *syscall.Credential) int {
	if c == nil {
		return -1
	}
	return int(c.Gid)
}
