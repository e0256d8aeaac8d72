package cli

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/targets"
)

// tableOptions are the flags of prepare, cleanup and check: the shared
// ones, and which of the three the command is.
type tableOptions struct {
	commonOptions
	verb string
}

func newTablesCmd(verb, short string) func(*State) *cobra.Command {
	return func(st *State) *cobra.Command {
		o := &tableOptions{verb: verb}
		return familyCommand(st, verb, short, o, func(fs *pflag.FlagSet) { bindCommonFlags(fs, &o.commonOptions) })
	}
}

var (
	newPrepareCmd = newTablesCmd("prepare", "Create and load the workload's tables on each target")
	newCleanupCmd = newTablesCmd("cleanup", "Drop the workload's sbtestN tables on each target")
	newCheckCmd   = newTablesCmd("check", "Check the workload's consistency conditions on each target (tpcc: TPC-C's 3.3.2.1-3.3.2.4)")
)

func (o *tableOptions) check(*State, *runConfig) error { return nil }

func (o *tableOptions) printDryRun(*State, *runConfig, []targets.Target) {}

func (o *tableOptions) do(ctx context.Context, st *State, rc *runConfig, ts *startedTargets) error {
	switch o.verb {
	case "prepare":
		return prepareAll(ctx, rc, ts.engine, o.reprepare, st.Stderr)
	case "cleanup":
		return cleanupAll(ctx, rc, ts.engine, st.Stderr)
	}
	return checkAll(ctx, rc, ts, st.Stdout)
}
