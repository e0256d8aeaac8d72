package container

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/provision"
)

// BesideClient is a server dbduel does not run (a native server on
// another host, mysql://HOST:PORT/db,client=beside,engine=...) whose
// benchmark client is dbduel's agent in a container on that host's engine,
// on its host network: the load is generated beside the server and only
// results cross the network to dbduel, as with a container's
// client=beside. The server itself is read back and counted from here.
type BesideClient struct {
	targets.Target
	agent *Agent
	args  []string
	keys  string // as the SPEC gave them after the URL
}

// BesideKeys are the keys a server URL takes after it for a client beside
// it: client=beside, engine=tcp://HOST:PORT (with tls=DIR), ssh://USER@HOST
// or unix://, image=IMAGE (any image on that engine: the static agent is
// copied into it).
type BesideKeys struct{ Engine, Image, TLSDir string }

// ParseBesideKeys reads the ",key=value" keys after a server URL ("" : none).
func ParseBesideKeys(keys string) (BesideKeys, bool, error) {
	if keys == "" {
		return BesideKeys{}, false, nil
	}
	var k BesideKeys
	client := ""
	for _, kv := range strings.Split(keys, ",") {
		key, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return k, false, fmt.Errorf("%q: want key=value after the URL (a comma after its host is written %%2C)", kv)
		case key == "client":
			client = v
		case key == "engine":
			k.Engine = v
		case key == "image":
			k.Image = v
		case key == "tls":
			if err := checkTLSDir(v); err != nil {
				return k, false, err
			}
			k.TLSDir = v
		default:
			return k, false, fmt.Errorf("unknown key %q after the URL: want client=beside, engine=tcp://HOST:PORT, tls=DIR, image=IMAGE", key)
		}
	}
	switch {
	case client != "beside":
		return k, false, fmt.Errorf("client=%q: a server URL takes client=beside (an agent on the server's host)", client)
	case !strings.HasPrefix(k.Engine, "tcp://") && !strings.HasPrefix(k.Engine, "unix://") && !strings.HasPrefix(k.Engine, "ssh://"):
		return k, false, fmt.Errorf("client=beside needs engine=tcp://HOST:PORT or ssh://USER@HOST, the Docker engine on the server's host")
	case k.Image == "":
		return k, false, fmt.Errorf("client=beside needs image=IMAGE: an image on that engine to run dbduel's static agent in (any will do, e.g. debian:bookworm-slim)")
	}
	return k, true, nil
}

// NewBesideClient wraps server t with an agent client on keys' engine;
// args are the workload's flags, binary the static dbduel to copy in.
func NewBesideClient(t targets.Target, keys BesideKeys, given, runID, binary string, args []string, dial AgentDialer) *BesideClient {
	s := &Server{name: t.Name() + "-client", spec: "docker:" + keys.Image, runID: runID,
		o: Options{Image: keys.Image, Pull: "never", Engine: keys.Engine, TLSDir: keys.TLSDir, Network: "host"}}
	return &BesideClient{Target: t, args: args, keys: given, agent: &Agent{Server: s, binary: binary, dial: dial, stderr: &provision.TailBuffer{Max: 4096}}}
}

// PlainRemoteEngine is the agent's engine when plain TCP on another host.
func (b *BesideClient) PlainRemoteEngine() string { return b.agent.o.PlainRemoteEngine() }

// Prepare readies the server (when it has anything to prepare) and pulls
// and checks the agent's image, before any target starts.
func (b *BesideClient) Prepare(ctx context.Context) error {
	if p, ok := b.Target.(targets.Preparer); ok {
		if err := p.Prepare(ctx); err != nil {
			return err
		}
	}
	if err := b.agent.Prepare(ctx); err != nil {
		return fmt.Errorf("the client (client=beside): %w", err)
	}
	return nil
}

// Start reaches the server, then starts the agent beside it.
func (b *BesideClient) Start(ctx context.Context) error {
	if err := b.Target.Start(ctx); err != nil {
		return err
	}
	if err := b.agent.Start(ctx); err != nil {
		return fmt.Errorf("the client (client=beside): %w", err)
	}
	b.agent.client.Reach(b.Target.Endpoint(), b.args)
	return nil
}

// SpecRedacted is the server's redacted URL and the keys after it.
func (b *BesideClient) SpecRedacted() string {
	return driver.Redact(b.Target.SpecRedacted() + "," + b.keys)
}

// Open gives the engine the agent.
func (b *BesideClient) Open(ctx context.Context, maxConns int) (driver.DB, error) {
	return b.agent.Open(ctx, maxConns)
}

// Describe reads the server back and says where its client ran.
func (b *BesideClient) Describe(ctx context.Context) (result.Target, error) {
	t, err := b.Target.Describe(ctx)
	t.SpecRedacted = b.SpecRedacted()
	t.Described.ClientPlacement = "beside"
	return t, err
}

// Stop removes the client's container; the server is left as it was.
func (b *BesideClient) Stop(ctx context.Context) error {
	return errors.Join(b.agent.Stop(ctx), b.Target.Stop(ctx))
}
