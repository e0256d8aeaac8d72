package cli

import (
	"fmt"
	"strings"

	"github.com/dbduel/dbduel/targets/local"
	"github.com/dbduel/dbduel/ui/chart"
	"github.com/spf13/cobra"
)

// newDemoCmd is dbduel demo: the zero-config comparison.
func newDemoCmd(st *State) *cobra.Command {
	stderr := st.Stderr
	o := &runOptions{}
	var imageRef string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Zero-config comparison: a managed native MariaDB vs the same MariaDB in a container on Docker's bridge network and on the host's",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if imageRef == "" {
				v, err := local.MariaDBVersion()
				if err != nil {
					return err
				}
				imageRef = "dbduel-test/mariadb:" + v
			}
			// Bridge and host side by side: the gap and, next to it, the
			// container without docker-proxy, so the cause line can say
			// which layer costs what.
			o.targets = []string{"native=local:mariadbd", "bridge=docker:" + imageRef, "host=docker:" + imageRef + ",network=host"}
			fmt.Fprintln(stderr, strings.Join(demoHeader(imageRef, o), "\n"))
			return runFamilyVerb(cmd.Context(), st, "oltp_read_write", o)
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

// demoHeader says what the demo runs, wrapped at words to 80 columns (a
// terminal of 80 cut it mid-word).
func demoHeader(imageRef string, o *runOptions) []string {
	header := fmt.Sprintf("dbduel demo: native=local:mariadbd vs bridge=docker:%s and host=docker:%s,network=host, oltp_read_write, %s threads, %gs per run, %s interleaved blocks, with an A/A copy of native to check the design", imageRef, imageRef, o.threads, o.timeS, o.runsFlag)
	return chart.Wrap(header, 80)
}
