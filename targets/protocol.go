package targets

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	mongodrv "github.com/dbduel/dbduel/engine/driver/mongo"
	mysqldrv "github.com/dbduel/dbduel/engine/driver/mysql"
	pgdrv "github.com/dbduel/dbduel/engine/driver/postgres"
)

// The one way targets reach a server of either protocol: parse its URL,
// ping it, read its version and settings, make sure its database exists,
// and open the engine's pool.

// ParseURL parses mysql://..., postgres://... or mongodb://... (usage errors).
func ParseURL(spec string) (Endpoint, error) {
	var ep Endpoint
	var err error
	switch {
	case strings.HasPrefix(spec, "mysql://"):
		ep, err = mysqldrv.ParseURL(spec)
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		ep, err = pgdrv.ParseURL(spec)
	case strings.HasPrefix(spec, "mongodb://"):
		ep, err = mongodrv.ParseURL(spec)
	case strings.HasPrefix(spec, "mongodb+srv://"):
		err = fmt.Errorf("SPEC %q: mongodb+srv:// (DNS seed lists) is not supported: give the server as mongodb://host:port", RedactSpec(spec))
	default:
		err = fmt.Errorf("SPEC %q: want mysql://user:pass@host:port/db, postgres://user:pass@host:port/db or mongodb://user:pass@host:port/db", RedactSpec(spec))
	}
	if err != nil {
		return ep, &UsageError{Msg: err.Error()}
	}
	return ep, nil
}

// Ping tries one connection within timeout.
func Ping(ctx context.Context, ep Endpoint, timeout time.Duration) error {
	if ep.Protocol == mongodrv.Protocol {
		return mongodrv.Ping(ctx, ep, timeout)
	}
	if ep.Protocol == pgdrv.Protocol {
		return pgdrv.Ping(ctx, ep, timeout)
	}
	return mysqldrv.Ping(ctx, ep, timeout)
}

// ServerInfo reads the server's version and data directory.
func ServerInfo(ctx context.Context, ep Endpoint) (version, datadir string, err error) {
	if ep.Protocol == mongodrv.Protocol {
		return mongodrv.ServerInfo(ctx, ep)
	}
	if ep.Protocol == pgdrv.Protocol {
		return pgdrv.ServerInfo(ctx, ep)
	}
	return mysqldrv.ServerInfo(ctx, ep)
}

// Variables reads the server's settings (SHOW GLOBAL VARIABLES, pg_settings).
func Variables(ctx context.Context, ep Endpoint) (map[string]string, error) {
	if ep.Protocol == mongodrv.Protocol {
		return mongodrv.Variables(ctx, ep)
	}
	if ep.Protocol == pgdrv.Protocol {
		return pgdrv.Variables(ctx, ep)
	}
	return mysqldrv.Variables(ctx, ep)
}

// EnsureDatabase creates ep.DB if it is missing; created says it did.
func EnsureDatabase(ctx context.Context, ep Endpoint) (bool, error) {
	if ep.Protocol == mongodrv.Protocol {
		return mongodrv.EnsureDatabase(ctx, ep)
	}
	if ep.Protocol == pgdrv.Protocol {
		return pgdrv.EnsureDatabase(ctx, ep)
	}
	return mysqldrv.EnsureDatabase(ctx, ep)
}

// Opener is the engine's way to open a pool to ep; ignore is
// --mysql-ignore-errors (PostgreSQL's rules are fixed, as sysbench's).
func Opener(ep Endpoint, ignore mysqldrv.ErrorSet) driver.Opener {
	if ep.Protocol == mongodrv.Protocol {
		return mongodrv.Opener(ep)
	}
	if ep.Protocol == pgdrv.Protocol {
		return pgdrv.Opener(ep)
	}
	return mysqldrv.Opener(ep, ignore)
}
