package oltp

import (
	"context"
	"io"
	"strings"
	"testing"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/internal/fakesql"
	"github.com/spf13/pflag"
)

func newTestWorker(t testing.TB, name string, o Options, record bool) (workload.Worker, *fakesql.Log) {
	t.Helper()
	db, log := fakesql.Open(record)
	conn, err := (&enginedriver.SQLPool{DB: db, Protocol: "mysql"}).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(name, o)
	if err != nil {
		t.Fatal(err)
	}
	wk, err := w.NewWorker(context.Background(), conn, 0, 1, 42)
	if err != nil {
		t.Fatal(err)
	}
	return wk, log
}

func TestStatementMixPerScript(t *testing.T) {
	cases := []struct {
		name                string
		reads, writes, othr uint64
		prepared            int // statements prepared with --tables 1
		first, last         string
	}{
		{"oltp_read_write", 14, 4, 2, 11, "P:BEGIN", "P:COMMIT"},
		{"oltp_read_only", 14, 0, 2, 7, "P:BEGIN", "P:COMMIT"},
		{"oltp_write_only", 0, 4, 2, 6, "P:BEGIN", "P:COMMIT"},
		{"oltp_point_select", 1, 0, 0, 1, "P:SELECT c FROM sbtest1 WHERE id=?", "P:SELECT c FROM sbtest1 WHERE id=?"},
		{"oltp_update_index", 0, 1, 0, 1, "P:UPDATE sbtest1 SET k=k+1 WHERE id=?", ""},
		{"oltp_update_non_index", 0, 1, 0, 1, "P:UPDATE sbtest1 SET c=? WHERE id=?", ""},
		{"oltp_delete", 0, 1, 0, 1, "P:DELETE FROM sbtest1 WHERE id=?", ""},
		{"oltp_insert", 0, 1, 0, 0, "T:INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, ", ""},
		{"select_random_points", 1, 0, 0, 1, "P:SELECT id, k, c, pad", ""},
		{"select_random_ranges", 1, 0, 0, 1, "P:SELECT count(k)", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wk, log := newTestWorker(t, c.name, DefaultOptions(), true)
			var n workload.Counts
			if err := wk.Event(context.Background(), &n); err != nil {
				t.Fatal(err)
			}
			if n.Reads != c.reads || n.Writes != c.writes || n.Other != c.othr {
				t.Fatalf("r/w/o %d/%d/%d, want %d/%d/%d", n.Reads, n.Writes, n.Other, c.reads, c.writes, c.othr)
			}
			if len(log.Prepared) != c.prepared {
				t.Fatalf("prepared %d statements, want %d: %q", len(log.Prepared), c.prepared, log.Prepared)
			}
			ex := log.Snapshot()
			if uint64(len(ex)) != n.Total() {
				t.Fatalf("executed %d statements, counted %d", len(ex), n.Total())
			}
			if !strings.HasPrefix(strings.TrimSpace(ex[0]), c.first) {
				t.Fatalf("first statement %q, want %q", ex[0], c.first)
			}
			if c.last != "" && ex[len(ex)-1] != c.last {
				t.Fatalf("last statement %q, want %q", ex[len(ex)-1], c.last)
			}
		})
	}
}

func TestReadWriteOrderAndSkipTrx(t *testing.T) {
	wk, log := newTestWorker(t, "oltp_read_write", DefaultOptions(), true)
	var n workload.Counts
	wk.Event(context.Background(), &n)
	ex := log.Snapshot()
	want := []string{"BEGIN"}
	for i := 0; i < 10; i++ {
		want = append(want, "SELECT c FROM sbtest1 WHERE id=?")
	}
	want = append(want, "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
		"SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c", "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
		"UPDATE sbtest1 SET k=k+1 WHERE id=?", "UPDATE sbtest1 SET c=? WHERE id=?", "DELETE FROM sbtest1 WHERE id=?",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)", "COMMIT")
	for i := range want {
		if ex[i] != "P:"+want[i] {
			t.Fatalf("statement %d is %q, want %q", i, ex[i], want[i])
		}
	}
	o := DefaultOptions()
	o.SkipTrx = true
	o.PSMode = "disable"
	wk, log = newTestWorker(t, "oltp_read_write", o, true)
	n = workload.Counts{}
	wk.Event(context.Background(), &n)
	if n.Other != 0 || len(log.Prepared) != 0 || !strings.HasPrefix(log.Snapshot()[0], "T:SELECT") {
		t.Fatalf("--skip-trx --db-ps-mode=disable: other %d, prepared %d, first %q", n.Other, len(log.Prepared), log.Snapshot()[0])
	}
}

