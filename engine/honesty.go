package engine

import (
	"context"
	"math"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
)

// readCount reads the server's own operation counter (ok false when the
// protocol or server has none, or the read failed).
func readCount(ctx context.Context, db driver.DB) (driver.OpCount, bool) {
	c, err := db.OpCount(ctx)
	return c, err == nil
}

// honesty compares the server counter's delta (less the checker's own
// reading) with the operations dbduel counted.
func honesty(before, after driver.OpCount, counted uint64) *result.Honesty {
	if after.N < before.N+after.Self {
		return nil
	}
	server := after.N - before.N - after.Self // the second reading counts itself
	h := &result.Honesty{Counter: after.Counter, ServerQueries: server, DbduelQueries: counted, Note: after.Note}
	if server > 0 {
		h.DiffPct = math.Round((float64(counted)-float64(server))/float64(server)*10000) / 100
	}
	return h
}
