// Package existing is a target for an existing server given by URL
// (a URL of any registered protocol: mysql://, postgres://, mongodb://).
package existing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/specs"
)

// Server is an existing server: dbduel connects to it and manages nothing.
type Server struct {
	name, spec string
	ep         targets.Endpoint
	notices    io.Writer // where to say what dbduel did to the server (nil: nowhere)
}

// SetNotices says where to tell the user what dbduel did on the server
// (creating the database).
func (s *Server) SetNotices(w io.Writer) { s.notices = w }

// New parses a mysql:// SPEC.
func New(name, spec string) (*Server, error) {
	ep, err := specs.ParseURL(spec)
	if err != nil {
		return nil, err
	}
	return &Server{name: name, spec: spec, ep: ep}, nil
}

func (s *Server) Name() string               { return s.name }
func (s *Server) Kind() string               { return "native" }
func (s *Server) SpecRedacted() string       { return specs.Redact(s.spec) }
func (s *Server) Endpoint() targets.Endpoint { return s.ep }

// Start checks that the server answers and that the database exists,
// creating it if absent (as sysbench users do by hand before prepare).
func (s *Server) Start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	created, err := driver.EnsureDatabase(ctx, s.ep)
	if created && s.notices != nil {
		// A typo in the DSN must not leave an unannounced database behind.
		fmt.Fprintf(s.notices, "dbduel: %s: created database %s (it did not exist; drop it when done if it was a typo)\n", s.name, s.ep.DB)
	}
	return err
}

// Describe reads the server's version and where it keeps data.
func (s *Server) Describe(ctx context.Context) (result.Target, error) {
	t := result.Target{Name: s.name, Kind: "native", SpecRedacted: s.SpecRedacted()}
	v, datadir, err := driver.ServerInfo(ctx, s.ep)
	if err != nil {
		return t, err
	}
	t.ServerVersion = v
	t.Described.NetworkPath = "direct"
	t.Described.Address = net.JoinHostPort(s.ep.Host, fmt.Sprint(s.ep.Port))
	t.Described.Host, t.Described.ClientPlacement = specs.HostOf(t.Described.Address), "here"
	t.Described.Datadir = &result.Datadir{Kind: "dir", Path: datadir}
	return t, nil
}

func (s *Server) Sample(context.Context) (targets.Sample, error) {
	return targets.Sample{}, errors.New("an existing server's resource use is not visible to dbduel")
}

func (s *Server) Restart(context.Context) error {
	return errors.New("dbduel cannot restart a server it does not manage")
}

func (s *Server) Stop(context.Context) error { return nil }
