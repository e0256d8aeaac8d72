package engine

import (
	"testing"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
)

type txnWorkload struct {
	scripted
	txn bool
}

func (w *txnWorkload) UsesTransactions() bool { return w.txn }

// What dbduel compares with each kind of server counter, computed by hand.
func TestClientCountPerCounterKind(t *testing.T) {
	run := result.Run{Summary: result.Summary{Figures: result.Figures{Events: 100, Errors: 3}, Queries: 1800}, WarmupQueries: 180, WarmupEvents: 10}
	inTxn, auto := &txnWorkload{txn: true}, &txnWorkload{txn: false}
	cases := []struct {
		name  string
		count driver.OpCount
		wl    *txnWorkload
		want  uint64
	}{
		{"MySQL Questions", driver.OpCount{Unit: driver.Statements}, inTxn, 1980},
		{"pg_stat_statements, in transactions", driver.OpCount{Unit: driver.Statements, RollbackCounted: true}, inTxn, 1980 + 3},
		{"pg_stat_statements, autocommit", driver.OpCount{Unit: driver.Statements, RollbackCounted: true}, auto, 1980 + 3},
		{"transactions, in transactions", driver.OpCount{Unit: driver.Transactions}, inTxn, 110 + 3},
		{"transactions, autocommit", driver.OpCount{Unit: driver.Transactions}, auto, 1980},
	}
	for _, c := range cases {
		if got := clientCount(c.count, c.wl, run); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// The honesty figure: the server's delta less its own reading.
	h := honesty(driver.OpCount{N: 1000, Self: 1}, driver.OpCount{N: 2001, Self: 1, Counter: "Questions"}, 990)
	if h.ServerQueries != 1000 || h.DiffPct != -1 {
		t.Fatalf("honesty: %+v", h)
	}
}
