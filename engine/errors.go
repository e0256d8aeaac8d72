package engine

import (
	"context"
	"errors"
	"fmt"
)

// TargetError is a failure of one target, and where in the session it
// happened.
type TargetError struct {
	Target string
	Where  string // "prepare", "run 2 of 3", "round 4", ...
	Err    error
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("target %s, %s: %v", e.Target, e.Where, e.Err)
}

func (e *TargetError) Unwrap() error { return e.Err }

// ErrCutShort is a run that ended early with no error of its own: an
// agent stopped from outside (its container stopped or restarted).
var ErrCutShort = errors.New("the run ended early without an error of its own (its process was stopped from outside)")

func cutShort(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ErrCutShort
}
