package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbduel/dbduel/engine"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/engine/stats"
)

// How a plan ended, in words that name who stopped it and where, or what
// became of the target that failed.
func TestExplainFailureNamesTheCause(t *testing.T) {
	cut := &engine.TargetError{Target: "c", Where: "run 2 of 3", Err: context.Canceled}
	st := &startedTargets{}
	closed, cancel := context.WithCancelCause(context.Background())
	cancel(ErrStdioClosed)
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

// The run path's threshold check alone, on recorded comparisons: exit 3
// exactly when a whole CI lies past the threshold, exit 5 when a CI
// straddles it (it used to pass silently), 3 winning over 5, and a target
// without a CI reported as not judged.
func TestCheckThresholdsExitCode(t *testing.T) {
	th, err := stats.ParseThreshold("tps<-5%")
	if err != nil {
		t.Fatal(err)
	}
	var msgs bytes.Buffer
	past := []result.Comparison{{Target: "ctr", Metric: "tps", HasCI: true, DeltaPct: -40, CILowPct: -50, CIHighPct: -30}}
	var ee *exitError
	if err := checkThresholds([]stats.Threshold{th}, past, stats.DefaultAlpha, &msgs); !errors.As(err, &ee) || ee.code != exitThreshold || !strings.Contains(err.Error(), "ctr tps -40.0% [-50.0%, -30.0%] crosses tps<-5%") {
		t.Fatalf("CI wholly past: %v", err)
	}
	straddles := []result.Comparison{{Target: "ctr", Metric: "tps", HasCI: true, DeltaPct: -6, CILowPct: -10, CIHighPct: -2, SDLog: 0.03}}
	if err := checkThresholds([]stats.Threshold{th}, straddles, stats.DefaultAlpha, &msgs); !errors.As(err, &ee) || ee.code != exitUndecided ||
		!strings.Contains(err.Error(), "inconclusive: ctr tps -6.0%, the CI [-10.0%, -2.0%] straddles tps<-5%; about ") {
		t.Fatalf("CI straddling the threshold: %v", err)
	}
	both := append(append([]result.Comparison{}, straddles...), result.Comparison{Target: "other", Metric: "tps", HasCI: true, DeltaPct: -40, CILowPct: -50, CIHighPct: -30})
	msgs.Reset()
	if err := checkThresholds([]stats.Threshold{th}, both, stats.DefaultAlpha, &msgs); !errors.As(err, &ee) || ee.code != exitThreshold || !strings.Contains(msgs.String(), "inconclusive: ctr") {
		t.Fatalf("a crossed threshold wins over a straddled one: %v, %q", err, msgs.String())
	}
	// Past the threshold alone (p ≈ 0.047 against −5%), not after Holm over
	// two comparisons (adjusted ≈ 0.094): inconclusive, exit 5, said so.
	rule := &result.IntervalRule{Rule: "paired-t", DF: 4}
	family := []result.Comparison{
		{Target: "ctr", Metric: "tps", HasCI: true, Ratio: 0.93, DeltaPct: -7, CILowPct: -8.9, CIHighPct: -5.05, SELog: 0.0075, Interval: rule, SDLog: 0.0168},
		{Target: "other", Metric: "tps", HasCI: true, Ratio: 1, DeltaPct: 0, CILowPct: -2.7, CIHighPct: 2.8, SELog: 0.01, Interval: rule},
	}
	if err := checkThresholds([]stats.Threshold{th}, family[:1], stats.DefaultAlpha, &msgs); !errors.As(err, &ee) || ee.code != exitThreshold {
		t.Fatalf("alone: %v", err)
	}
	if err := checkThresholds([]stats.Threshold{th}, family, stats.DefaultAlpha, &msgs); !errors.As(err, &ee) || ee.code != exitUndecided ||
		!strings.Contains(err.Error(), "lies past tps<-5% alone, but not after Holm's adjustment over 2 comparisons at α 0.05") {
		t.Fatalf("past alone, not after Holm: %v", err)
	}
	noCI := []result.Comparison{{Target: "ctr", Metric: "tps", DeltaPct: -40}}
	if err := checkThresholds([]stats.Threshold{th}, noCI, stats.DefaultAlpha, &msgs); err != nil || !strings.Contains(msgs.String(), "ctr has no confidence interval") {
		t.Fatalf("no CI: %v, %q", err, msgs.String())
	}
}
