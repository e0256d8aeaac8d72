package cli

import (
	"os"
	"path/filepath"
	"testing"

	"io"
)

// report and compare on any file: a report, a refusal with exit 2, never a
// panic (a run whose point or block is out of the plan, huge arrays, wrong
// types, a future schema).
func FuzzReportAndCompare(f *testing.F) {
	for _, s := range []string{`{"schema_version":1,"complete":true,"workload":{"name":"oltp_read_only"},"targets":[{"name":"a"},{"name":"b"}],` +
		`"plan":{"runs":2,"points":[{"threads":1,"table_size":10}],"blocks":[["a","b"]]},"runs":[{"target":"a","block":1,"index":1,"complete":true,"summary":{"tps":10,"qps":10}},` +
		`{"target":"b","block":1,"index":1,"point":3,"complete":true,"summary":{"tps":5}}]}`,
		`{"schema_version":1,"runs":[{"target":"x","block":-5,"point":-1}]}`, `{"schema_version":2}`, `{"schema_version":1,"explain":{"rungs":[{}],"attribution":[{}]}}`, `nope`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "r.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"md", "csv", "html"} {
			if _, stderr, code := runCLI(t, "report", p, "--format", format, "--out", filepath.Join(dir, "out."+format)); code != 0 && code != 2 && code != 1 {
				t.Fatalf("report %s: exit %d: %s", format, code, stderr)
			}
		}
		if _, stderr, code := runCLI(t, "compare", p, p); code != 0 && code != 2 {
			t.Fatalf("compare: exit %d: %s", code, stderr)
		}
	})
}

// Scenario files: loaded or refused with a file:line:column error, never a panic.
func FuzzScenario(f *testing.F) {
	for _, s := range []string{"targets:\n  a: mysql://u:p@h/db\nworkload: oltp_read_only\noptions:\n  tables: 2\nplan:\n  runs: 3\n",
		"targets: [", "options: {threads: [1,2]}", "plan:\n  runs: auto\n", "- a\n- b", "x-dbduel: 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "s.yaml")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fs := runFlagSet()
		if sc, err := loadScenario(p, func(string) (string, bool) { return "", false }); err == nil {
			_ = sc.apply(fs, io.Discard)
		}
	})
}
