package main

import (
	"bytes"
	"encoding/binary"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// buildMsg builds an OP_MSG body: flags, a kind-0 body section and, when
// docs is given, a kind-1 sequence named id.
func buildMsg(t *testing.T, flags uint32, body bson.D, id string, docs ...bson.D) []byte {
	t.Helper()
	out := binary.LittleEndian.AppendUint32(nil, flags)
	raw, err := bson.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	out = append(append(out, 0), raw...)
	if len(docs) > 0 {
		var seq []byte
		seq = append(append(seq, id...), 0)
		for _, d := range docs {
			r, _ := bson.Marshal(d)
			seq = append(seq, r...)
		}
		out = append(out, 1)
		out = binary.LittleEndian.AppendUint32(out, uint32(4+len(seq)))
		out = append(out, seq...)
	}
	if flags&checksumPresent != 0 {
		out = append(out, 0, 0, 0, 0)
	}
	return out
}

func TestCountsAsMongodDoes(t *testing.T) {
	var o opCounters
	doc := bson.D{{Key: "x", Value: 1}}
	msgs := [][]byte{
		buildMsg(t, 0, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "d"}}, "documents", doc, doc, doc),
		buildMsg(t, 0, bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{doc, doc}}}, ""),
		buildMsg(t, checksumPresent, bson.D{{Key: "update", Value: "c"}}, "updates", doc, doc),
		buildMsg(t, 0, bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{doc}}}, ""),
		buildMsg(t, 0, bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: doc}}, ""),
		buildMsg(t, 0, bson.D{{Key: "getMore", Value: int64(1)}}, ""),
		buildMsg(t, 0, bson.D{{Key: "aggregate", Value: "c"}}, ""),
		buildMsg(t, 0, bson.D{{Key: "distinct", Value: "c"}}, ""),
	}
	for _, m := range msgs {
		c, err := parseMsg(m)
		if err != nil {
			t.Fatal(err)
		}
		o.count(c)
	}
	got := [6]int64{o.insert.Load(), o.query.Load(), o.update.Load(), o.delete.Load(), o.getmore.Load(), o.command.Load()}
	if got != [6]int64{5, 1, 2, 1, 1, 2} {
		t.Fatalf("insert, query, update, delete, getmore, command = %v, want [5 1 2 1 1 2]", got)
	}
	if _, err := parseMsg([]byte{0, 0, 0, 0, 0, 200, 0, 0, 0}); err == nil {
		t.Fatal("a section longer than the message was accepted")
	}
}

func TestServerStatusGetsOpcounters(t *testing.T) {
	var o opCounters
	o.query.Add(7)
	reply := buildMsg(t, checksumPresent, bson.D{{Key: "version", Value: "7.0.42"}, {Key: "opcounters", Value: bson.D{}}, {Key: "ok", Value: 1.0}}, "")
	body, err := withOpcounters(reply, o.doc())
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(body)&checksumPresent != 0 {
		t.Fatal("the checksum flag stayed on a changed body")
	}
	c, err := parseMsg(body)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Version    string           `bson:"version"`
		Opcounters map[string]int64 `bson:"opcounters"`
		OK         float64          `bson:"ok"`
	}
	if err := bson.Unmarshal(c.body, &st); err != nil {
		t.Fatal(err)
	}
	if st.Version != "7.0.42" || st.OK != 1 || st.Opcounters["query"] != 7 || len(st.Opcounters) != 6 {
		t.Fatalf("patched reply %+v", st)
	}
	// A whole message survives a read and a write unchanged.
	m := message{requestID: 5, responseTo: 4, opCode: opMsg, body: body}
	back, err := readMessage(bytes.NewReader(m.bytes()))
	if err != nil || back.requestID != 5 || back.responseTo != 4 || !bytes.Equal(back.body, body) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}
