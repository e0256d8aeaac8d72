package postgres

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dbduel/dbduel/engine/driver"
)

// sysbench's drv_pgsql.c: deadlock, unique violation and serialization
// failure restart the event; every other error, a lost connection
// included, ends the run.
func TestClassifyFollowsSysbenchsPgsqlDriver(t *testing.T) {
	d := &DB{}
	cases := []struct {
		err    error
		action driver.Action
		code   string
	}{
		{&pgconn.PgError{Code: "40P01", Message: "deadlock detected"}, driver.Restart, "40P01"},
		{&pgconn.PgError{Code: "23505", Message: "duplicate key"}, driver.Restart, "23505"},
		{fmt.Errorf("exec: %w", &pgconn.PgError{Code: "40001", Message: "could not serialize"}), driver.Restart, "40001"},
		{&pgconn.PgError{Code: "42P01", Message: "relation does not exist"}, driver.Fatal, "42P01"},
		{&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, driver.Fatal, "57P01"},
		{io.ErrUnexpectedEOF, driver.Fatal, ""},
	}
	for _, c := range cases {
		f := d.Classify(c.err)
		if f.Action != c.action || f.Code != c.code {
			t.Errorf("%v: action %v code %q, want %v %q", c.err, f.Action, f.Code, c.action, c.code)
		}
		if f.Action == driver.Fatal && f.Err == nil {
			t.Errorf("%v: a fatal failure needs a message", c.err)
		}
	}
	if f := d.Classify(io.ErrUnexpectedEOF); !strings.Contains(f.Err.Error(), "lost the connection") {
		t.Errorf("lost connection: %v", f.Err)
	}
}

func TestParseURLAndRedaction(t *testing.T) {
	ep, err := ParseURL("postgres://bench:s3cr%40t@127.0.0.1:5433/mydb")
	if err != nil || ep.User != "bench" || ep.Password != "s3cr@t" || ep.Port != 5433 || ep.DB != "mydb" || ep.Protocol != Protocol {
		t.Fatalf("%+v %v", ep, err)
	}
	if ep, _ := ParseURL("postgresql://127.0.0.1"); ep.User != "postgres" || ep.DB != "sbtest" || ep.Port != 5432 {
		t.Fatalf("defaults: %+v", ep)
	}
	for _, bad := range []string{"postgres://u:hunter2@127.0.0.1:99999/x", "postgres://u:hunter2@127.0.0.1/x?application_name=x", "mysql://u:hunter2@h/x"} {
		_, err := ParseURL(bad)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v (the password must never show)", driver.RedactURL(bad), err)
		}
	}
	if got := ep.Redacted(); strings.Contains(got, "s3cr") || !strings.Contains(got, "***") {
		t.Errorf("redacted: %s", got)
	}
}

// TLS is the URL's: sslmode and certificates as psql reads them, libpq's
// prefer when the URL says nothing; dbduel's own servers' endpoints (no
// parameters) connect without TLS.
func TestSSLModeFromURL(t *testing.T) {
	for spec, want := range map[string]struct {
		tls      bool // the first attempt is TLS
		fallback bool // a plain attempt follows a refused TLS one
		verify   bool // the server's name is checked
	}{
		"postgres://u:p@db1/x":                                  {tls: true, fallback: true},
		"postgres://u:p@db1/x?sslmode=disable":                  {},
		"postgres://u:p@db1/x?sslmode=require":                  {tls: true},
		"postgres://u:p@db1/x?sslmode=verify-full":              {tls: true, verify: true},
		"postgres://u:p@db1/x?sslmode=prefer&connect_timeout=3": {tls: true, fallback: true},
	} {
		ep, err := ParseURL(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		cfg, err := ConnConfig(ep)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		gotFallback := false
		for _, f := range cfg.Fallbacks {
			gotFallback = gotFallback || f.TLSConfig == nil
		}
		tc := cfg.TLSConfig
		if (tc != nil) != want.tls || gotFallback != want.fallback || (tc != nil && !tc.InsecureSkipVerify && tc.ServerName == "db1") != want.verify {
			t.Errorf("%s: TLS %v fallback %v config %+v, want %+v", spec, tc != nil, gotFallback, tc, want)
		}
	}
	own, err := ConnConfig(driver.Endpoint{Protocol: Protocol, Host: "127.0.0.1", Port: 5432, User: "postgres", DB: "sbtest"})
	if err != nil || own.TLSConfig != nil || own.ConnectTimeout != 10*time.Second {
		t.Errorf("own server: %+v %v, want no TLS and a 10s connect timeout", own, err)
	}
}
