package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/engine/cause"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
	"github.com/dbduel/dbduel/targets/hostinfo"
	"github.com/dbduel/dbduel/ui/report"
)

// readResult loads a result file; a missing or malformed file is the user's input (exit 2).
func readResult(path string) (*result.Result, error) {
	r, err := result.ReadFile(path)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return r, nil
}

func newReportCmd(st *State) *cobra.Command {
	stdout := st.Stdout
	var format, out string
	cmd := &cobra.Command{
		Use:   "report FILE.json --format md|csv|html|png [--out PATH]",
		Short: "Write a result as Markdown, CSV, HTML or a PNG chart",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			valid := false
			for _, f := range report.Formats {
				valid = valid || f == format
			}
			if !valid {
				return usageErr("invalid --format %q: want %s", format, strings.Join(report.Formats, ", "))
			}
			r, err := readResult(args[0])
			if err != nil {
				return err
			}
			cause.Annotate(r) // files written before the cause line have none
			if out == "" && format == "png" {
				out = strings.TrimSuffix(args[0], filepath.Ext(args[0])) + ".png"
			}
			if out == "" {
				if err := report.Write(stdout, r, format); err != nil {
					return &exitError{code: exitFailed, err: err}
				}
				return nil
			}
			// A new file in place of whatever is at out (a link is
			// replaced, not followed).
			var buf bytes.Buffer
			if err := report.Write(&buf, r, format); err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if err := result.WriteAtomic(out, buf.Bytes(), 0o644); err != nil {
				return usageErr("--out %s: %v", out, err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "dbduel: wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "md", "md, csv, html or png")
	cmd.Flags().StringVarP(&out, "out", "o", "", "write here instead of stdout (png defaults to FILE.png)")
	return cmd
}

func newCompareCmd(st *State) *cobra.Command {
	stdout := st.Stdout
	var failIf []string
	cmd := &cobra.Command{
		Use:   "compare BASE.json NEW.json",
		Short: "Compare two result files target by target (e.g. before and after a tuning change)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ths, err := stats.ParseThresholds(failIf)
			if err != nil {
				return usageErr("%v", err)
			}
			base, err := readResult(args[0])
			if err != nil {
				return err
			}
			cur, err := readResult(args[1])
			if err != nil {
				return err
			}
			cs, err := stats.CompareFiles(base, cur)
			var mm *stats.MismatchError
			if errors.As(err, &mm) {
				return usageErr("%v", err)
			}
			if err != nil {
				return err
			}
			if len(ths) > 0 {
				for _, c := range cs {
					if c.N < 2 || c.NBaseline < 2 {
						return usageErr("--fail-if needs 2 or more runs per target in both files: %s has %d in BASE and %d in NEW", c.Target, c.NBaseline, c.N)
					}
				}
			}
			if same := sameRun(args[0], args[1], base, cur); same != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "dbduel: warning: %s: the comparison can only show noise\n", same)
			}
			// A kernel upgrade between "before" and "after" is the first thing
			// a reader must know.
			if diffs := hostinfo.EnvironmentDifferences(base.Environment, cur.Environment); len(diffs) > 0 {
				fmt.Fprintf(stdout, "environment differs between the files (%d):\n", len(diffs))
				for _, d := range diffs {
					fmt.Fprintf(stdout, "  %s\n", d)
				}
			}
			fmt.Fprintf(stdout, "%-14s %-6s %9s %20s %9s  %s\n", "target", "metric", "Δ%", "95% CI", "n base/new", "method")
			for _, c := range cs {
				ci := "-"
				if c.HasCI {
					ci = fmt.Sprintf("[%+.1f%%, %+.1f%%]", c.CILowPct, c.CIHighPct)
				}
				fmt.Fprintf(stdout, "%-14s %-6s %+8.1f%% %20s %9s  %s\n", c.Target, c.Metric, c.DeltaPct, ci, fmt.Sprintf("%d/%d", c.NBaseline, c.N), c.Method)
			}
			for _, c := range cs {
				if c.Metric == "tps" || c.Metric == "nopm" {
					fmt.Fprintf(stdout, "verdict: %s\n", c.Verdict)
				}
			}
			return checkThresholds(ths, cs, stats.DefaultAlpha, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVar(&failIf, "fail-if", nil, "exit 3 when NEW's whole 95% CI lies past this change vs BASE, e.g. 'tps<-5%'")
	return cmd
}

// sameRun says when compare's two files are one file, or one run written
// twice ("" otherwise).
func sameRun(pathA, pathB string, a, b *result.Result) string {
	if ia, err := os.Stat(pathA); err == nil {
		if ib, err := os.Stat(pathB); err == nil && os.SameFile(ia, ib) {
			return "BASE and NEW are the same file"
		}
	}
	if !a.StartedAt.IsZero() && a.StartedAt.Equal(b.StartedAt) && a.Plan.Seed == b.Plan.Seed {
		return fmt.Sprintf("BASE and NEW are the same run (started %s, plan seed %d)", a.StartedAt.Format(time.RFC3339), a.Plan.Seed)
	}
	return ""
}
