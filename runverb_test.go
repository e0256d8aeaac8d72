package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine"
)

// How a plan ended, in words that name who stopped it and where, or what
// became of the target that failed.
func TestExplainFailureNamesTheCause(t *testing.T) {
	cut := &engine.TargetError{Target: "c", Where: "run 2 of 3", Err: context.Canceled}
	st := &startedTargets{}
	closed, cancel := context.WithCancelCause(context.Background())
	cancel(errStdioClosed)
	cases := []struct {
		ctx  context.Context
		out  outcome
		want string
		code int
	}{
		{context.Background(), outcome{err: cut, userStopped: true}, "stopped by the user (q) during run 2 of 3 of target c; that run is partial and left out of the verdict", exitInterrupted},
		{context.Background(), outcome{err: cut}, "stopped by a signal during run 2 of 3 of target c", exitInterrupted},
		{closed, outcome{err: cut}, "stopped because stdout or stderr was closed during run 2 of 3", exitInterrupted},
		{context.Background(), outcome{err: &engine.TargetError{Target: "c", Where: "run 1 of 1", Err: errors.New("lost the connection")},
			diagnosis: "the container was OOM-killed (exit code 137)"},
			"target c, run 1 of 1: the container was OOM-killed (exit code 137) (the client saw: lost the connection)", exitFailed},
	}
	for _, c := range cases {
		err := explainFailure(c.ctx, c.out, st)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCode(context.Background(), err) != c.code {
			t.Errorf("got %v (exit %d), want %q (exit %d)", err, exitCode(context.Background(), err), c.want, c.code)
		}
	}
}
