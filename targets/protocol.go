package targets

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
)

// The one way targets reach a server of any protocol: the protocol
// registry (engine/driver), looked up by the endpoint's protocol or the
// URL's scheme. An unknown protocol is an error, never a default.

// ParseURL parses a server URL of any registered protocol (usage errors).
func ParseURL(spec string) (Endpoint, error) {
	p, err := driver.ForURL(spec)
	if err != nil {
		var hints []string
		for _, p := range driver.All() {
			if p.URLHint != "" {
				hints = append(hints, p.URLHint)
			}
		}
		return Endpoint{}, &UsageError{Msg: fmt.Sprintf("SPEC %q: want %s", RedactSpec(spec), strings.Join(hints, " or "))}
	}
	ep, err := p.ParseURL(spec)
	if err != nil {
		return ep, &UsageError{Msg: err.Error()}
	}
	return ep, nil
}

// Protocol is ep's registered protocol.
func Protocol(ep Endpoint) (*driver.Protocol, error) { return driver.Lookup(ep.Protocol) }

// Ping tries one connection within timeout.
func Ping(ctx context.Context, ep Endpoint, timeout time.Duration) error {
	p, err := Protocol(ep)
	if err != nil {
		return err
	}
	return p.Ping(ctx, ep, timeout)
}

// Ready is what a protocol does once a managed server first answers.
func Ready(ctx context.Context, ep Endpoint) error {
	p, err := Protocol(ep)
	if err != nil || p.Ready == nil {
		return err
	}
	return p.Ready(ctx, ep)
}

// ServerInfo reads the server's version and data directory.
func ServerInfo(ctx context.Context, ep Endpoint) (version, datadir string, err error) {
	p, err := Protocol(ep)
	if err != nil {
		return "", "", err
	}
	return p.ServerInfo(ctx, ep)
}

// Variables reads the server's settings (SHOW GLOBAL VARIABLES, pg_settings).
func Variables(ctx context.Context, ep Endpoint) (map[string]string, error) {
	p, err := Protocol(ep)
	if err != nil {
		return nil, err
	}
	return p.Variables(ctx, ep)
}

// EnsureDatabase creates ep.DB if it is missing; created says it did.
func EnsureDatabase(ctx context.Context, ep Endpoint) (bool, error) {
	p, err := Protocol(ep)
	if err != nil {
		return false, err
	}
	return p.EnsureDatabase(ctx, ep)
}

// Opener is the engine's way to open a pool to ep; opts carry the
// protocols' own settings (--mysql-ignore-errors).
func Opener(ep Endpoint, opts driver.OpenOptions) driver.Opener {
	p, err := Protocol(ep)
	if err != nil {
		return func(context.Context, int) (driver.DB, error) { return nil, err }
	}
	return p.Open(ep, opts)
}

// WriteConfig writes the protocol's shared config file into dir (with an
// include of the user's file, as the server sees it) and returns its path.
func WriteConfig(protocol, dir, include string) (string, error) {
	p, err := driver.Lookup(protocol)
	if err != nil {
		return "", err
	}
	if p.Config.Name == "" {
		return "", fmt.Errorf("%s servers have no shared config file", p.Title)
	}
	path := filepath.Join(dir, p.Config.Name)
	return path, os.WriteFile(path, p.Config.Render(include), 0o644)
}

// OpenSQL opens an SQL pool of one connection to ep (set-up statements).
func OpenSQL(ctx context.Context, ep Endpoint) (*sql.DB, func(), error) {
	db, err := Opener(ep, nil)(ctx, 1)
	if err != nil {
		return nil, nil, err
	}
	s, ok := db.(driver.SQLDB)
	if !ok {
		db.Close()
		return nil, nil, fmt.Errorf("%s does not speak SQL", ep.Protocol)
	}
	return s.SQL(), func() { db.Close() }, nil
}
