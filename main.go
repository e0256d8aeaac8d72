// Command dbduel compares how a database performs natively and in a
// container (or across any N targets) with sysbench-compatible workloads.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	_ "github.com/dbduel/dbduel/engine/workload/mongo" // registers sysbench-mongodb's workloads
	_ "github.com/dbduel/dbduel/engine/workload/oltp"  // registers sysbench's OLTP scripts
	_ "github.com/dbduel/dbduel/engine/workload/sys"   // registers cpu, memory and fileio
	_ "github.com/dbduel/dbduel/engine/workload/tpcc"  // registers TPC-C
	"github.com/dbduel/dbduel/targets"
)

// version is dbduel's version, stamped into every result.
var version = "0.1.0"

// Exit codes (docs/exit-codes.md).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitThreshold   = 3
	exitParity      = 4
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// A closed stdout or stderr is an exit path like SIGINT (see brokenPipe).
	ctx, cancel := context.WithCancelCause(ctx)
	pipes := newBrokenPipe(func() { cancel(errStdioClosed) })
	code := run(ctx, os.Args[1:], pipes.guard(os.Stdout), pipes.guard(os.Stderr))
	stop()
	os.Exit(code)
}

// errStdioClosed is why a run stops when its output's reader went away.
var errStdioClosed = errors.New("stdout or stderr was closed")

// run executes the CLI and returns the exit code; it never panics on bad
// input. ctx ends on SIGINT, SIGTERM, SIGHUP and a closed stdout/stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(ctx, err)
	fmt.Fprintf(stderr, "dbduel: %s\n", targets.OneLine(err.Error()))
	return code
}

func exitCode(ctx context.Context, err error) int {
	var ee *exitError
	var ue *targets.UsageError
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

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dbduel",
		Short: "How much does running this database in a container cost, and why?",
		Long: `dbduel runs sysbench-compatible workloads against a native server and a
containerized one (or any N targets), shows the comparison live, and ends with
a verdict: repeated runs, confidence intervals, and the cause of the gap.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(suggestFlag)
	root.AddCommand(newRunCmd(stdout, stderr, "run"), newRunCmd(stdout, stderr, "prepare"), newRunCmd(stdout, stderr, "cleanup"), newRunCmd(stdout, stderr, "check"),
		newDemoCmd(stdout, stderr), newCleanCmd(stdout, stderr),
		newReportCmd(stdout), newCompareCmd(stdout), newAgentCmd(), newExplainCmd(stdout, stderr))
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
