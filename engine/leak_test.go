package engine

import (
	"testing"
	"time"

	"github.com/dbduel/dbduel/internal/leakcheck"
)

// TestMain fails the package when its tests leave dbduel's goroutines
// running (workers, readers, watchdogs that outlived their run).
func TestMain(m *testing.M) { leakcheck.Main(m, 3*time.Second) }
