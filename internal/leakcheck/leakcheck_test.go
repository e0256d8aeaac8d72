package leakcheck

import "testing"

// Only goroutines running dbduel's code count, this package's excepted.
func TestOwnInFindsDbduelGoroutines(t *testing.T) {
	dump := "goroutine 1 [running]:\nmain.main()\n\n" +
		"goroutine 7 [chan receive]:\ngithub.com/dbduel/dbduel/engine.(*oneRun).loop(...)\n\n" +
		"goroutine 9 [select]:\nnet/http.(*persistConn).readLoop(...)\n\n" +
		"goroutine 3 [running]:\ngithub.com/dbduel/dbduel/internal/leakcheck.own()\n"
	got := ownIn(dump)
	if len(got) != 1 || got[0] != "goroutine 7 [chan receive]:\ngithub.com/dbduel/dbduel/engine.(*oneRun).loop(...)" {
		t.Fatalf("got %q", got)
	}
}
