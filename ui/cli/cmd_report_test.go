package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// writeResult writes a synthetic but well-formed result with target TPS values per block.
func writeResult(t *testing.T, tps map[string][]float64, size int) string {
	t.Helper()
	r := &result.Result{SchemaVersion: result.SchemaVersion, Complete: true, StartedAt: time.Now(),
		Workload: result.Workload{Name: "oltp_read_only", Options: map[string]any{"tables": 1, "table_size": size}},
		Plan:     result.Plan{Runs: 3, Points: []result.Point{{Threads: 4, TableSize: size}}}}
	for _, name := range []string{"native", "container"} {
		r.Targets = append(r.Targets, result.Target{Name: name, Kind: "local", ServerVersion: "10.11.19"})
		for i, v := range tps[name] {
			r.Runs = append(r.Runs, result.Run{Target: name, Block: i + 1, Index: i + 1, Complete: true,
				Summary:   result.Summary{Figures: result.Figures{TPS: v, QPS: 16 * v, P95US: 8e6 / v, P99US: 9e6 / v}, Queries: uint64(160 * v), AvgUS: 4e6 / v, DurationS: 10},
				Intervals: []result.Interval{{Figures: result.Figures{TPS: v}, TS: 1}, {Figures: result.Figures{TPS: v * 1.01}, TS: 2}}})
		}
	}
	stats.Analyze(r)
	path := filepath.Join(t.TempDir(), "r.json")
	if err := result.WriteFile(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReportFormats(t *testing.T) {
	path := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}, "container": {500, 510, 490}}, 100)
	md, stderr, code := runCLI(t, "report", path, "--format", "md")
	if code != 0 || !strings.Contains(md, "| native | 1 |") || !strings.Contains(md, "container is slower by 50.0%") {
		t.Fatalf("md: exit %d %s\n%s", code, stderr, md)
	}
	csv, _, code := runCLI(t, "report", path, "--format", "csv")
	if code != 0 || strings.Count(strings.TrimSpace(csv), "\n") != 6 || !strings.HasPrefix(csv, "target,point,threads") {
		t.Fatalf("csv: exit %d\n%s", code, csv)
	}
	html, _, code := runCLI(t, "report", path, "--format", "html")
	if code != 0 || !strings.Contains(html, "<table>") || !strings.Contains(html, "data:image/png;base64,") {
		t.Fatalf("html: exit %d", code)
	}
	png := filepath.Join(t.TempDir(), "c.png")
	if _, stderr, code := runCLI(t, "report", path, "--format", "png", "-o", png); code != 0 {
		t.Fatalf("png: exit %d %s", code, stderr)
	}
	data, _ := os.ReadFile(png)
	if !bytes.HasPrefix(data, []byte("\x89PNG\r\n")) {
		t.Fatal("not a PNG")
	}
	if _, _, code := runCLI(t, "report", path, "--format", "pdf"); code != 2 {
		t.Fatalf("unknown format: exit %d", code)
	}
	if _, _, code := runCLI(t, "report", filepath.Join(t.TempDir(), "missing.json")); code != 2 {
		t.Fatalf("missing file: exit %d", code)
	}
}

func TestCompareFilesCLI(t *testing.T) {
	base := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}, "container": {500, 505, 495}}, 100)
	slower := writeResult(t, map[string][]float64{"native": {800, 810, 790}, "container": {500, 505, 495}}, 100)
	out, stderr, code := runCLI(t, "compare", base, slower, "--fail-if", "tps<-5%")
	if code != 3 || !strings.Contains(out, "native") || !strings.Contains(stderr, "crosses tps<-5%") {
		t.Fatalf("regression: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, _, code := runCLI(t, "compare", base, base, "--fail-if", "tps<-5%"); code != 0 {
		t.Fatalf("same file: exit %d", code)
	}
	other := writeResult(t, map[string][]float64{"native": {1000}}, 999)
	if _, stderr, code := runCLI(t, "compare", base, other); code != 2 || !strings.Contains(stderr, "not comparable") {
		t.Fatalf("mismatch: exit %d %s", code, stderr)
	}
}

// compare --fail-if with a single run on a side cannot judge: exit 2.
func TestCompareFailIfNeedsRunsOnBothSides(t *testing.T) {
	base := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}}, 100)
	one := writeResult(t, map[string][]float64{"native": {800}}, 100)
	_, stderr, code := runCLI(t, "compare", base, one, "--fail-if", "tps<-5%")
	if code != 2 || !strings.Contains(stderr, "--fail-if needs 2 or more runs per target in both files: native has 3 in BASE and 1 in NEW") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	out, _, code := runCLI(t, "compare", base, base)
	if code != 0 || !strings.Contains(out, "3/3") {
		t.Fatalf("n column shows both sides: exit %d\n%s", code, out)
	}
}

