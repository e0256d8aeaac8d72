package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The counting front: FerretDB reports no opcounters, so this program
// counts what it serves on its own listener, by MongoDB's rules, and
// answers serverStatus with an opcounters document of those counts. The
// honesty check then reads the same field it reads on a real mongod.

const (
	opQuery      = 2004
	opCompressed = 2012
	opMsg        = 2013

	checksumPresent = 1 << 0
	maxMessageBytes = 48 << 20 // MongoDB's maxMessageSizeBytes
)

// opCounters are MongoDB's serverStatus.opcounters: inserts and updates
// and deletes per document or statement, finds as queries, getMores, and
// every other command.
type opCounters struct {
	insert, query, update, delete, getmore, command atomic.Int64
}

func (o *opCounters) doc() bson.D {
	return bson.D{
		{Key: "insert", Value: o.insert.Load()},
		{Key: "query", Value: o.query.Load()},
		{Key: "update", Value: o.update.Load()},
		{Key: "delete", Value: o.delete.Load()},
		{Key: "getmore", Value: o.getmore.Load()},
		{Key: "command", Value: o.command.Load()},
	}
}

// message is one wire-protocol message: its 16-byte header and body.
type message struct {
	length, requestID, responseTo, opCode int32
	body                                  []byte
}

func readMessage(r io.Reader) (message, error) {
	var h [16]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return message{}, err
	}
	m := message{
		length:     int32(binary.LittleEndian.Uint32(h[0:])),
		requestID:  int32(binary.LittleEndian.Uint32(h[4:])),
		responseTo: int32(binary.LittleEndian.Uint32(h[8:])),
		opCode:     int32(binary.LittleEndian.Uint32(h[12:])),
	}
	if m.length < 16 || m.length > maxMessageBytes {
		return message{}, fmt.Errorf("message length %d out of range", m.length)
	}
	m.body = make([]byte, m.length-16)
	if _, err := io.ReadFull(r, m.body); err != nil {
		return message{}, err
	}
	return m, nil
}

func (m message) bytes() []byte {
	out := make([]byte, 16, 16+len(m.body))
	binary.LittleEndian.PutUint32(out[0:], uint32(16+len(m.body)))
	binary.LittleEndian.PutUint32(out[4:], uint32(m.requestID))
	binary.LittleEndian.PutUint32(out[8:], uint32(m.responseTo))
	binary.LittleEndian.PutUint32(out[12:], uint32(m.opCode))
	return append(out, m.body...)
}

// command is an OP_MSG's body document and its document sequences
// (kind-1 sections, e.g. an insert's "documents").
type command struct {
	body      bson.Raw
	sequences map[string]int // identifier -> number of documents
}

func parseMsg(body []byte) (command, error) {
	if len(body) < 5 {
		return command{}, errors.New("OP_MSG too short")
	}
	flags := binary.LittleEndian.Uint32(body)
	rest := body[4:]
	if flags&checksumPresent != 0 {
		if len(rest) < 4 {
			return command{}, errors.New("OP_MSG checksum missing")
		}
		rest = rest[:len(rest)-4]
	}
	c := command{sequences: map[string]int{}}
	for len(rest) > 0 {
		kind := rest[0]
		rest = rest[1:]
		if len(rest) < 4 {
			return command{}, errors.New("OP_MSG section truncated")
		}
		size := int(binary.LittleEndian.Uint32(rest))
		if size < 5 || size > len(rest) {
			return command{}, errors.New("OP_MSG section size out of range")
		}
		switch kind {
		case 0:
			c.body = bson.Raw(rest[:size])
		case 1:
			seq := rest[4:size]
			i := 0
			for i < len(seq) && seq[i] != 0 {
				i++
			}
			if i == len(seq) {
				return command{}, errors.New("OP_MSG sequence identifier unterminated")
			}
			id := string(seq[:i])
			docs := seq[i+1:]
			for len(docs) >= 4 {
				n := int(binary.LittleEndian.Uint32(docs))
				if n < 5 || n > len(docs) {
					return command{}, errors.New("OP_MSG sequence document out of range")
				}
				c.sequences[id]++
				docs = docs[n:]
			}
		default:
			return command{}, fmt.Errorf("OP_MSG section kind %d", kind)
		}
		rest = rest[size:]
	}
	if c.body == nil {
		return command{}, errors.New("OP_MSG without a body section")
	}
	return c, nil
}