func TestBulkInsertFlushesAt512KiB(t *testing.T) {
	wk, log := newTestWorker(t, "bulk_insert", DefaultOptions(), true)
	var n workload.Counts
	for i := 0; i < 100000; i++ {
		if err := wk.Event(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
	}
	wk.Close(context.Background(), &n)
	ex := log.Snapshot()
	if len(ex) < 2 || len(ex) > 6 || n.Writes != uint64(len(ex)) {
		t.Fatalf("100000 rows in %d INSERTs (%d writes counted)", len(ex), n.Writes)
	}
	for _, q := range ex {
		if len(q) > bulkPacketSize+len("T:")+32 || !strings.HasPrefix(q, "T:INSERT INTO sbtest1 VALUES(1,1)") && !strings.HasPrefix(q, "T:INSERT INTO sbtest1 VALUES(") {
			t.Fatalf("bad bulk statement of %d bytes: %.60q", len(q), q)
		}
	}
}

func TestOptionValidation(t *testing.T) {
	o := DefaultOptions()
	o.Tables = 2
	if _, err := New("select_random_points", o); err == nil {
		t.Fatal("select_random_points accepted --tables 2")
	}
	o = DefaultOptions()
	o.PSMode = "sometimes"
	if _, err := New("oltp_read_only", o); err == nil {
		t.Fatal("bad --db-ps-mode accepted")
	}
	if _, err := New("oltp_nothing", DefaultOptions()); err == nil {
		t.Fatal("unknown script accepted")
	}
}

// Boolean options read as sysbench reads them: on/off and true/false and
// 1/0, a bare flag meaning on; anything else is refused.
func TestBooleanOptionsReadLikeSysbench(t *testing.T) {
	for _, c := range []struct {
		args      []string
		ranges    bool
		skipTrx   bool
		shouldErr bool
	}{
		{nil, true, false, false},
		{[]string{"--range-selects=off", "--skip-trx=on"}, false, true, false},
		{[]string{"--range-selects=false", "--skip-trx"}, false, true, false},
		{[]string{"--range_selects=0", "--skip-trx=1"}, false, true, false},
		{[]string{"--range-selects=ON"}, true, false, false},
		{[]string{"--range-selects=maybe"}, true, false, true},
	} {
		var o Options
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetNormalizeFunc(func(_ *pflag.FlagSet, n string) pflag.NormalizedName {
			return pflag.NormalizedName(strings.ReplaceAll(n, "_", "-"))
		})
		fs.SetOutput(io.Discard)
		o.Bind(fs)
		err := fs.Parse(c.args)
		if (err != nil) != c.shouldErr {
			t.Errorf("%v: error %v, want error %v", c.args, err, c.shouldErr)
			continue
		}
		if o.RangeSelects != c.ranges || o.SkipTrx != c.skipTrx {
			t.Errorf("%v: range-selects %v skip-trx %v, want %v %v", c.args, o.RangeSelects, o.SkipTrx, c.ranges, c.skipTrx)
		}
	}
}

// BenchmarkEventPointSelect is the per-event path of oltp_point_select
// without network or server: the workload and the driver plumbing it uses
// (sql.Conn.Raw, the driver's statement and rows).
func BenchmarkEventPointSelect(b *testing.B) { benchEvents(b, "oltp_point_select") }

// BenchmarkEventReadWrite is one oltp_read_write transaction (20 statements).
func BenchmarkEventReadWrite(b *testing.B) { benchEvents(b, "oltp_read_write") }

func benchEvents(b *testing.B, script string) {
	wk, _ := newTestWorker(b, script, DefaultOptions(), false)
	var n workload.Counts
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := wk.Event(ctx, &n); err != nil {
			b.Fatal(err)
		}
	}
}

// A text statement the driver cannot send as text (driver.ErrSkip) is
// prepared for the one call, as database/sql would do, and counted the same.
func TestTextStatementFallsBackToPrepare(t *testing.T) {
	for _, c := range []struct {
		name          string
		reads, writes uint64
		want          string
	}{
		{"oltp_insert", 0, 1, "INSERT INTO sbtest1"},
		{"oltp_point_select", 1, 0, "SELECT c FROM sbtest1 WHERE id="},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.PSMode = "disable" // text mode: NewWorker prepares nothing
			wk, log := newTestWorker(t, c.name, o, true)
			log.NoText = true
			var n workload.Counts
			if err := wk.Event(context.Background(), &n); err != nil {
				t.Fatal(err)
			}
			if n.Reads != c.reads || n.Writes != c.writes {
				t.Fatalf("reads/writes %d/%d, want %d/%d", n.Reads, n.Writes, c.reads, c.writes)
			}
			ex := log.Snapshot()
			if len(log.Prepared) != 1 || !strings.HasPrefix(log.Prepared[0], c.want) || len(ex) != 1 || !strings.HasPrefix(ex[0], "P:"+c.want) {
				t.Fatalf("prepared %q, executed %q; want one prepared execution of %q", log.Prepared, ex, c.want)
			}
		})
	}
}
