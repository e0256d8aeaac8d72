package mongo

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/dbduel/dbduel/engine/driver"
)

func TestParseURL(t *testing.T) {
	ep, err := ParseURL("mongodb://root:s3cr%40t@127.0.0.1:27018/bench?authSource=admin")
	if err != nil {
		t.Fatal(err)
	}
	want := driver.Endpoint{Protocol: "mongodb", Host: "127.0.0.1", Port: 27018, User: "root", Password: "s3cr@t", DB: "bench", Params: "authSource=admin"}
	if ep != want {
		t.Fatalf("got %+v, want %+v", ep, want)
	}
	ep, err = ParseURL("mongodb://127.0.0.1")
	if err != nil || ep.Port != 27017 || ep.DB != "sbtest" || ep.User != "" {
		t.Fatalf("defaults: %+v %v", ep, err)
	}
	if got := ep.URL(); got != "mongodb://127.0.0.1:27017/sbtest" {
		t.Fatalf("URL %q", got)
	}
	for _, bad := range []string{"mongodb://u:pw@a:1,b:2/x", "mongodb://u:pw@:1/x", "mongodb://u:pw@h:99999/x", "mysql://u:pw@h/x"} {
		_, err := ParseURL(bad)
		if err == nil {
			t.Errorf("%s: accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: password in %q", bad, err)
		}
	}
}

func TestRedactedEndpoint(t *testing.T) {
	ep := driver.Endpoint{Protocol: Protocol, Host: "127.0.0.1", Port: 1, User: "root", Password: "hunter2", DB: "sbtest", Params: "authMechanism=PLAIN"}
	if r := ep.Redacted(); strings.Contains(r, "hunter2") || !strings.Contains(r, "root:***@") || !strings.Contains(r, "authMechanism=PLAIN") {
		t.Fatalf("redacted %q", r)
	}
	withParam := withParam(ep, "authMechanism", "SCRAM-SHA-256")
	if withParam.Params != "authMechanism=SCRAM-SHA-256" {
		t.Fatalf("params %q", withParam.Params)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want driver.Action
	}{
		{"network", mdb.CommandError{Code: 6, Message: "connection reset", Labels: []string{"NetworkError"}}, driver.Reconnect},
		{"disconnected", mdb.ErrClientDisconnected, driver.Reconnect},
		{"retryable write", mdb.CommandError{Code: 91, Message: "shutting down", Labels: []string{"RetryableWriteError"}}, driver.Restart},
		{"duplicate key", mdb.WriteException{WriteErrors: []mdb.WriteError{{Code: 11000, Message: "E11000 duplicate key"}}}, driver.Restart},
		{"write conflict", mdb.CommandError{Code: 112, Message: "WriteConflict"}, driver.Restart},
		{"bad command", mdb.CommandError{Code: 2, Message: "BadValue: mongodb://root:hunter2@h/x is bad\nsecond line"}, driver.Fatal},
		{"other", errors.New("something else"), driver.Fatal},
	}
	for _, c := range cases {
		f := Classify(c.err)
		if f.Action != c.want {
			t.Errorf("%s: action %v, want %v", c.name, f.Action, c.want)
		}
		if f.Action == driver.Fatal {
			if f.Err == nil || strings.Contains(f.Err.Error(), "hunter2") || strings.Contains(f.Err.Error(), "\n") {
				t.Errorf("%s: fatal error %v: want one line, no password", c.name, f.Err)
			}
		}
	}
	if f := Classify(mdb.WriteException{WriteErrors: []mdb.WriteError{{Code: 11000}}}); f.Code != "11000" {
		t.Errorf("duplicate key code %q", f.Code)
	}
}

