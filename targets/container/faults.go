package container

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"golang.org/x/sys/unix"
)

// What dbduel can say of a container when a run on it fails, in the order
// Diagnose looks: the engine itself, the container's state (exited,
// OOM-killed, paused, restarting), a restart behind dbduel's back, a
// network taken away, a full datadir.

// engineUnreachable is the one line naming an engine that stopped
// answering (a dead daemon, a closed DOCKER_HOST proxy).
func (s *Server) engineUnreachable(err error) string {
	return fmt.Sprintf("engine unreachable: the Docker engine at %s does not answer (%s)", s.eng.addr, driver.OneLine(err.Error()))
}

// enginePatience is how long an engine may answer no inspect in time
// before a run ends for it: a daemon on a loaded machine (containers being
// created beside it) can take longer than one read's timeout. An engine
// that refuses or drops the connection is gone, and ends the run at once.
var enginePatience = 20 * time.Second

// Health says whether the engine still holds the container: an engine that
// stops answering ends the run (dbduel could neither watch nor remove what
// it started), and so does a container removed by someone else, and a
// datadir with no room left. What else happens to the container is the
// client's to notice and Diagnose's to name.
func (s *Server) Health(ctx context.Context) error {
	if s.cli == nil || s.id == "" {
		return nil
	}
	insp, err := s.cli.ContainerInspect(ctx, s.id)
	if err == nil {
		s.engineSlowSince = time.Time{}
	}
	switch {
	case err == nil && failedExit(insp.State):
		// Killed or crashed: its clients may wait a while to notice (a
		// driver that reconnects would try for seconds).
		return errors.New(describeState(insp.State))
	case err == nil && !s.remote() && insp.State != nil && insp.State.Running:
		// A full datadir ends the run: a server may go on answering, slowly
		// (a MongoDB-compatible one retried its writes for seconds each),
		// and what it measures then is the full disk.
		if full := diskFull(insp.State.Pid, s.dataPath); full != "" {
			return errors.New(full)
		}
		return nil
	case err == nil:
		return nil
	case client.IsErrNotFound(err):
		return errors.New("the container was removed (by someone else: dbduel removes it only after the run)")
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		// Slow, not gone: asked again until the streak outlasts the patience.
		if s.engineSlowSince.IsZero() {
			s.engineSlowSince = time.Now()
		}
		if slow := time.Since(s.engineSlowSince); slow < enginePatience {
			return nil
		}
		return fmt.Errorf("%s for %s: dbduel can no longer watch or remove the container", s.engineUnreachable(err), enginePatience)
	}
	return fmt.Errorf("%s: dbduel can no longer watch or remove the container", s.engineUnreachable(err))
}

