// Command pairedci is the bench scripts' summary of paired runs: it reads
// lines of sysbench/dbduel pairs ("sb_qps dd_qps sb_cli dd_cli sb_srv
// dd_srv" by default; -names says which figures) and prints each
// dbduel/sysbench ratio as dbduel's own verdicts compute it
// (stats.ComparePaired: geometric mean of the per-pair ratios and its 95% CI).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/dbduel/dbduel/engine/stats"
)

func main() {
	names := flag.String("names", "QPS,client CPU/q,server CPU/q", "the figures of each line's pairs, comma-separated")
	peer := flag.String("peer", "sysbench", "the client dbduel is compared with")
	flag.Parse()
	line, err := summarize(os.Stdin, strings.Split(*names, ","), *peer)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pairedci:", err)
		os.Exit(1)
	}
	fmt.Println(line)
}

// summarize reads the pairs and returns the one-line summary.
func summarize(r io.Reader, names []string, peer string) (string, error) {
	cols := make([][]float64, 2*len(names))
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != len(cols) {
			return "", fmt.Errorf("want %d numbers per line, got %q", len(cols), sc.Text())
		}
		for i, s := range f {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return "", err
			}
			cols[i] = append(cols[i], v)
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	var parts []string
	for i, name := range names {
		p := stats.ComparePaired(cols[2*i+1], cols[2*i])
		s := fmt.Sprintf("%s %.3f", name, p.Ratio)
		if p.HasCI {
			s += fmt.Sprintf(" [%.3f, %.3f]", p.Low, p.High)
		} else {
			s += " (" + p.Method + ")"
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("paired ratios dbduel/%s, geometric mean [95%% CI, paired t on log-ratios]: %s", peer, strings.Join(parts, "; ")), nil
}
