package cli

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/engine/agent"
	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets/hostinfo"
)

// newAgentCmd is the agent dbduel runs inside a container for the system
// micro-benchmarks: requests on stdin, replies on stdout (hidden: users
// never call it).
func newAgentCmd(*State) *cobra.Command {
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
				return driver.OpenerFor(ep, nil)(ctx, maxConns)
			}
			return agent.Serve(cmd.Context(), os.Stdin, os.Stdout, dir, Version, func() map[string]string { return hostinfo.ReadFacts(dir) }, open)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "/var/lib/dbduel", "where the workload's files live")
	return cmd
}

// agentBinary is the dbduel copied into agent containers: this executable,
// or DBDUEL_AGENT_BINARY (tests, whose own executable is the test binary).
func (st *State) agentBinary() (string, error) {
	if b := st.Getenv("DBDUEL_AGENT_BINARY"); b != "" {
		return b, nil
	}
	return executable()
}
