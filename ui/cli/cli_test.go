package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
	os.Setenv("DBDUEL_STATE_DIR", filepath.Join(os.TempDir(), "dbduel-test-state"))
	os.Exit(m.Run())
}
