package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/state"
)

func newCleanCmd(stdout, stderr io.Writer) *cobra.Command {
	var runID string
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove what dbduel left behind: labelled containers and volumes, managed server processes, their host directories",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return clean(cmd.Context(), runID, stdout)
		},
	}
	cmd.Flags().StringVar(&runID, "run", "", "only what this run id left (default: every dbduel run)")
	return cmd
}

// clean removes processes recorded in pidfiles (after checking their command
// line) and containers/volumes carrying the dbduel.run label. It touches
// nothing without dbduel's mark.
func clean(ctx context.Context, runID string, out io.Writer) error {
	procs, err := state.Processes(runID)
	if err != nil {
		return err
	}
	// A run whose dbduel still runs is not left behind: leave it alone
	// unless it was named with --run.
	var inProgress map[string]int
	if runID == "" {
		inProgress = map[string]int{}
		kept := procs[:0]
		for _, p := range procs {
			if pid, alive := state.OwnerAlive(p.Owner); alive {
				inProgress[p.RunID] = pid
				continue
			}
			kept = append(kept, p)
		}
		procs = kept
	}
	defer func() {
		for id, pid := range inProgress {
			fmt.Fprintf(out, "left run %s alone: its dbduel (pid %d) is still running (dbduel clean --run %s removes it anyway)\n", id, pid, id)
		}
	}()
	for _, p := range procs {
		alive := state.Alive(p.PID, p.Binary)
		if err := state.Kill(p, 10*time.Second); err != nil {
			return err
		}
		if alive {
			fmt.Fprintf(out, "stopped process %d (%s, run %s, target %s)\n", p.PID, p.Binary, p.RunID, p.Target)
		} else {
			fmt.Fprintf(out, "removed stale pidfile of run %s, target %s\n", p.RunID, p.Target)
		}
	}
	left, err := container.Clean(ctx, runID, inProgress)
	for _, l := range left {
		if l.RunID == "" {
			fmt.Fprintf(out, "removed %s %s\n", l.Kind, l.ID)
			continue
		}
		fmt.Fprintf(out, "removed %s %s (run %s)\n", l.Kind, l.ID, l.RunID)
	}
	if err != nil {
		return err
	}
	if len(procs) == 0 && len(left) == 0 && len(inProgress) == 0 {
		fmt.Fprintln(out, "nothing to clean")
	}
	return nil
}

func newDemoCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{}
	var imageRef string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Zero-config comparison: a managed native MariaDB vs the same MariaDB in a container on Docker's bridge network and on the host's",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if imageRef == "" {
				v, err := hostServerVersion()
				if err != nil {
					return err
				}
				imageRef = "dbduel-test/mariadb:" + v
			}
			// Bridge and host side by side: the gap and, next to it, the
			// container without docker-proxy, so the cause line can say
			// which layer costs what.
			o.targets = []string{"native=local:mariadbd", "bridge=docker:" + imageRef, "host=docker:" + imageRef + ",network=host"}
			fmt.Fprintf(stderr, "dbduel demo: native=local:mariadbd vs bridge=docker:%s and host=docker:%s,network=host, oltp_read_write, %s threads, %gs per run, %s interleaved blocks, with an A/A copy of native for the noise floor\n", imageRef, imageRef, o.threads, o.timeS, o.runsFlag)
			return runVerb(cmd.Context(), "run", "oltp_read_write", o, stdout, stderr)
		},
	}
	bindRunFlags(cmd.Flags(), o)
	cmd.Flags().StringVar(&imageRef, "image", "", "container image (default: dbduel-test/mariadb:<host MariaDB version>)")
	// A short, small comparison unless the user asks otherwise.
	// Enough interleaved blocks for a CI, and the A/A copy for the noise floor.
	for name, v := range map[string]string{"threads": "4", "time": "5", "table-size": "10000", "tables": "2", "runs": "3", "calibrate": "true"} {
		_ = cmd.Flags().Set(name, v)
		cmd.Flags().Lookup(name).DefValue = v
	}
	return cmd
}

// hostServerVersion is the MariaDB version of the local mariadbd ("10.11.19").
func hostServerVersion() (string, error) {
	bin, err := exec.LookPath("mariadbd")
	if err != nil {
		bin = "/usr/sbin/mariadbd"
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("no local MariaDB server: install it with `apt-get install mariadb-server` (or run scripts/demo.sh)")
	}
	// "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu ..."
	f := strings.Fields(string(out))
	for i, w := range f {
		if w == "Ver" && i+1 < len(f) {
			v, _, _ := strings.Cut(f[i+1], "-")
			return v, nil
		}
	}
	return "", fmt.Errorf("cannot read the MariaDB version from %q", strings.TrimSpace(string(out)))
}
