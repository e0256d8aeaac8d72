package cast

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The file is asciicast v2: a header object, then [time, "o", text]
// events whose times never go back.
func TestWriterWritesAsciicastV2(t *testing.T) {
	var b strings.Builder
	c, err := New(&b, 80, 24, "dbduel replay")
	if err != nil {
		t.Fatal(err)
	}
	clock := c.start
	c.now = func() time.Time { clock = clock.Add(150 * time.Millisecond); return clock }
	for _, s := range []string{"\x1b[2J", "dbduel · oltp_read_only", "verdict: c is slower"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Scan()
	var h Header
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Version != 2 || h.Width != 80 || h.Height != 24 {
		t.Fatalf("header %q: %+v %v", sc.Text(), h, err)
	}
	last, n := -1.0, 0
	for sc.Scan() {
		var ev []any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || len(ev) != 3 || ev[1] != "o" {
			t.Fatalf("event %q: %v", sc.Text(), err)
		}
		at := ev[0].(float64)
		if at < last {
			t.Fatalf("time went back: %v after %v", at, last)
		}
		last, n = at, n+1
	}
	if n != 3 || last < 0.44 {
		t.Fatalf("%d events, last at %v", n, last)
	}
}