// name is the command's name: its body's first key.
func (c command) name() string {
	e, err := c.body.IndexErr(0)
	if err != nil {
		return ""
	}
	return e.Key()
}

// items is how many documents or statements the command carries in the
// array field (an OP_MSG may carry them in a sequence instead).
func (c command) items(field string) int64 {
	if n, ok := c.sequences[field]; ok {
		return int64(n)
	}
	v, err := c.body.LookupErr(field)
	if err != nil {
		return 0
	}
	arr, ok := v.ArrayOK()
	if !ok {
		return 0
	}
	vals, err := arr.Values()
	if err != nil {
		return 0
	}
	return int64(len(vals))
}

// count adds one request to the counters as mongod counts it.
func (o *opCounters) count(c command) {
	switch c.name() {
	case "insert":
		o.insert.Add(c.items("documents"))
	case "update":
		o.update.Add(c.items("updates"))
	case "delete":
		o.delete.Add(c.items("deletes"))
	case "find":
		o.query.Add(1)
	case "getMore":
		o.getmore.Add(1)
	default:
		o.command.Add(1)
	}
}

// withOpcounters rewrites an OP_MSG reply's body to hold counts as its
// opcounters (any checksum is dropped: the body changed).
func withOpcounters(body []byte, counts bson.D) ([]byte, error) {
	c, err := parseMsg(body)
	if err != nil {
		return nil, err
	}
	var doc bson.D
	if err := bson.Unmarshal(c.body, &doc); err != nil {
		return nil, err
	}
	replaced := false
	for i := range doc {
		if doc[i].Key == "opcounters" {
			doc[i].Value, replaced = counts, true
		}
	}
	if !replaced {
		doc = append(doc, bson.E{Key: "opcounters", Value: counts})
	}
	raw, err := bson.Marshal(doc)
	if err != nil {
		return nil, err
	}
	flags := binary.LittleEndian.Uint32(body) &^ checksumPresent
	out := binary.LittleEndian.AppendUint32(nil, flags)
	out = append(out, 0)
	return append(out, raw...), nil
}

// front relays one client connection to the server behind it, counting
// requests and patching serverStatus replies.
type front struct {
	counts *opCounters
	dial   func() (net.Conn, error)
}

func (f *front) serve(client net.Conn) {
	defer client.Close()
	server, err := f.dial()
	if err != nil {
		return
	}
	defer server.Close()
	var mu sync.Mutex
	statusReqs := map[int32]bool{} // request ids of serverStatus commands in flight
	done := make(chan struct{}, 2)
	go func() { // client -> server
		defer func() { done <- struct{}{} }()
		for {
			m, err := readMessage(client)
			if err != nil {
				return
			}
			switch m.opCode {
			case opMsg:
				if c, err := parseMsg(m.body); err == nil {
					f.counts.count(c)
					if c.name() == "serverStatus" {
						mu.Lock()
						statusReqs[m.requestID] = true
						mu.Unlock()
					}
				}
			case opQuery, opCompressed:
				f.counts.command.Add(1) // the legacy handshake; compression is never negotiated here
			}
			if _, err := server.Write(m.bytes()); err != nil {
				return
			}
		}
	}()
	go func() { // server -> client
		defer func() { done <- struct{}{} }()
		for {
			m, err := readMessage(server)
			if err != nil {
				return
			}
			mu.Lock()
			patch := statusReqs[m.responseTo]
			delete(statusReqs, m.responseTo)
			mu.Unlock()
			if patch && m.opCode == opMsg {
				if body, err := withOpcounters(m.body, f.counts.doc()); err == nil {
					m.body = body
				}
			}
			if _, err := client.Write(m.bytes()); err != nil {
				return
			}
		}
	}()
	<-done // either side gone: closing both ends the other copier
}
