// Command dbduel compares how a database performs natively and in a
// container (or across any N targets) with sysbench-compatible workloads.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/dbduel/dbduel/ui/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// A closed stdout or stderr is an exit path like SIGINT.
	ctx, cancel := context.WithCancelCause(ctx)
	pipes := cli.NewBrokenPipe(func() { cancel(cli.ErrStdioClosed) })
	st := cli.NewState(pipes.Guard(os.Stdout), pipes.Guard(os.Stderr), os.Environ())
	code := cli.Run(ctx, os.Args[1:], st)
	stop()
	os.Exit(code)
}
