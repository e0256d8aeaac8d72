package engine

import (
	"context"
	"testing"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
)

type timedDB struct {
	driver.DB
	readings []driver.ServerTime
}

func (d *timedDB) ServerTime(context.Context) (driver.ServerTime, error) {
	st := d.readings[0]
	d.readings = d.readings[1:]
	return st, nil
}

// 1000 statements in 20 ms of server time are 20 µs each; events of two
// statements at 100 µs are 50 µs per statement at the client, 30 between.
func TestServerTimeSplitsLatency(t *testing.T) {
	db := &timedDB{readings: []driver.ServerTime{{Source: "x", Statements: 500, NS: 1e6}, {Source: "x", Statements: 1500, NS: 21e6}}}
	var tm serverTiming
	tm.start(context.Background(), db)
	tm.end(context.Background(), db)
	st := tm.result(result.Run{Summary: result.Summary{Figures: result.Figures{Events: 500}, Queries: 1000, AvgUS: 100}})
	if st == nil || st.Statements != 1000 || st.AvgUS != 20 || st.ClientAvgUS != 50 || st.BetweenUS != 30 || st.Source != "x" {
		t.Fatalf("got %+v", st)
	}
	var none serverTiming
	none.start(context.Background(), struct{ driver.DB }{})
	if none.result(result.Run{Summary: result.Summary{Queries: 1}}) != nil {
		t.Fatal("a server without a timer got a server time")
	}
}
