package mongo

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"golang.org/x/sync/errgroup"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	mongodrv "github.com/dbduel/dbduel/engine/driver/mongo"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
)

// sysbench's string templates, as sysbench-mongodb's sysbenchString fills them.
const (
	cTemplate   = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"
	padTemplate = "###########-###########-###########-###########-###########"
)

func (w *mongoWorkload) database(db enginedriver.DB) (*mdb.Database, error) {
	return mongodrv.DatabaseOf(db, w.Name())
}

// shapeOf says whether a collection holds sysbench-mongodb's documents:
// "" when it does (or is empty), else what differs.
func shapeOf(ctx context.Context, coll *mdb.Collection) (string, error) {
	var doc bson.D
	err := coll.FindOne(ctx, bson.D{}).Decode(&doc)
	if errors.Is(err, mdb.ErrNoDocuments) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var keys []string
	for _, e := range doc {
		keys = append(keys, e.Key)
	}
	sort.Strings(keys)
	if fmt.Sprint(keys) != "[_id c k pad]" {
		return fmt.Sprintf("its documents have fields %v, not sysbench-mongodb's {_id, k, c, pad}", keys), nil
	}
	return "", nil
}

// hasKIndex says whether the collection has the secondary index on k.
func hasKIndex(ctx context.Context, coll *mdb.Collection) (bool, error) {
	cur, err := coll.Indexes().List(ctx)
	if err != nil {
		return false, err
	}
	var idx []struct {
		Key bson.D `bson:"key"`
	}
	if err := cur.All(ctx, &idx); err != nil {
		return false, err
	}
	for _, ix := range idx {
		if len(ix.Key) == 1 && ix.Key[0].Key == "k" {
			return true, nil
		}
	}
	return false, nil
}

func (w *mongoWorkload) Check(ctx context.Context, db enginedriver.DB, threads int) (workload.TableState, error) {
	d, err := w.database(db)
	if err != nil {
		return workload.TableState{}, err
	}
	names, err := d.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return workload.TableState{}, err
	}
	exists := map[string]bool{}
	for _, n := range names {
		exists[n] = true
	}
	present := 0
	for i := 1; i <= w.o.Tables; i++ {
		name := collectionName(i)
		if !exists[name] {
			continue
		}
		present++
		coll := d.Collection(name)
		if why, err := shapeOf(ctx, coll); err != nil {
			return workload.TableState{}, err
		} else if why != "" {
			return workload.TableState{Reason: fmt.Sprintf("collection %s exists but %s; dbduel will not touch it", name, why)}, nil
		}
		n, err := coll.CountDocuments(ctx, bson.D{})
		if err != nil {
			return workload.TableState{}, err
		}
		// The index on k is made first and the count is the mark of a
		// finished load: a load cut short leaves fewer documents.
		if n != int64(w.o.TableSize) {
			return workload.TableState{Reason: fmt.Sprintf("collection %s holds %d documents, not --table-size %d (a load cut short, or another size)", name, n, w.o.TableSize)}, nil
		}
		if ok, err := hasKIndex(ctx, coll); err != nil {
			return workload.TableState{}, err
		} else if !ok {
			return workload.TableState{Reason: fmt.Sprintf("collection %s has no index on k", name)}, nil
		}
	}
	switch {
	case present == 0:
		return workload.TableState{Missing: true, Objects: "sbtestN collections"}, nil
	case present < w.o.Tables:
		return workload.TableState{Reason: fmt.Sprintf("only %d of the %d sbtestN collections exist", present, w.o.Tables)}, nil
	}
	return workload.TableState{Reusable: true, Objects: "sbtestN collections"}, nil
}

