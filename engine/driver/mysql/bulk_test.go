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
