package mysql

import (
	"io"
	"testing"
)

// LOAD DATA's default format: tab-separated, newline-terminated, with
// backslash escapes for the three characters that would break a line.
func TestWriteRowsEscapesLoadDataFormat(t *testing.T) {
	rows := [][]any{{int64(1), "a\tb", "c\\d"}, {int64(-2), "line\nbreak", []byte("x")}, {int64(3), nil, ""}}
	i := 0
	pr, pw := io.Pipe()
	done := make(chan int64, 1)
	go func() {
		done <- writeRows(pw, func() ([]any, bool) {
			if i == len(rows) {
				return nil, false
			}
			i++
			return rows[i-1], true
		})
	}()
	data, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	want := "1\ta\\\tb\tc\\\\d\n-2\tline\\\nbreak\tx\n3\t\\N\t\n"
	if string(data) != want || <-done != 3 {
		t.Fatalf("got %q, want %q", data, want)
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
