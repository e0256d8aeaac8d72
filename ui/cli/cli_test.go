package cli

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// runCLI runs the command line over a State of its own (this process's
// environment) and returns its output and exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = Run(context.Background(), args, NewState(&o, &e, os.Environ()))
	return o.String(), e.String(), code
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dbduel-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("DBDUEL_STATE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.RemoveAll(dir + "-servers")
	os.Exit(code)
}

// Keys follow a server URL after its host; a password keeps its commas.
func TestSplitURLKeys(t *testing.T) {
	for spec, want := range map[string][2]string{
		"mysql://root:p,w@127.0.0.1:1/x":                         {"mysql://root:p,w@127.0.0.1:1/x", ""},
		"mysql://u:p,w@h:3307/db,client=beside,engine=tcp://h:1": {"mysql://u:p,w@h:3307/db", "client=beside,engine=tcp://h:1"},
		"postgres://h/db,client=beside":                          {"postgres://h/db", "client=beside"},
		"mysql://h:3306/sbtest":                                  {"mysql://h:3306/sbtest", ""},
	} {
		if url, keys := splitURLKeys(spec); url != want[0] || keys != want[1] {
			t.Errorf("%s: %q %q", spec, url, keys)
		}
	}
}
