// Package local is a server process dbduel manages: a temp datadir
// initialised by the server's own tools, a free 127.0.0.1 port, a generated
// password, dbduel's defaults file first, and everything removed on Stop.
package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/hostinfo"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/provision"
	"github.com/dbduel/dbduel/targets/specs"
)

// Flavour is the server family, detected from `BIN --version`.
type Flavour string

const (
	MariaDB Flavour = "mariadb"
	MySQL   Flavour = "mysql"
)

// DetectFlavour reads the output of `BIN --version`.
func DetectFlavour(versionOutput string) Flavour {
	if strings.Contains(strings.ToLower(versionOutput), "mariadb") {
		return MariaDB
	}
	return MySQL
}

// InitCommand is how a flavour initialises an empty datadir, as user
// ("": dbduel's own).
func InitCommand(f Flavour, binary, defaultsFile, datadir, user string) []string {
	if f == MySQL {
		cmd := []string{binary, "--defaults-file=" + defaultsFile, "--initialize-insecure", "--datadir=" + datadir}
		if user != "" {
			cmd = append(cmd, "--user="+user)
		}
		return cmd
	}
	installDB := filepath.Join(filepath.Dir(binary), "..", "bin", "mariadb-install-db")
	if _, err := os.Stat(installDB); err != nil {
		installDB = "mariadb-install-db"
	}
	cmd := []string{installDB, "--defaults-file=" + defaultsFile, "--datadir=" + datadir,
		"--auth-root-authentication-method=normal", "--skip-test-db"}
	if user != "" {
		cmd = append(cmd, "--user="+user)
	}
	return cmd
}

// Options are the keys of a local: SPEC.
type Options struct {
	Binary string   // mariadbd, mysqld or an absolute path
	Args   []string // args=, one server flag each
	Cnf    string   // cnf=, !included by the generated defaults file
	Cpuset string   // cpuset=, via taskset
}

// ParseSpec parses "BIN[,args=..][,cnf=..][,cpuset=..]" (after "local:").
func ParseSpec(spec string) (Options, error) {
	head, kvs, err := specs.SplitSpec(spec)
	if err != nil {
		return Options{}, err
	}
	if head == "" {
		return Options{}, &specs.UsageError{Msg: "local: SPEC needs a binary: local:mariadbd, local:mysqld or local:/abs/path"}
	}
	if head != "mariadbd" && head != "mysqld" && head != "postgres" && head != "mongod" && !filepath.IsAbs(head) {
		return Options{}, &specs.UsageError{Msg: fmt.Sprintf("local: binary %q: want mariadbd, mysqld, postgres, mongod or an absolute path", head)}
	}
	if err := specs.CheckKeys("local:", kvs, map[string]bool{"args": true, "cnf": true, "cpuset": true}, map[string]bool{"args": true}); err != nil {
		return Options{}, err
	}
	o := Options{Binary: head}
	for _, kv := range kvs {
		switch kv.Key {
		case "args":
			if !strings.HasPrefix(kv.Value, "-") {
				return o, &specs.UsageError{Msg: fmt.Sprintf("local: args=%q: want one server flag such as --innodb-buffer-pool-size=1G", kv.Value)}
			}
			o.Args = append(o.Args, kv.Value)
		case "cnf":
			if o.Cnf, err = specs.CheckCnf(kv.Value); err != nil {
				return o, &specs.UsageError{Msg: "local: " + err.Error()}
			}
		case "cpuset":
			if err := specs.CheckCpuset(kv.Value); err != nil {
				return o, &specs.UsageError{Msg: "local: " + err.Error()}
			}
			o.Cpuset = kv.Value
		}
	}
	return o, nil
}

// Server is one managed server process.
type Server struct {
	name, spec, runID string
	o                 Options
	binary            string
	flavour           Flavour
	dir               string
	datadir           string
	defaultsFile      string
	ep                targets.Endpoint
	mu                sync.Mutex
	cmd               *exec.Cmd
	exited            chan struct{}
	output            *provision.TailBuffer // the process's own stdout and stderr
	cred              *syscall.Credential   // the account the server is started as (nil: dbduel's own)
	switchesTo        *syscall.Credential   // the account a server started as root switches to itself (--user=mysql)
	notices           io.Writer             // where to say what dbduel decided for the user
	logPath           string
	cgroup            *serverCgroup // the server's own cgroup (nil: its processes are summed)
	restartArgs       []string      // a restart's arguments, when not the first start's
	keep              bool          // --keep: the server outlives dbduel
}

