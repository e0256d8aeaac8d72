package driver

import "testing"

func TestOneLineKeepsTheWholeMessage(t *testing.T) {
	msg := "server exited during start-up (exit status 1): taskset: failed to set pid's affinity:\nInvalid argument"
	if got := OneLine(msg); got != "server exited during start-up (exit status 1): taskset: failed to set pid's affinity: Invalid argument" {
		t.Fatalf("%q", got)
	}
}