// run --fail-if that could never be judged is refused before anything starts.
func TestRunFailIfRefusedUpFront(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--target", "a=mysql://u@127.0.0.1:1/x", "--target", "b=mysql://u@127.0.0.1:1/x", "--fail-if", "tps<-5%"},
		{"run", "--target", "a=mysql://u@127.0.0.1:1/x", "--runs", "3", "--fail-if", "tps<-5%"},
	} {
		_, stderr, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "--fail-if needs") || strings.Contains(stderr, "starting") {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// --alpha is a family-wise level of at most 0.05 (a larger one would put
// a verdict word beside a 95% CI spanning 0): anything else is refused in
// one line before anything starts.
func TestRunAlphaRefusedUpFront(t *testing.T) {
	for _, alpha := range []string{"0", "0.1", "-0.01", "1"} {
		_, stderr, code := runCLI(t, "run", "--target", "a=mysql://u@127.0.0.1:1/x", "--target", "b=mysql://u@127.0.0.1:1/x", "--runs", "3", "--alpha", alpha)
		if code != 2 || !strings.Contains(stderr, "invalid --alpha") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "starting") {
			t.Fatalf("--alpha %s: exit %d: %s", alpha, code, stderr)
		}
	}
}

// compare says first when the two results come from different environments.
func TestCompareListsEnvironmentDifferences(t *testing.T) {
	base := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}}, 100)
	cur := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}}, 100)
	for path, kernel := range map[string]string{base: "6.1.0-27-amd64", cur: "6.1.0-28-amd64"} {
		r, err := result.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r.Environment = map[string]string{"kernel": kernel, "governor": "performance"}
		if err := result.WriteFile(path, r); err != nil {
			t.Fatal(err)
		}
	}
	out, _, code := runCLI(t, "compare", base, cur)
	if code != 0 || !strings.HasPrefix(out, "environment differs between the files (1):\n  kernel: 6.1.0-27-amd64 vs 6.1.0-28-amd64\n") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// compare of a file with itself, or with a copy of the same run, says so.
func TestCompareWarnsOfTheSameRun(t *testing.T) {
	path := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}}, 100)
	_, stderr, code := runCLI(t, "compare", path, path)
	if code != 0 || !strings.Contains(stderr, "warning: BASE and NEW are the same file") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(path)
	copyPath := filepath.Join(t.TempDir(), "copy.json")
	os.WriteFile(copyPath, data, 0o644)
	if _, stderr, _ := runCLI(t, "compare", path, copyPath); !strings.Contains(stderr, "warning: BASE and NEW are the same run (started ") {
		t.Fatalf("copy: %s", stderr)
	}
}

// A result someone else wrote is text, whatever it holds: its escape
// sequences (OSC 52 would write the reader's clipboard) never reach the
// terminal, its Markdown never becomes markup in a report, and a report
// written where a link stands replaces the link instead of writing
// through it.
func TestCraftedResultPrintsAsText(t *testing.T) {
	path := writeResult(t, map[string][]float64{"native": {1000, 1010, 990}, "container": {500, 510, 490}}, 100)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	osc52 := "\x1b]52;c;ZWNobyBwd25lZA==\x07"
	crafted := strings.ReplaceAll(string(data), `"server_version": "10.11.19"`,
		`"server_version": "10.11.19`+strings.NewReplacer("\x1b", `\u001b`, "\x07", `\u0007`).Replace(osc52)+`[click](http://evil.example) | x"`)
	crafted = strings.Replace(crafted, `"name": "oltp_read_only"`, `"name": "oltp_read_only\u009b31m![img](http://evil.example/a.png)"`, 1)
	if crafted == string(data) {
		t.Fatal("the result file's layout changed: the test plants nothing")
	}
	if err := os.WriteFile(path, []byte(crafted), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"report", path, "--format", "md"}, {"compare", path, path}, {"report", path, "--format", "csv"}} {
		out, stderr, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		if strings.ContainsAny(out+stderr, "\x1b\x07\u009b") {
			t.Errorf("%v printed control characters: %q", args, out)
		}
		if args[1] == "md" || strings.HasSuffix(args[len(args)-1], "md") {
			if strings.Contains(out, "](http") {
				t.Errorf("the Markdown report made markup of the file's text:\n%s", out)
			}
		}
	}
	// --out where a link to another file stands: the link is replaced.
	dir := t.TempDir()
	precious := filepath.Join(dir, "precious")
	if err := os.WriteFile(precious, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.md")
	if err := os.Symlink(precious, out); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "report", path, "--format", "md", "--out", out); code != 0 {
		t.Fatalf("report --out: exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile(precious); string(got) != "keep me" {
		t.Fatal("the report was written through the link")
	}
	if fi, err := os.Lstat(out); err != nil || fi.Mode()&os.ModeSymlink != 0 || fi.Mode().Perm() != 0o644 {
		t.Fatalf("the report: %v %v", fi.Mode(), err)
	}
}