// SetKeep makes the server outlive dbduel (--keep): no death signal when
// dbduel exits, no pipe to it.
func (s *Server) SetKeep(keep bool) { s.keep = keep }

// New returns an unstarted managed server for SPEC (without "local:").
func New(name, spec, runID string) (*Server, error) {
	o, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return &Server{name: name, spec: "local:" + spec, runID: runID, o: o}, nil
}

func (s *Server) Name() string               { return s.name }
func (s *Server) Kind() string               { return "local" }
func (s *Server) SpecRedacted() string       { return driver.Redact(s.spec) }
func (s *Server) Endpoint() targets.Endpoint { return s.ep }

// resolveBinary finds mariadbd/mysqld on PATH or in /usr/sbin.
func resolveBinary(b string) (string, error) {
	if filepath.IsAbs(b) {
		if _, err := os.Stat(b); err != nil {
			return "", fmt.Errorf("server binary %s: %w", b, err)
		}
		return b, nil
	}
	if p, err := exec.LookPath(b); err == nil {
		return filepath.Abs(p)
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/local/mysql/bin"} {
		p := filepath.Join(dir, b)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("server binary %q not found: install it (apt-get install mariadb-server) or give an absolute path", b)
}

// Start initialises the datadir and starts the server, waiting until it
// accepts connections, then puts it in a cgroup of its own.
func (s *Server) Start(ctx context.Context) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	s.ownCgroup()
	return nil
}

// ownCgroup gives the running server a cgroup of its own, so that its CPU
// is read with a container's scope; where none can be made its processes
// are summed (Describe says which).
func (s *Server) ownCgroup() {
	if s.cgroup == nil {
		s.cgroup = newServerCgroup(s.runID, s.name)
	}
	if s.cgroup != nil && !s.cgroup.adopt(s.pid()) {
		s.cgroup.remove()
		s.cgroup = nil
	}
}

func (s *Server) start(ctx context.Context) error {
	if isPostgres(s.o.Binary) {
		return s.startPostgres(ctx, s.notices)
	}
	if isMongod(s.o.Binary) {
		return s.startMongod(ctx)
	}
	return s.startMariaDB(ctx)
}

// waitReady connects until the server answers: as root without a password
// (freshly initialised) or with the generated one (after a restart).
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if s.flavour == MongoDB && driver.Ping(ctx, s.ep, 2*time.Second) == nil {
			return nil
		}
		if s.flavour == PostgreSQL {
			ep := s.ep
			ep.DB = "postgres"
			if driver.Ping(ctx, ep, 2*time.Second) == nil {
				return nil
			}
		}
		if s.flavour == MariaDB || s.flavour == MySQL {
			ep := s.ep
			ep.DB = ""
			if driver.Ping(ctx, ep, 2*time.Second) == nil {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server exited during start-up (%s)", s.exitReason())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server did not accept connections within %s: %s", timeout, lastLines(readFile(s.logPath), 3))
		}
	}
}

// Describe reads the server's version and datadir back.
func (s *Server) Describe(ctx context.Context) (result.Target, error) {
	t := result.Target{Name: s.name, Kind: "local", SpecRedacted: s.spec}
	v, datadir, err := driver.ServerInfo(ctx, s.ep)
	if err != nil {
		return t, err
	}
	t.ServerVersion = v
	t.Described.Binary = s.binary
	t.Described.NetworkMode = "host"
	t.Described.NetworkPath = "direct"
	t.Described.Address = net.JoinHostPort(s.ep.Host, strconv.Itoa(s.ep.Port))
	t.Described.Host, t.Described.ClientPlacement = "local", "here"
	t.Described.Datadir = &result.Datadir{Kind: "dir", Path: strings.TrimSuffix(datadir, "/"), FSType: FSType(datadir)}
	if s.o.Cpuset != "" {
		t.Described.Cpuset = readCpuset(s.pid())
	}
	t.Described.SeccompMode = hostinfo.SeccompMode(s.pid())
	t.Described.CPUScope = "process group"
	if s.cgroup != nil {
		t.Described.CPUScope = "cgroup"
	}
	return t, nil
}

