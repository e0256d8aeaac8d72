package postgres

import (
	"database/sql/driver"
	"testing"
)

// The workloads' values go out as text parameters, one per argument in
// order: an empty string is an empty value, not NULL; nil is NULL; a
// later, longer argument that grows the buffer leaves the earlier ones
// intact.
func TestDirectStmtEncodesTextParameters(t *testing.T) {
	s := &directStmt{buf: make([]byte, 0, 4)}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	args := []driver.NamedValue{
		{Ordinal: 1, Value: int64(-42)},
		{Ordinal: 2, Value: ""},
		{Ordinal: 3, Value: nil},
		{Ordinal: 4, Value: "café"},
		{Ordinal: 5, Value: long},
		{Ordinal: 6, Value: int64(9007199254740993)},
	}
	for round := 0; round < 2; round++ { // the buffers are reused
		if err := s.encode(args); err != nil {
			t.Fatal(err)
		}
		want := []string{"-42", "", "", "café", string(long), "9007199254740993"}
		if len(s.params) != len(want) {
			t.Fatalf("%d parameters, want %d", len(s.params), len(want))
		}
		for i, w := range want {
			if string(s.params[i]) != w {
				t.Errorf("parameter %d: %q, want %q", i+1, s.params[i], w)
			}
		}
		if s.params[1] == nil || s.params[2] != nil {
			t.Fatalf("empty string sent as NULL (%v) or nil not as NULL (%v)", s.params[1] == nil, s.params[2] != nil)
		}
	}
	if err := s.encode([]driver.NamedValue{{Ordinal: 1, Value: 1.5}}); err == nil {
		t.Fatal("a float64 was encoded: the workloads send none, and its text form is not checked")
	}
}
