package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/engine/agent"
	"github.com/dbduel/dbduel/engine/driver"
	mysqldrv "github.com/dbduel/dbduel/engine/driver/mysql"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/sysfacts"
)

// newAgentCmd is the agent dbduel runs inside a container for the system
// micro-benchmarks: requests on stdin, replies on stdout (hidden: users
// never call it).
func newAgentCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "agent",
		Short:  "serve the engine over stdin and stdout (inside a container)",
		Hidden: true,
		Args:   cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A server the engine names is reached with the protocols' own
			// drivers (the default error rules: --mysql-ignore-errors is not passed on).
			open := func(ctx context.Context, ep driver.Endpoint, maxConns int) (driver.DB, error) {
				ignore, err := mysqldrv.ParseErrorSet(mysqldrv.DefaultIgnoreErrors)
				if err != nil {
					return nil, err
				}
				return targets.Opener(ep, ignore)(ctx, maxConns)
			}
			return agent.Serve(cmd.Context(), os.Stdin, os.Stdout, dir, version, func() map[string]string { return sysfacts.Read(dir) }, open)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "/var/lib/dbduel", "where the workload's files live")
	return cmd
}

// agentBinary is the dbduel copied into agent containers: this executable,
// or DBDUEL_AGENT_BINARY (tests, whose own executable is the test binary).
func agentBinary() (string, error) {
	if b := os.Getenv("DBDUEL_AGENT_BINARY"); b != "" {
		return b, nil
	}
	return os.Executable()
}
