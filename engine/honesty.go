package engine

import (
	"context"
	"database/sql"
	"math"

	"github.com/dbduel/dbduel/engine/result"
)

type questions struct {
	n  uint64
	ok bool
}

// readQuestions reads the server's global Questions counter. It counts text
// queries and prepared-statement executions alike, so it checks dbduel's own
// count from the server's side.
func readQuestions(ctx context.Context, db *sql.DB) questions {
	var name string
	var q questions
	if err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &q.n); err != nil {
		return questions{}
	}
	q.ok = true
	return q
}

// honesty compares the server's Questions delta (less the checker's own
// statement) with the queries dbduel counted.
func honesty(before, after questions, counted uint64) *result.Honesty {
	if !before.ok || !after.ok || after.n < before.n {
		return nil
	}
	server := after.n - before.n - 1 // the second SHOW STATUS counts itself
	h := &result.Honesty{Counter: "Questions", ServerQueries: server, DbduelQueries: counted,
		Note: "the server counter includes any other client of this server"}
	if server > 0 {
		h.DiffPct = math.Round((float64(counted)-float64(server))/float64(server)*10000) / 100
	}
	return h
}