func (s *Server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// readCpuset reads the CPUs a process may run on from /proc.
func readCpuset(pid int) string {
	for _, l := range strings.Split(readFile("/proc/"+strconv.Itoa(pid)+"/status"), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Sample reads the server process's CPU time and resident memory from /proc.
func (s *Server) Sample(context.Context) (targets.Sample, error) {
	pid := s.pid()
	if pid == 0 {
		return targets.Sample{}, errors.New("server not running")
	}
	var rss uint64
	for _, l := range strings.Split(readFile("/proc/"+strconv.Itoa(pid)+"/status"), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kib, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kib * 1024
		}
	}
	if s.cgroup != nil {
		if ns, ok := s.cgroup.cpuNS(); ok {
			return targets.Sample{At: time.Now(), CPUNS: ns, MemBytes: rss}, nil
		}
	}
	cpu := hostinfo.ProcCPU(pid)
	if s.flavour == PostgreSQL {
		cpu = groupCPU(pid) // one process per connection: the whole process group's CPU
	}
	return targets.Sample{At: time.Now(), CPUNS: cpu, MemBytes: rss}, nil
}

// Restart stops the process and starts it again on the same datadir and port.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.stopProcess(); err != nil {
		return err
	}
	args := append([]string(nil), s.cmd.Args[1:]...)
	if s.restartArgs != nil {
		args = s.restartArgs
	}
	if err := s.spawn(s.cmd.Path, args); err != nil {
		return err
	}
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		return err
	}
	s.ownCgroup()
	return nil
}

// ConfigFiles is the SPEC's cnf= file (Reconfigurer).
func (s *Server) ConfigFiles() []string {
	if s.o.Cnf == "" {
		return nil
	}
	return []string{s.o.Cnf}
}

// Reconfigure copies the cnf= file anew and restarts the server: its
// generated defaults file includes the copy, which it reads again
// (Reconfigurer).
func (s *Server) Reconfigure(ctx context.Context) error {
	if err := s.copyUserConfig(); err != nil {
		return err
	}
	return s.Restart(ctx)
}

// userConfigName is the server's copy of the cnf= file in its directory.
func (s *Server) userConfigName() string {
	if s.flavour == PostgreSQL {
		return "user.conf"
	}
	return "user.cnf"
}

// copyUserConfig writes the server's copy of the cnf= file (one the
// server's account may read and not change) in its directory, and says
// where ("" without cnf=).
func (s *Server) copyUserConfig() error {
	if s.o.Cnf == "" {
		return nil
	}
	data, err := os.ReadFile(s.o.Cnf)
	if err != nil {
		return err
	}
	path := filepath.Join(s.dir, s.userConfigName())
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return provision.WriteNew(path, data, 0o644, -1, -1)
}

// SetNotices says where to tell the user what dbduel decided (running
// PostgreSQL as another user).
func (s *Server) SetNotices(w io.Writer) {
	s.notices = w
}

// spawnPinned spawns bin with args, under taskset when the SPEC has cpuset=.
func (s *Server) spawnPinned(bin string, args []string) error {
	if s.o.Cpuset == "" {
		return s.spawn(bin, args)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return errors.New("cpuset= needs taskset (apt-get install util-linux)")
	}
	return s.spawn(taskset, append([]string{"-c", s.o.Cpuset, bin}, args...))
}

// spawn starts the server process (name is the binary or taskset), watches
// for its exit and leaves a pidfile for `dbduel clean`.
func (s *Server) spawn(name string, argv []string) error {
	cmd := exec.Command(name, argv...)
	// Own process group: a ^C at the terminal reaches dbduel, which stops
	// the server in order. It dies with dbduel unless kept (--keep).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM, Credential: s.cred}
	// What the process prints itself (taskset's refusal, a crash before
	// the error log opens) is part of why it exited.
	out := &provision.TailBuffer{Max: 4096}
	cmd.Stdout, cmd.Stderr = out, out
	if s.keep {
		cmd.SysProcAttr.Pdeathsig = 0
		// No pipe to dbduel, which will be gone: the output goes to a file.
		f, err := os.OpenFile(filepath.Join(s.dir, "process.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.binary, err)
	}
	exited := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.exited, s.output = cmd, exited, out
	s.mu.Unlock()
	go func() { cmd.Wait(); close(exited) }()
	uid := os.Geteuid()
	if a := s.account(); a != nil {
		uid = int(a.Uid)
	}
	_ = ledger.Record(ledger.Process{RunID: s.runID, Target: s.name, PID: cmd.Process.Pid, Binary: s.binary, UID: uid, Dir: s.dir, Started: time.Now()})
	return nil
}

func (s *Server) stopProcess() error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	// PostgreSQL's SIGTERM waits for its clients to leave; SIGINT is its fast shutdown.
	sig := syscall.SIGTERM
	if s.flavour == PostgreSQL {
		sig = syscall.SIGINT
	}
	_ = cmd.Process.Signal(sig)
	// A stopped server (SIGSTOP) acts on no signal but SIGKILL until resumed.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	return nil
}

// Stop ends the server and removes its datadir.
func (s *Server) Stop(context.Context) error {
	err := s.stopProcess()
	if s.cgroup != nil {
		s.cgroup.remove()
	}
	if s.dir != "" {
		ledger.RemoveOwn(s.dir)
	}
	ledger.Forget(s.runID, s.name)
	return err
}

// account is the account the server runs as once started (nil: dbduel's own).
func (s *Server) account() *syscall.Credential {
	if s.switchesTo != nil {
		return s.switchesTo
	}
	return s.cred
}

// PID is the server's process id (0 when not running), for tests and telemetry.
func (s *Server) PID() int { return s.pid() }

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// errorLines picks the lines that say what went wrong (ERROR/failed), else the last ones.
func errorLines(s string, n int) string {
	var picked []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "ERROR") || strings.Contains(l, "rror:") || strings.Contains(strings.ToLower(l), "failed") {
			picked = append(picked, strings.TrimSpace(l))
		}
	}
	if len(picked) == 0 {
		return lastLines(s, n)
	}
	if len(picked) > n {
		picked = picked[:n]
	}
	return strings.Join(picked, " | ")
}

