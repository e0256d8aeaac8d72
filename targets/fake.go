package targets

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
)

// Fake is a Target for tests of what drives targets (as ali's
// fake_attacker beside its interface): it answers from its fields, fails
// where told, and counts its Starts and Stops, so the conductor's paths —
// parity, --strict-parity, stopping every target on every exit — are
// tested without a server or Docker.
type Fake struct {
	TargetName string
	Ep         Endpoint // the protocol the workload checks
	Version    string   // the server version Describe reads back
	// Host and ClientPlacement are what Describe reads back of where the
	// server and its client run ("" for neither).
	Host, ClientPlacement string
	Vars                  map[string]string // the server's settings, for parity
	// Opener is the engine's pool (nil: Open fails).
	Opener driver.Opener
	// StartErr and DescribeErr, if set, are what Start and Describe fail with.
	StartErr, DescribeErr error
	// StartBlocks makes Start wait for its context (a slow first start).
	StartBlocks bool
	// RespecErr, if set, is CheckRespec's and Respec's answer (Respecer).
	RespecErr func(spec string) error

	mu            sync.Mutex
	starts, stops int
}

var _ Target = (*Fake)(nil)

func (f *Fake) Name() string         { return f.TargetName }
func (f *Fake) Kind() string         { return "local" }
func (f *Fake) SpecRedacted() string { return "fake:" + f.TargetName }
func (f *Fake) Endpoint() Endpoint   { return f.Ep }

// Start counts the start, or fails with StartErr.
func (f *Fake) Start(ctx context.Context) error {
	if f.StartErr != nil {
		return f.StartErr
	}
	if f.StartBlocks {
		<-ctx.Done()
		return ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	return nil
}

// Describe reads back the name, kind and version.
func (f *Fake) Describe(context.Context) (result.Target, error) {
	t := result.Target{Name: f.TargetName, Kind: f.Kind(), SpecRedacted: f.SpecRedacted(), ServerVersion: f.Version}
	t.Described.Host, t.Described.ClientPlacement = f.Host, f.ClientPlacement
	return t, f.DescribeErr
}

// Variables are the server's settings (VariablesReader).
func (f *Fake) Variables(context.Context) (map[string]string, error) { return f.Vars, nil }

// Open gives the engine its pool (SelfOpener).
func (f *Fake) Open(ctx context.Context, maxConns int) (driver.DB, error) {
	if f.Opener == nil {
		return nil, errors.New("the fake has no pool")
	}
	return f.Opener(ctx, maxConns)
}

// Sample has nothing to read.
func (f *Fake) Sample(context.Context) (Sample, error) {
	return Sample{At: time.Now()}, errors.New("not sampled")
}

// Restart counts as a stop and a start.
func (f *Fake) Restart(ctx context.Context) error {
	if err := f.Stop(ctx); err != nil {
		return err
	}
	return f.Start(ctx)
}

// Stop counts the stop (idempotent, as every target's).
func (f *Fake) Stop(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	return nil
}

// CheckRespec answers from RespecErr (Respecer).
func (f *Fake) CheckRespec(spec string) error {
	if f.RespecErr != nil {
		return f.RespecErr(spec)
	}
	return nil
}

// Respec checks spec and restarts (Respecer).
func (f *Fake) Respec(ctx context.Context, spec string) error {
	if err := f.CheckRespec(spec); err != nil {
		return err
	}
	return f.Restart(ctx)
}

// Counts are how often Start and Stop were called.
func (f *Fake) Counts() (starts, stops int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts, f.stops
}
