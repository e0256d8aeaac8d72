// Package cli is dbduel's command line, the composition root: one file per
// verb (cmd_*.go) built from one list of constructors over one State, the
// scenario and compose input (input_*.go), the target wiring
// (targets_*.go), conducting a plan (conduct.go) and presenting it
// (present.go).
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/engine/driver"
	_ "github.com/dbduel/dbduel/engine/driver/mongo"    // registers the MongoDB protocol
	_ "github.com/dbduel/dbduel/engine/driver/mysql"    // registers the MySQL/MariaDB protocol
	_ "github.com/dbduel/dbduel/engine/driver/postgres" // registers the PostgreSQL protocol
	_ "github.com/dbduel/dbduel/engine/workload/mongo"  // registers sysbench-mongodb's workloads
	_ "github.com/dbduel/dbduel/engine/workload/oltp"   // registers sysbench's OLTP scripts
	_ "github.com/dbduel/dbduel/engine/workload/sys"    // registers cpu, memory and fileio
	_ "github.com/dbduel/dbduel/engine/workload/tpcc"   // registers TPC-C
	"github.com/dbduel/dbduel/targets/specs"
)

// Version is dbduel's version, stamped into every result.
var Version = "0.1.0"

// Exit codes (docs/exit-codes.md).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitThreshold   = 3
	exitParity      = 4
	exitUndecided   = 5
	exitInterrupted = 130
)

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// ErrStdioClosed is why a run stops when its output's reader went away.
var ErrStdioClosed = errors.New("stdout or stderr was closed")

// verbs is every command, each built over the one State.
var verbs = []func(*State) *cobra.Command{
	newRunCmd, newPrepareCmd, newCleanupCmd, newCheckCmd, newLiveCmd, newReplayCmd,
	newDemoCmd, newCleanCmd, newReportCmd, newCompareCmd, newAgentCmd, newExplainCmd,
}

// Run executes the command line args and returns the exit code (also left
// in st.Exit); it never panics on bad input. ctx ends on SIGINT, SIGTERM,
// SIGHUP and a closed stdout/stderr.
func Run(ctx context.Context, args []string, st *State) int {
	root := newRootCmd(st)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	st.Exit = exitOK
	if err != nil {
		st.Exit = exitCode(ctx, err)
		fmt.Fprintf(st.Stderr, "dbduel: %s\n", driver.OneLine(err.Error()))
	}
	return st.Exit
}

func exitCode(ctx context.Context, err error) int {
	var ee *exitError
	var ue *specs.UsageError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return exitUsage
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return exitInterrupted
	case isFlagError(err):
		return exitUsage
	}
	return exitFailed
}

func newRootCmd(st *State) *cobra.Command {
	root := &cobra.Command{
		Use:   "dbduel",
		Short: "How much does running this database in a container cost, and why?",
		Long: `dbduel runs sysbench-compatible workloads against a native server and a
containerized one (or any N targets), shows the comparison live, and ends with
a verdict: repeated runs, confidence intervals, and the cause of the gap.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetOut(st.Stdout)
	root.SetErr(st.Stderr)
	root.SetFlagErrorFunc(suggestFlag)
	for _, v := range verbs {
		root.AddCommand(v(st))
	}
	return root
}

// isFlagError recognises cobra's argument errors.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
