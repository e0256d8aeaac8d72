package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/internal/testdb"
)

// One known password through every output: the text, sysbench and JSON
// outputs, the result file, every report format (the PNG's bytes
// included), --dry-run, and the errors of failed connects for each scheme.
// The only place it may be is a kept target's 0600 file (not made here).
func TestPasswordInNoOutput(t *testing.T) {
	t.Parallel()
	srv := testdb.Start(t)
	pw := srv.Endpoint().Password
	if len(pw) < 8 {
		t.Fatalf("the test server's password %q is too short to search for", pw)
	}
	url := srv.URL("")
	dir := t.TempDir()
	res := filepath.Join(dir, "r.json")
	outputs := map[string]string{}
	run := func(name string, args ...string) {
		stdout, stderr, _ := dbduel(t, args...)
		outputs[name] = stdout + stderr
	}
	run("text", "run", "oltp_point_select", "--target", "a="+url, "--target", "b="+url, "--time", "1", "--table-size", "200", "--format", "text", "-o", res)
	run("sysbench", "run", "oltp_point_select", "--target", "a="+url, "--time", "1", "--table-size", "200", "--format", "sysbench")
	run("json", "run", "oltp_point_select", "--target", "a="+url, "--time", "1", "--table-size", "200", "--format", "json")
	run("dry-run", "run", "oltp_point_select", "--target", "a="+url, "--dry-run")
	for _, f := range []string{"md", "csv", "html", "png"} {
		out := filepath.Join(dir, "r."+f)
		run("report "+f, "report", res, "--format", f, "--out", out)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("report %s: %v", f, err)
		}
		outputs["file "+f] = string(data)
	}
	data, _ := os.ReadFile(res)
	outputs["result file"] = string(data)
	for _, scheme := range []string{"mysql", "postgres", "mongodb"} {
		run("failed connect "+scheme, "run", "--target", "a="+scheme+"://u:"+pw+"@127.0.0.1:1/db", "--time", "1")
	}
	for name, out := range outputs {
		if out == "" {
			t.Errorf("%s: no output to search", name)
		}
		if strings.Contains(out, pw) {
			t.Errorf("%s shows the password", name)
		}
	}
	t.Logf("searched %d outputs: %s", len(outputs), strings.Join(sortedKeys(outputs), ", "))
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

// Each secret a user may write is hidden in everything dbduel prints: a
// URL whose password holds '@', env= values (any key, quoted ones with
// commas), a scenario's ${VAR} in its errors, and a live SPEC edit's
// change line (what goes into the segment's what_changed).
func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scenario, []byte("targets:\n  - a=mysql://root:${DBPW}@127.0.0.1:1/db\nplan: [runs: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		env     []string
		args    []string
		secrets []string
	}{
		{"a password with @", nil, []string{"run", "--target", "a=mysql://root:p@ssw0rd-x@127.0.0.1:1/db", "--time", "1"}, []string{"ssw0rd-x", "p@ss"}},
		{"a password with @ in --dry-run", nil, []string{"run", "--target", "a=mysql://root:p@ssw0rd-x@127.0.0.1:1/db", "--dry-run"}, []string{"ssw0rd-x"}},
		{"env= values", nil, []string{"run", "--target", "c=docker:img,env=MYSQL_PWD=topsecret,env=API_TOKEN=tok-9876", "--dry-run"}, []string{"topsecret", "tok-9876"}},
		{"a quoted env= value with a comma", nil, []string{"run", "--target", `c=docker:img,env="MYSQL_ROOT_PASSWORD=abc-one,def-two"`, "--dry-run"}, []string{"abc-one", "def-two"}},
		{"a scenario's ${DBPW} in a YAML error", []string{"DBPW=hunter2-secret"}, []string{"run", "-f", scenario}, []string{"hunter2-secret"}},
	}
	for _, c := range cases {
		stdout, stderr, code := dbduelWith(t, c.env, c.args...)
		if stdout+stderr == "" {
			t.Errorf("%s: nothing printed to search (exit %d)", c.name, code)
		}
		for _, s := range c.secrets {
			if strings.Contains(stdout+stderr, s) {
				t.Errorf("%s: %q printed:\n%s%s", c.name, s, stdout, stderr)
			}
		}
	}
}
