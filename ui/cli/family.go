package cli

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/targets"
)

// familyVerb is a verb of the run family (run, explain, live, prepare,
// cleanup, check): the shared flags, its own, and what it does once its
// targets are up. Each verb's options struct embeds commonOptions and is
// its familyVerb.
type familyVerb interface {
	shared() *commonOptions
	// check refuses what the verb cannot do and completes rc, after the
	// shared flags resolved and before any target starts.
	check(st *State, rc *runConfig) error
	// dryRun prints the verb's part of --dry-run.
	printDryRun(st *State, rc *runConfig, ts []targets.Target)
	// do is the verb's work once its targets are up.
	do(ctx context.Context, st *State, rc *runConfig, ts *startedTargets) error
}

// familyCommand is the command of a family verb: bind adds its flags (the
// shared ones included).
func familyCommand(st *State, use, short string, v familyVerb, bind func(*pflag.FlagSet)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use + " [WORKLOAD] --target NAME=SPEC ...",
		Short: short,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return runFamilyVerb(cmd.Context(), st, name, v)
		},
	}
	bind(cmd.Flags())
	return cmd
}

// runFamilyVerb is every family verb's way: the files under the flags,
// the flags resolved (flags → scenario → runConfig), then a dry run or
// the targets started and the verb done.
func runFamilyVerb(ctx context.Context, st *State, wlName string, v familyVerb) error {
	o := v.shared()
	name, err := o.loadFiles(ctx, st, o.flags, wlName)
	if err != nil {
		return err
	}
	rc, err := newRunConfig(st, name, v)
	if err != nil {
		return err
	}
	if o.dryRun {
		return dryRun(st, rc, v)
	}
	return runVerb(ctx, st, rc, v)
}
