package mongo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	enginedriver "github.com/dbduel/dbduel/engine/driver"
	mongodrv "github.com/dbduel/dbduel/engine/driver/mongo"
	"github.com/dbduel/dbduel/engine/workload"
	"github.com/dbduel/dbduel/engine/workload/sbrand"
)

type worker struct {
	w    *mongoWorkload
	db   *mdb.Database
	life context.Context // the pool's: cancelled when the run must end at once
	r    *sbrand.Rand
	proj bson.D // {c: 1, _id: 0}
}

func (w *mongoWorkload) NewWorker(ctx context.Context, conn enginedriver.Conn, thread, threads int, seed uint64) (workload.Worker, error) {
	db, err := mongodrv.DatabaseOf(conn, w.Name())
	if err != nil {
		return nil, err
	}
	if seed == 0 {
		seed = w.seed
	}
	return &worker{w: w, db: db, life: mongodrv.ContextOf(conn), r: sbrand.New(sbrand.DefaultParams(), seed+uint64(thread)*0x9e3779b97f4a7c15),
		proj: bson.D{{Key: "c", Value: 1}, {Key: "_id", Value: 0}}}, nil
}

// id is sysbench-mongodb's rand.nextInt(n)+1: uniform over the documents.
func (wk *worker) id() int32 { return int32(wk.r.Uniform(1, uint32(wk.w.o.TableSize))) }

func (wk *worker) idRange() bson.D {
	start := wk.id()
	return bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: start}, {Key: "$lte", Value: start + int32(wk.w.o.RangeSize) - 1}}}}
}

// Event is one sysbench-mongodb transaction on a collection drawn
// uniformly: reads are the finds, the aggregation and the distinct; writes
// the updates, deletes and inserts that changed a document; an update or
// delete that matched none counts as other (as sysbench counts DML that
// affected no row).
func (wk *worker) Event(_ context.Context, c *workload.Counts) error {
	ctx := wk.life // the engine runs events without a deadline
	o := wk.w.o
	coll := wk.db.Collection(collectionName(int(wk.r.Uniform(1, uint32(o.Tables)))))
	for range o.PointSelects {
		var doc bson.Raw
		err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: wk.id()}}, options.FindOne().SetProjection(wk.proj)).Decode(&doc)
		if err != nil && err != mdb.ErrNoDocuments {
			return err
		}
		c.Reads++
	}
	for range o.SimpleRanges {
		if err := drain(ctx)(coll.Find(ctx, wk.idRange(), options.Find().SetProjection(wk.proj))); err != nil {
			return err
		}
		c.Reads++
	}
	for range o.SumRanges {
		pipeline := mdb.Pipeline{
			{{Key: "$match", Value: wk.idRange()}},
			{{Key: "$project", Value: bson.D{{Key: "k", Value: 1}, {Key: "_id", Value: 0}}}},
			{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "average", Value: bson.D{{Key: "$sum", Value: "$k"}}}}}},
		}
		if err := drain(ctx)(coll.Aggregate(ctx, pipeline)); err != nil {
			return err
		}
		c.Reads++
	}
	for range o.OrderRanges {
		if err := drain(ctx)(coll.Find(ctx, wk.idRange(), options.Find().SetProjection(wk.proj).SetSort(bson.D{{Key: "c", Value: 1}}))); err != nil {
			return err
		}
		c.Reads++
	}
	for range o.DistinctRanges {
		if err := coll.Distinct(ctx, "c", wk.idRange()).Err(); err != nil {
			return err
		}
		c.Reads++
	}
	for range o.IndexUpdates {
		res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: wk.id()}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "k", Value: 1}}}})
		if err != nil {
			return err
		}
		countWrite(c, res.MatchedCount)
	}
	for range o.NonIndexUpdates {
		res, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: wk.id()}}, bson.D{{Key: "$set", Value: bson.D{{Key: "c", Value: wk.r.String(cTemplate)}}}})
		if err != nil {
			return err
		}
		countWrite(c, res.MatchedCount)
	}
	for range o.DeleteInserts {
		id := wk.id()
		res, err := coll.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
		if err != nil {
			return err
		}
		countWrite(c, res.DeletedCount)
		doc := bson.D{{Key: "_id", Value: id}, {Key: "k", Value: wk.id()}, {Key: "c", Value: wk.r.String(cTemplate)}, {Key: "pad", Value: wk.r.String(padTemplate)}}
		if _, err := coll.InsertOne(ctx, doc); err != nil {
			return err
		}
		c.Writes++
	}
	return nil
}

func countWrite(c *workload.Counts, changed int64) {
	if changed > 0 {
		c.Writes++
	} else {
		c.Other++
	}
}

// drain reads a cursor to its end, as sysbench-mongodb iterates each one.
func drain(ctx context.Context) func(*mdb.Cursor, error) error {
	return func(cur *mdb.Cursor, err error) error {
		if err != nil {
			return err
		}
		defer cur.Close(context.WithoutCancel(ctx))
		for cur.Next(ctx) {
		}
		return cur.Err()
	}
}

func (wk *worker) Close(context.Context, *workload.Counts) error { return nil }
