package mysql

import (
	"context"
	"io"
	"strings"
	"testing"
)

// LOAD DATA's default format: tab-separated, newline-terminated, with
// backslash escapes for the three characters that would break a line. The
// driver reads with buffers of its own size: every size gives the same
// bytes, lines cut across reads and lines longer than the formatting room
// included.
func TestLineReaderWritesLoadDataFormat(t *testing.T) {
	long := strings.Repeat("0123456789", 300)
	rows := [][]any{{int64(1), "a\tb", "c\\d"}, {int64(-2), "line\nbreak", []byte("x")}, {int64(3), nil, ""}, {int64(4), long, []byte(long)}}
	want := "1\ta\\\tb\tc\\\\d\n-2\tline\\\nbreak\tx\n3\t\\N\t\n4\t" + long + "\t" + long + "\n"
	for _, size := range []int{1, 7, 100, roomForLine - 1, roomForLine, roomForLine + 500, 16 << 10} {
		i := 0
		r := &lineReader{ctx: context.Background(), rows: func() ([]any, bool) {
			if i == len(rows) {
				return nil, false
			}
			i++
			return rows[i-1], true
		}}
		var got []byte
		buf := make([]byte, size)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatalf("size %d: a read returned nothing before the end", size)
			}
		}
		if string(got) != want || r.n != int64(len(rows)) {
			t.Fatalf("size %d: got %q (%d lines), want %q", size, got, r.n, want)
		}
	}
}

// A cancelled load stops at the next read.
func TestLineReaderStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &lineReader{ctx: ctx, rows: func() ([]any, bool) { return []any{int64(1)}, true }}
	if _, err := r.Read(make([]byte, 64)); err != context.Canceled {
		t.Fatalf("read after cancel: %v", err)
	}
}

// The word-at-a-time check finds each of the three characters at every
// offset, in the words and in the tail, and passes sysbench's values.
func TestNeedsEscapeAtEveryOffset(t *testing.T) {
	clean := []byte("83868678472-24236418741-91297034745-60233960296-16112355911")
	if needsEscape(clean) {
		t.Fatal("digits and dashes need no escape")
	}
	for _, c := range []byte{'\\', '\t', '\n'} {
		for i := range clean {
			s := append([]byte(nil), clean...)
			s[i] = c
			if !needsEscape(s) {
				t.Fatalf("%q at offset %d of %d not found", c, i, len(s))
			}
			if got := string(appendEscapedBytes(nil, s)); got != string(appendEscaped(nil, string(s))) {
				t.Fatalf("escaped %q", got)
			}
		}
	}
	// Bytes next to the three in value (0x08, 0x0b, 0x5b, 0x5d, 0x89, 0xdc) are not them.
	if needsEscape([]byte{0x08, 0x0b, 0x5b, 0x5d, 0x89, 0xdc, 0x08, 0x0b, 0x5b, 0x5d, 0xff}) {
		t.Fatal("a neighbour byte was taken for an escape")
	}
}