func TestSumOpcounters(t *testing.T) {
	n, ok := SumOpcounters(map[string]any{"insert": int64(3), "query": int32(10), "update": int64(2), "delete": int64(1),
		"getmore": int64(0), "command": float64(4), "deprecated": int64(1000)})
	if !ok || n != 20 {
		t.Fatalf("sum %d %v, want 20 (six counters, nothing else)", n, ok)
	}
	if _, ok := SumOpcounters(map[string]any{}); ok {
		t.Fatal("no opcounters must not read as zero operations")
	}
	if _, ok := SumOpcounters(nil); ok {
		t.Fatal("a missing opcounters document must not read as zero operations")
	}
}

func TestVersionSaysFerretDB(t *testing.T) {
	if v := Version(bson.M{"version": "7.0.42", "ferretdbVersion": "v1.24.2"}); v != "7.0.42 (FerretDB v1.24.2)" {
		t.Fatalf("version %q", v)
	}
	if v := Version(bson.M{"version": "7.0.42", "ferretdbVersion": ""}); v != "7.0.42 (FerretDB unknown)" {
		t.Fatalf("version %q", v)
	}
	if v := Version(bson.M{"version": "5.0.2"}); v != "5.0.2" {
		t.Fatalf("version %q", v)
	}
}

// msgWith is an OP_MSG carrying body as its kind-0 section.
func msgWith(t *testing.T, body bson.D) []byte {
	t.Helper()
	doc, err := bson.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 16, 21+len(doc))
	binary.LittleEndian.PutUint32(p[12:], opMsg)
	p = append(p, 0, 0, 0, 0, 0) // flags, section kind 0
	p = append(p, doc...)
	binary.LittleEndian.PutUint32(p, uint32(len(p)))
	return p
}

// The driver's own commands are told from the workload's by name: they
// come off the server's count; the workload's stay in it.
func TestOwnCommands(t *testing.T) {
	for _, name := range []string{"hello", "isMaster", "saslStart", "saslContinue", "ping", "endSessions", "buildInfo"} {
		if !isOwnCommand(msgWith(t, bson.D{{Key: name, Value: 1}, {Key: "$db", Value: "admin"}})) {
			t.Errorf("%s not taken as the driver's own", name)
		}
	}
	for _, name := range []string{"find", "aggregate", "distinct", "insert", "update", "delete", "getMore", "serverStatus"} {
		if isOwnCommand(msgWith(t, bson.D{{Key: name, Value: "sbtest1"}})) {
			t.Errorf("%s taken as the driver's own", name)
		}
	}
	legacy := make([]byte, 20)
	binary.LittleEndian.PutUint32(legacy[12:], opQuery)
	if !isOwnCommand(legacy) || isOwnCommand([]byte{1, 2, 3}) {
		t.Error("legacy handshake or short write misread")
	}
	// A pool dialled through the counting dialer counts what it writes,
	// and an own command is in flight until its reply has been read.
	var own selfCount
	a, b := net.Pipe()
	defer b.Close()
	c := &countingConn{Conn: a, own: &own, pending: map[int32]bool{}}
	hello := msgWith(t, bson.D{{Key: "hello", Value: 1}})
	binary.LittleEndian.PutUint32(hello[4:], 41) // its request id
	go io.Copy(io.Discard, b)
	c.Write(hello)
	c.Write(msgWith(t, bson.D{{Key: "find", Value: "sbtest1"}}))
	if own.sent.Load() != 1 || own.inFlight.Load() != 1 {
		t.Fatalf("own commands %d, in flight %d; want 1 and 1", own.sent.Load(), own.inFlight.Load())
	}
	// Replies read in pieces: another request's, then the hello's.
	reply := func(to int32) []byte {
		r := msgWith(t, bson.D{{Key: "ok", Value: 1}})
		binary.LittleEndian.PutUint32(r[8:], uint32(to))
		return r
	}
	stream := append(reply(7), reply(41)...)
	for i := 0; i < len(stream); i += 5 {
		c.scan(stream[i:min(i+5, len(stream))])
		if settled := own.inFlight.Load() == 0; settled != (i+5 >= len(reply(7))+16) {
			t.Fatalf("after %d bytes: in flight %d", i+5, own.inFlight.Load())
		}
	}
}