// exitReason says how the exited server process ended and why, as far as
// its status, its own output and its error log tell.
func (s *Server) exitReason() string {
	s.mu.Lock()
	cmd, out := s.cmd, s.output
	s.mu.Unlock()
	reason := "it exited"
	if cmd != nil && cmd.ProcessState != nil {
		reason = cmd.ProcessState.String() // "exit status 1", "signal: killed"
		// Killed by a signal: the output and log are from before, they do
		// not say why; the signal does.
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + unix.SignalName(ws.Signal())
		}
	}
	if o := strings.TrimSpace(out.String()); o != "" {
		reason += ": " + driver.OneLine(o)
	}
	if errs := errorLines(readFile(s.logPath), 5); errs != "" {
		reason += "; error log: " + errs
	}
	return reason
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// FSType is the filesystem type of the mount holding path on this host.
func FSType(path string) string { return hostinfo.FSTypeAt(readFile("/proc/self/mountinfo"), path) }

// Diagnose says what became of the server process when a run failed: how it
// exited (status or signal, and why), or "" while it is running.
func (s *Server) Diagnose(context.Context) string {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited == nil {
		return ""
	}
	// The connection may drop a moment before the process is reaped.
	select {
	case <-exited:
		return "the server process ended (" + s.exitReason() + ")"
	case <-time.After(2 * time.Second):
	}
	if pid := s.pid(); processStopped(pid) {
		return fmt.Sprintf("the server process is stopped (SIGSTOP: kill -CONT %d resumes it)", pid)
	}
	return ""
}

// processStopped says whether pid is stopped by a signal (state T in
// /proc/PID/stat; t is a tracer's stop, left alone).
func processStopped(pid int) bool {
	f := hostinfo.StatFields(readFile("/proc/" + strconv.Itoa(pid) + "/stat"))
	return pid > 0 && len(f) > 0 && f[0] == "T"
}

// groupCPU is the CPU time of a process and its children (PostgreSQL's
// postmaster forks a backend per connection; the backends call setsid, so
// they are found by parent, not by process group). Exited children's time
// is in the parent's children times, counted too.
func groupCPU(pgid int) uint64 {
	var total uint64
	for _, p := range familyOf(pgid) {
		total += hostinfo.ProcCPU(p.pid)
		if p.pid == pgid { // cutime + cstime: backends that already exited
			cu, _ := strconv.ParseUint(p.fields[13], 10, 64)
			cs, _ := strconv.ParseUint(p.fields[14], 10, 64)
			total += (cu + cs) * uint64(time.Second/100)
		}
	}
	return total
}

// proc is one process: its pid and its /proc/PID/stat fields after the
// command name (state first).
type proc struct {
	pid    int
	fields []string
}

// familyOf is a process and its children (found by parent: PostgreSQL's
// backends call setsid, so their process group is their own).
func familyOf(parent int) []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := hostinfo.StatFields(readFile("/proc/" + e.Name() + "/stat"))
		if len(f) < 15 || (pid != parent && f[1] != strconv.Itoa(parent)) {
			continue
		}
		out = append(out, proc{pid: pid, fields: f})
	}
	return out
}

// checkSocketPath refuses a unix socket's path longer than the kernel
// takes (108 bytes with its NUL), naming the cause: a long state
// directory.
func checkSocketPath(p string) error {
	if len(p) > 107 {
		return fmt.Errorf("the server's socket %s is longer than a unix socket's 107 bytes: give DBDUEL_STATE_DIR a shorter path", p)
	}
	return nil
}