// Prepare creates each collection with its index on k (first, as
// sysbench-mongodb's loader does) and loads it in batches of
// DocumentsPerInsert, the collections' id ranges split among the threads.
func (w *mongoWorkload) Prepare(ctx context.Context, db enginedriver.DB, threads int, progress func(workload.Progress)) error {
	d, err := w.database(db)
	if err != nil {
		return err
	}
	// Every name is checked before anything is dropped.
	for i := 1; i <= w.o.Tables; i++ {
		if why, err := shapeOf(ctx, d.Collection(collectionName(i))); err != nil {
			return err
		} else if why != "" {
			return fmt.Errorf("collection %s exists but %s; dbduel will not touch it", collectionName(i), why)
		}
	}
	for i := 1; i <= w.o.Tables; i++ {
		coll := d.Collection(collectionName(i))
		if err := coll.Drop(ctx); err != nil {
			return err
		}
		if err := d.CreateCollection(ctx, collectionName(i)); err != nil {
			return err
		}
		if _, err := coll.Indexes().CreateOne(ctx, mdb.IndexModel{Keys: bson.D{{Key: "k", Value: 1}}}); err != nil {
			return err
		}
	}
	type chunk struct{ table, from, to int }
	var chunks []chunk
	per := max(1, (w.o.TableSize+threads-1)/threads)
	if w.o.Tables >= threads {
		per = w.o.TableSize
	}
	for i := 1; i <= w.o.Tables; i++ {
		for from := 1; from <= w.o.TableSize; from += per {
			chunks = append(chunks, chunk{i, from, min(w.o.TableSize, from+per-1)})
		}
	}
	total := uint64(w.o.Tables * w.o.TableSize)
	var done uint64
	var mu sync.Mutex
	report := func(n int, table string) {
		mu.Lock() // the count and its report in one order: progress never goes back
		defer mu.Unlock()
		done += uint64(n)
		if progress != nil {
			progress(workload.Progress{Rows: done, TotalRows: total, Table: table})
		}
	}
	work := make(chan chunk)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(work)
		for _, c := range chunks {
			select {
			case work <- c:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for t := 0; t < threads; t++ {
		r := sbrand.New(sbrand.DefaultParams(), w.seed+uint64(t)*0x9e3779b97f4a7c15)
		g.Go(func() error {
			for c := range work {
				coll := d.Collection(collectionName(c.table))
				batch := make([]any, 0, w.o.DocumentsPerInsert)
				for id := c.from; id <= c.to; id++ {
					batch = append(batch, w.document(r, id))
					if len(batch) == w.o.DocumentsPerInsert || id == c.to {
						if _, err := coll.InsertMany(gctx, batch); err != nil {
							return fmt.Errorf("load %s: %v", collectionName(c.table), err)
						}
						report(len(batch), collectionName(c.table))
						batch = batch[:0]
					}
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// document is sysbench-mongodb's document for id: k uniform in
// [1, table-size], c and pad from sysbench's digit templates.
func (w *mongoWorkload) document(r *sbrand.Rand, id int) bson.D {
	return bson.D{
		{Key: "_id", Value: int32(id)},
		{Key: "k", Value: int32(r.Uniform(1, uint32(w.o.TableSize)))},
		{Key: "c", Value: r.String(cTemplate)},
		{Key: "pad", Value: r.String(padTemplate)},
	}
}

// Cleanup drops the run's sbtestN collections (1..--tables) that have
// sysbench-mongodb's shape, and no other.
func (w *mongoWorkload) Cleanup(ctx context.Context, db enginedriver.DB, threads int) ([]string, error) {
	d, err := w.database(db)
	if err != nil {
		return nil, err
	}
	names, err := d.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	for _, n := range names {
		exists[n] = true
	}
	var dropped []string
	for i := 1; i <= w.o.Tables; i++ { // the run's collections, as sysbench's cleanup
		n := collectionName(i)
		if !exists[n] {
			continue
		}
		coll := d.Collection(n)
		if why, err := shapeOf(ctx, coll); err != nil {
			return dropped, err
		} else if why != "" {
			continue // another program's collection: never ours to drop
		}
		if err := coll.Drop(ctx); err != nil {
			return dropped, err
		}
		dropped = append(dropped, n)
	}
	return dropped, nil
}
