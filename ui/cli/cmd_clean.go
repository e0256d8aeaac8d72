package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/kube"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/local"
)

// newCleanCmd is dbduel clean.
func newCleanCmd(st *State) *cobra.Command {
	stdout := st.Stdout
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
	if runID != "" {
		if err := ledger.CheckName("--run", runID); err != nil {
			return usageErr("%v", err)
		}
	}
	procs, err := ledger.Processes(runID)
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
			if pid, alive := ledger.OwnerAlive(p.Owner); alive {
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
		alive := ledger.Alive(p)
		if err := ledger.Kill(p, 10*time.Second); err != nil {
			return err
		}
		if alive {
			fmt.Fprintf(out, "stopped process %d (%s, run %s, target %s)\n", p.PID, p.Binary, p.RunID, p.Target)
		} else {
			fmt.Fprintf(out, "removed stale pidfile of run %s, target %s (its process had ended)\n", p.RunID, p.Target)
		}
		if p.Dir != "" {
			fmt.Fprintf(out, "removed directory %s (run %s, target %s: its datadir, config and log)\n", p.Dir, p.RunID, p.Target)
		}
	}
	if len(inProgress) == 0 {
		for _, c := range local.RemoveCgroups(runID) {
			fmt.Fprintf(out, "removed cgroup %s\n", c)
		}
		for _, f := range ledger.ForgetKept(runID) {
			fmt.Fprintf(out, "removed kept target's URL file %s\n", f)
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
	pods, err := kube.Clean(ctx, runID, inProgress)
	for _, c := range pods {
		fmt.Fprintf(out, "removed the Kubernetes objects of run %s, target %s (context %s, namespace %s)\n", c.RunID, c.Target, c.Context, c.Namespace)
	}
	if err != nil {
		return err
	}
	if len(procs) == 0 && len(left) == 0 && len(pods) == 0 && len(inProgress) == 0 {
		fmt.Fprintln(out, "nothing to clean")
	}
	return nil
}
