package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/dbduel/dbduel/engine/driver/system"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
)

// fakeRun conducts verb over fake targets with the given flags, as
// runVerb does after building the targets from their SPECs.
func fakeRun(t *testing.T, workload string, fakes []*targets.Fake, flags ...string) (string, error) {
	t.Helper()
	return fakeRunCtx(context.Background(), t, workload, fakes, flags...)
}

func fakeRunCtx(ctx context.Context, t *testing.T, workload string, fakes []*targets.Fake, flags ...string) (string, error) {
	t.Helper()
	o := &runOptions{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	bindRunFlags(fs, o)
	if err := fs.Parse(flags); err != nil {
		t.Fatal(err)
	}
	var ts []targets.Target
	for _, f := range fakes {
		o.targets = append(o.targets, f.TargetName+"=fake")
		ts = append(ts, f)
	}
	var stdout, stderr bytes.Buffer
	st := NewState(&stdout, &stderr, os.Environ())
	rc, err := newRunConfig(st, workload, o)
	if err != nil {
		t.Fatal(err)
	}
	err = conduct(ctx, st, rc, o, ts)
	return stderr.String() + stdout.String(), err
}

// A stop (SIGINT, SIGTERM) while a target starts is an interruption (exit
// 130) that says so, not a failed target's "context canceled".
func TestStopWhileATargetStarts(t *testing.T) {
	a := mysqlFake("a", nil)
	a.StartBlocks = true
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := fakeRunCtx(ctx, t, "oltp_read_only", []*targets.Fake{a}, "--no-tui")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitInterrupted || !strings.Contains(err.Error(), "stopped while target a was starting") {
		t.Fatalf("err %v", err)
	}
	if _, stops := a.Counts(); stops != 1 {
		t.Errorf("a stopped %d times, want 1", stops)
	}
}

func mysqlFake(name string, vars map[string]string) *targets.Fake {
	return &targets.Fake{TargetName: name, Ep: targets.Endpoint{Protocol: "mysql"}, Version: "10.11.19-MariaDB", Vars: vars}
}

// --strict-parity refuses two targets whose settings differ, with exit
// code 4, before any load, and stops both.
func TestStrictParityRefusesAndStopsEveryTarget(t *testing.T) {
	a := mysqlFake("a", map[string]string{"innodb_buffer_pool_size": "134217728", "max_connections": "1024"})
	b := mysqlFake("b", map[string]string{"innodb_buffer_pool_size": "2147483648", "max_connections": "1024"})
	out, err := fakeRun(t, "oltp_read_only", []*targets.Fake{a, b}, "--strict-parity", "--no-tui")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitParity || !strings.Contains(out, "innodb_buffer_pool_size (a=134217728, b=2147483648)") {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	for _, f := range []*targets.Fake{a, b} {
		if starts, stops := f.Counts(); starts != 1 || stops != 1 {
			t.Errorf("%s: %d starts, %d stops", f.TargetName, starts, stops)
		}
	}
}

// A target that fails to start ends the run with its name, and every
// target is stopped, the ones after it too.
func TestStartFailureStopsEveryTarget(t *testing.T) {
	a, b, c := mysqlFake("a", nil), mysqlFake("b", nil), mysqlFake("c", nil)
	b.StartErr = errors.New("no such image")
	_, err := fakeRun(t, "oltp_read_only", []*targets.Fake{a, b, c}, "--no-tui")
	if err == nil || err.Error() != "target b: no such image" {
		t.Fatalf("err %v", err)
	}
	for _, f := range []*targets.Fake{a, b, c} {
		if _, stops := f.Counts(); stops != 1 {
			t.Errorf("%s stopped %d times, want 1", f.TargetName, stops)
		}
	}
	if starts, _ := c.Counts(); starts != 0 {
		t.Error("c started after b failed")
	}
}

// A plan that runs to its end writes a result with both targets, their
// parity, and stops them; --keep leaves them running.
func TestCompletePlanStopsTargetsUnlessKept(t *testing.T) {
	for _, keep := range []bool{false, true} {
		var fakes []*targets.Fake
		for _, name := range []string{"a", "b"} {
			fakes = append(fakes, &targets.Fake{TargetName: name, Ep: targets.Endpoint{Protocol: system.Protocol},
				Opener: system.Opener(t.TempDir())})
		}
		out := t.TempDir() + "/r.json"
		flags := []string{"--time", "0", "--events", "50", "--cpu-max-prime", "200", "--format", "json", "-o", out, "--cooldown", "0"}
		if keep {
			flags = append(flags, "--keep")
		}
		msgs, err := fakeRun(t, "cpu", fakes, flags...)
		if err != nil {
			t.Fatalf("keep %v: %v\n%s", keep, err, msgs)
		}
		r, err := result.ReadFile(out)
		if err != nil || !r.Complete || len(r.Targets) != 2 || len(r.Completed(result.AnyTarget, 0)) != 2 || r.Parity == nil {
			t.Fatalf("keep %v: %v %+v", keep, err, r)
		}
		want := 1
		if keep {
			want = 0
		}
		for _, f := range fakes {
			if _, stops := f.Counts(); stops != want {
				t.Errorf("keep %v: %s stopped %d times, want %d", keep, f.TargetName, stops, want)
			}
		}
	}
}

// Targets on two machines measure the machines: refused with exit 2 and
// both named, unless --allow-mixed-hosts; clients in different places are
// said in a warning.
func TestMixedHostsAndClientPlacements(t *testing.T) {
	a, b := mysqlFake("a", nil), mysqlFake("b", nil)
	a.Host, b.Host = "local", "10.254.77.2"
	_, err := fakeRun(t, "oltp_read_only", []*targets.Fake{a, b}, "--no-tui")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "a on local, b on 10.254.77.2") {
		t.Fatalf("err %v", err)
	}
	for _, f := range []*targets.Fake{a, b} {
		if _, stops := f.Counts(); stops != 1 {
			t.Errorf("%s stopped %d times", f.TargetName, stops)
		}
	}
	if _, err := fakeRun(t, "oltp_read_only", []*targets.Fake{a, b}, "--no-tui", "--allow-mixed-hosts"); err != nil && strings.Contains(err.Error(), "different machines") {
		t.Fatalf("--allow-mixed-hosts still refused: %v", err)
	}
	st := &startedTargets{described: []result.Target{{Name: "native"}, {Name: "c"}}}
	st.described[0].Described.ClientPlacement, st.described[1].Described.ClientPlacement = "here", "netns"
	if w := placementWarnings(st.described); len(w) != 1 || !strings.Contains(w[0], "native's in dbduel's process, c's in the container's network namespace") {
		t.Fatalf("placement warnings %q", w)
	}
	st.described[1].Described.ClientPlacement = "here"
	if w := placementWarnings(st.described); len(w) != 0 || st.hosts() != nil {
		t.Fatalf("one place, one host: %q %q", w, st.hosts())
	}
}

// A pod's clients are named where they ran: in the server's pod, beside
// it on its node.
func TestPlacementWordsOfPods(t *testing.T) {
	ts := []result.Target{
		{Name: "beside", Described: result.Described{Engine: "kubernetes", ClientPlacement: "beside"}},
		{Name: "netns", Described: result.Described{Engine: "kubernetes", ClientPlacement: "netns"}},
	}
	w := placementWarnings(ts)
	if len(w) != 1 || !strings.Contains(w[0], "beside's beside the server, on its node, netns's in the server's pod") {
		t.Fatalf("warnings %q", w)
	}
}
