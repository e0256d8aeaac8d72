package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/local"
	"github.com/dbduel/dbduel/ui/chart"
	"github.com/spf13/cobra"
)

// newDemoCmd is dbduel demo: the zero-config comparison.
func newDemoCmd(st *State) *cobra.Command {
	stderr := st.Stderr
	o := &runOptions{}
	var imageRef, registryHost string
	var showImage bool
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
				var why string
				imageRef, why = demoImage(cmd.Context(), v, registryHost)
				fmt.Fprintln(stderr, why)
			}
			if showImage {
				fmt.Fprintln(st.Stdout, imageRef)
				return nil
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
	cmd.Flags().StringVar(&imageRef, "image", "", "container image (default: the official mariadb:MAJOR.MINOR of the host's MariaDB when a registry serves it, else the local build dbduel-test/mariadb:<version>)")
	cmd.Flags().StringVar(&registryHost, "registry", "", "the registry (HOST:PORT) to take the official image from, instead of Docker Hub")
	cmd.Flags().BoolVar(&showImage, "show-image", false, "print the image the demo would use and exit (scripts/demo.sh builds the local one only when needed)")
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

// demoRegistryTimeout bounds asking a registry for the official image: a
// machine that reaches none (this project's CI) falls back at once.
const demoRegistryTimeout = 15 * time.Second

// demoImage is the container image of the demo and the line that says
// which and why: the official image of the native server's family and
// version (mariadb:10.11 for MariaDB 10.11.x) when a registry serves it,
// else the local build of the very same version.
func demoImage(ctx context.Context, version, registryHost string) (string, string) {
	major, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	official, from := "mariadb:"+major+"."+minor, "Docker Hub"
	if registryHost != "" {
		official, from = registryHost+"/library/mariadb:"+major+"."+minor, "registry "+registryHost
	}
	err := container.RegistryServes(ctx, official, demoRegistryTimeout)
	if err == nil {
		return official, fmt.Sprintf("dbduel demo: image %s, the official image of the native server's family and version, from %s (parity says what differs from the native build)", official, from)
	}
	local := "dbduel-test/mariadb:" + version
	return local, fmt.Sprintf("dbduel demo: image %s, the local build of the native version: %s did not serve %s (%s)", local, from, official, err)
}