// Diagnose says what became of the container when a run failed: the
// engine unreachable, the container exited (with its code and whether it
// was OOM-killed), paused, restarted, its network disconnected, its
// datadir full; or "" when it looks fine.
func (s *Server) Diagnose(ctx context.Context) string {
	if s.cli == nil || s.id == "" {
		return ""
	}
	// The client may see the connection drop before the engine records the
	// container's exit: a running state is read again for a moment. A clean
	// exit may be the first half of a docker restart: it is read again a
	// little longer, to name the restart rather than the stop.
	start := time.Now()
	for {
		insp, err := s.cli.ContainerInspect(ctx, s.id)
		switch {
		case client.IsErrNotFound(err):
			return "the container is gone (removed by someone else)"
		case err != nil:
			return s.engineUnreachable(err)
		}
		d := describeState(insp.State)
		cleanExit := d != "" && !insp.State.Running && !failedExit(insp.State)
		if d == "" {
			d = s.describeRunning(insp)
		}
		waited := time.Since(start)
		switch {
		case d != "" && !cleanExit:
			return d
		case cleanExit && waited > 8*time.Second:
			return d
		case d == "" && waited > 3*time.Second:
			return ""
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// failedExit is a container that stopped for good: a kill, a crash, the
// OOM killer. A clean exit may be the first half of a docker restart, and
// so may an exit by SIGTERM (128+15: a server that dies of the stop's
// signal rather than shutting down on it).
func failedExit(st *container.State) bool {
	return st != nil && !st.Running && !st.Paused && !st.Restarting &&
		(st.ExitCode != 0 && st.ExitCode != 143 || st.OOMKilled || st.Dead)
}

func describeState(st *container.State) string {
	switch {
	case st == nil:
		return ""
	case st.OOMKilled:
		return fmt.Sprintf("the container was OOM-killed (exit code %d): its memory limit is too small for the server", st.ExitCode)
	case st.Paused:
		return "the container is paused (docker unpause it, or stop whoever paused it)"
	case st.Restarting:
		return "the container is restarting"
	case !st.Running:
		msg := fmt.Sprintf("the container exited with code %d", st.ExitCode)
		if st.ExitCode == 137 {
			msg += " (killed by SIGKILL)"
		}
		if st.Error != "" {
			msg += ": " + st.Error
		}
		return msg
	}
	return ""
}

// describeRunning names what can be wrong with a running container: it was
// restarted since dbduel started it, it lost its network, its datadir is
// full.
func (s *Server) describeRunning(insp container.InspectResponse) string {
	if s.startedAt != "" && insp.State.StartedAt != s.startedAt {
		at := insp.State.StartedAt
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
			at = t.Local().Format("15:04:05")
		}
		return "the container was restarted at " + at + " (docker restart, or a restart policy): its server dropped every connection"
	}
	if networkDisconnected(insp) {
		return "network disconnected: the container has no network left (docker network disconnect); its published port leads nowhere"
	}
	if s.remote() {
		return "" // its filesystem is on another host
	}
	return diskFull(insp.State.Pid, s.dataPath)
}

func networkDisconnected(insp container.InspectResponse) bool {
	if insp.HostConfig == nil || insp.NetworkSettings == nil {
		return false
	}
	switch mode := insp.HostConfig.NetworkMode; {
	case mode.IsHost(), mode.IsNone(), mode.IsContainer():
		return false
	}
	return len(insp.NetworkSettings.Networks) == 0
}

// diskFullBelow is the free space under which a datadir counts as full:
// servers fail a write before the last byte is taken (InnoDB extends a
// tablespace by megabytes, PostgreSQL's WAL by 16 MiB segments).
const diskFullBelow = 16 << 20

// diskFull reads the free space of the datadir as the container sees it
// (through the server process's root: a tmpfs or volume inside is seen as
// mounted there).
func diskFull(pid int, datadir string) string {
	if pid == 0 || datadir == "" {
		return ""
	}
	var st unix.Statfs_t
	if unix.Statfs("/proc/"+strconv.Itoa(pid)+"/root"+datadir, &st) != nil || st.Blocks == 0 {
		return ""
	}
	free, size := st.Bavail*uint64(st.Bsize), st.Blocks*uint64(st.Bsize)
	if free >= diskFullBelow {
		return ""
	}
	return fmt.Sprintf("disk full: the datadir %s has %s free of %s", datadir, mib(free), mib(size))
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// recordStart keeps the engine's start time of the container, so that a
// restart behind dbduel's back can be told from its own.
func (s *Server) recordStart(ctx context.Context) {
	if insp, err := s.cli.ContainerInspect(ctx, s.id); err == nil && insp.State != nil {
		s.startedAt = insp.State.StartedAt
	}
}

// leftBehind says what Stop could not remove and how it will go: an
// unreachable engine keeps it until `dbduel clean` runs against it again.
func (s *Server) leftBehind(what string, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, perr := s.cli.Ping(ctx); perr != nil {
		return fmt.Errorf("%s is left behind: %s; `%s` removes it once the engine answers", what, s.engineUnreachable(perr), s.cleanCommand())
	}
	return fmt.Errorf("remove %s: %w", what, err)
}

// cleanCommand is the command that removes this run's leftovers from the
// target's engine (`dbduel clean` reaches the engine DOCKER_HOST names,
// and Podman).
func (s *Server) cleanCommand() string {
	if s.remote() {
		return fmt.Sprintf("%s dbduel clean --run %s", s.o.cleanEnv(s.eng.addr), s.runID)
	}
	return "dbduel clean --run " + s.runID
}
