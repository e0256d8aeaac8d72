package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/internal/integration"
	"github.com/dbduel/dbduel/targets/ledger"
)

// clean lists what it removed: a dead server's pidfile and its directory
// (datadir, config, log), by name.
func TestCleanListsTheDirectoriesItRemoves(t *testing.T) {
	integration.Require(t, "the Docker engine (clean also asks it for labelled containers)")
	t.Setenv("DBDUEL_STATE_DIR", t.TempDir())
	dir := filepath.Join(ledger.Dir(), "dbduel-local-cleantest-n-1")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A pidfile of a process that has ended (pid 1 is never a mariadbd).
	if err := ledger.Record(ledger.Process{RunID: "cleantest", Target: "n", PID: 1, Binary: "/nonexistent/mariadbd", Dir: dir}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := clean(context.Background(), "cleantest", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "removed directory "+dir) || !strings.Contains(out.String(), "removed stale pidfile of run cleantest, target n") {
		t.Fatalf("clean said:\n%s", out.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory still there: %v", err)
	}
}
