package mongo

import (
	"context"
	"sort"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	mongodrv "github.com/dbduel/dbduel/engine/driver/mongo"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/internal/testmongo"
)

// recorder keeps the commands a client sent, by name.
type recorder struct {
	mu   sync.Mutex
	cmds []bson.Raw
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.cmds {
		out = append(out, c.Index(0).Key())
	}
	return out
}

// recConn is a thread's handle on a client that records its commands.
type recConn struct{ db *mdb.Database }

func (c recConn) Database() *mdb.Database { return c.db }
func (recConn) Discard()                  {}
func (recConn) Close() error              { return nil }

func TestLoadRunAndCleanupOnTheTestServer(t *testing.T) {
	uri := testmongo.Start(t)
	ctx := context.Background()
	ep, err := mongodrv.ParseURL(uri)
	if err != nil {
		t.Fatal(err)
	}
	db, err := mongodrv.Open(ctx, ep, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	o := Defaults()
	o.Tables, o.TableSize, o.RandSeed, o.DocumentsPerInsert = 2, 500, 7, 120
	wl, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := wl.Check(ctx, db, 3); err != nil || !st.Missing {
		t.Fatalf("empty database: %+v %v", st, err)
	}
	var last workload.Progress
	if err := wl.Prepare(ctx, db, 3, func(p workload.Progress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if last.Rows != 1000 || last.TotalRows != 1000 {
		t.Fatalf("final progress %+v, want 1000 of 1000", last)
	}
	for i := 1; i <= 2; i++ {
		coll := db.Database().Collection(collectionName(i))
		n, err := coll.CountDocuments(ctx, bson.D{})
		if err != nil || n != 500 {
			t.Fatalf("%s: %d documents (%v), want 500", collectionName(i), n, err)
		}
		var doc struct {
			ID  int32  `bson:"_id"`
			K   int32  `bson:"k"`
			C   string `bson:"c"`
			Pad string `bson:"pad"`
		}
		if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: int32(250)}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if doc.K < 1 || doc.K > 500 || len(doc.C) != 119 || len(doc.Pad) != 59 || doc.C[11] != '-' {
			t.Fatalf("document %+v is not sysbench-mongodb's shape", doc)
		}
		if ok, err := hasKIndex(ctx, coll); err != nil || !ok {
			t.Fatalf("%s: no index on k (%v)", collectionName(i), err)
		}
	}
	if st, err := wl.Check(ctx, db, 3); err != nil || !st.Reusable {
		t.Fatalf("after prepare: %+v %v", st, err)
	}

	// One transaction of each workload, commands recorded as the server got them.
	rec := &recorder{}
	mon := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		rec.mu.Lock()
		rec.cmds = append(rec.cmds, e.Command)
		rec.mu.Unlock()
	}}
	client, err := mdb.Connect(options.Client().ApplyURI(uri).SetMonitor(mon))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	conn := recConn{db: client.Database(ep.DB)}
	for _, readOnly := range []bool{true, false} {
		o.ReadOnly = readOnly
		w, _ := New(o)
		wk, err := w.NewWorker(ctx, conn, 0, 1, 11)
		if err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		rec.cmds = nil
		rec.mu.Unlock()
		var c workload.Counts
		if err := wk.Event(ctx, &c); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, n := range rec.names() {
			got[n]++
		}
		want := map[string]int{"find": 12, "aggregate": 1, "distinct": 1}
		if !readOnly {
			want["update"], want["delete"], want["insert"] = 2, 1, 1
		}
		if len(got) != len(want) {
			t.Fatalf("read-only %v: commands %v, want %v", readOnly, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("read-only %v: commands %v, want %v", readOnly, got, want)
			}
		}
		total := uint64(0)
		for _, v := range want {
			total += uint64(v)
		}
		if c.Total() != total || c.Reads != 14 {
			t.Fatalf("read-only %v: counts %+v, want %d operations, 14 reads", readOnly, c, total)
		}
		// The sorted range sorts on c; the point finds project c only.
		for _, cmd := range rec.cmds {
			if cmd.Index(0).Key() == "find" {
				if s, err := cmd.LookupErr("sort"); err == nil && s.Document().Index(0).Key() != "c" {
					t.Fatalf("sorted range sorts on %v", s)
				}
			}
		}
	}

	// A load cut short (fewer documents than --table-size) is not reused.
	if _, err := db.Database().Collection("sbtest2").DeleteOne(ctx, bson.D{{Key: "_id", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	if st, err := wl.Check(ctx, db, 3); err != nil || st.Reusable || st.Reason == "" {
		t.Fatalf("499 of 500 documents: %+v %v", st, err)
	}

	// A foreign collection of a workload name is refused and never dropped.
	if _, err := db.Database().Collection("sbtest3").InsertOne(ctx, bson.D{{Key: "owner", Value: "someone else"}}); err != nil {
		t.Fatal(err)
	}
	o.Tables = 3
	w3, _ := New(o)
	if st, err := w3.Check(ctx, db, 1); err != nil || st.Reusable || st.Missing || st.Reason == "" {
		t.Fatalf("foreign sbtest3: %+v %v", st, err)
	}
	if err := w3.Prepare(ctx, db, 1, nil); err == nil {
		t.Fatal("prepare over a foreign sbtest3 must refuse")
	}
	if n, _ := db.Database().Collection("sbtest1").CountDocuments(ctx, bson.D{}); n != 500 {
		t.Fatalf("a refused prepare dropped sbtest1 (%d documents left)", n)
	}
	dropped, err := w3.Cleanup(ctx, db, 1)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dropped)
	if len(dropped) != 2 || dropped[0] != "sbtest1" || dropped[1] != "sbtest2" {
		t.Fatalf("dropped %v, want sbtest1 and sbtest2 only", dropped)
	}
	names, _ := db.Database().ListCollectionNames(ctx, bson.D{})
	if len(names) != 1 || names[0] != "sbtest3" {
		t.Fatalf("left %v, want the foreign sbtest3", names)
	}
}
