// Package mongo is MongoDB behind the engine's driver seam, on the official
// Go driver (go.mongodb.org/mongo-driver/v2): mongodb:// URLs, error
// classes, serverStatus.opcounters for the honesty check, and the version
// and parameters for parity.
package mongo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mdb "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/dbduel/dbduel/engine/driver"
)

// Protocol is this driver's name in endpoints and workloads.
const Protocol = "mongodb"

// ParseURL reads mongodb://user:pass@host:port/db?params. The database
// defaults to sbtest; one host only (dbduel's targets are single servers).
func ParseURL(spec string) (driver.Endpoint, error) {
	u, err := url.Parse(spec)
	if err != nil || u.Scheme != "mongodb" {
		return driver.Endpoint{}, fmt.Errorf("SPEC %q: want mongodb://user:pass@host:port/db", driver.RedactURL(spec))
	}
	if strings.Contains(u.Host, ",") {
		return driver.Endpoint{}, fmt.Errorf("SPEC %q: one host only (a replica set's members are separate targets)", driver.RedactURL(spec))
	}
	ep := driver.Endpoint{Protocol: Protocol, Host: u.Hostname(), Port: 27017, DB: strings.TrimPrefix(u.Path, "/"), Params: u.RawQuery}
	if ep.Host == "" {
		return driver.Endpoint{}, fmt.Errorf("SPEC %q: no host", driver.RedactURL(spec))
	}
	if p := u.Port(); p != "" {
		if ep.Port, err = strconv.Atoi(p); err != nil || ep.Port <= 0 || ep.Port > 65535 {
			return driver.Endpoint{}, fmt.Errorf("SPEC %q: bad port %q", driver.RedactURL(spec), p)
		}
	}
	if ep.DB == "" {
		ep.DB = "sbtest"
	}
	if u.User != nil {
		ep.User = u.User.Username()
		ep.Password, _ = u.User.Password()
	}
	return ep, nil
}

// clientOptions are ep's options for a pool of at most maxConns connections.
func clientOptions(ep driver.Endpoint, maxConns int) *options.ClientOptions {
	o := options.Client().ApplyURI(ep.URL()).
		SetDirect(true).
		SetConnectTimeout(10 * time.Second).
		SetServerSelectionTimeout(10 * time.Second).
		SetAppName("dbduel").
		// Polled heartbeats: each hello has one reply (a streamed one has
		// many, which the self-count could not settle).
		SetServerMonitoringMode(options.ServerMonitoringModePoll)
	if maxConns > 0 {
		// One per thread plus the reads of the engine's own counters.
		o.SetMaxPoolSize(uint64(maxConns + 2)).SetMinPoolSize(uint64(maxConns))
	}
	return o
}

// mechanisms remembers the auth mechanism each server took (FerretDB's
// embedded server takes only PLAIN, which the driver never picks itself).
var mechanisms sync.Map // addr+user -> "PLAIN"

// connect opens a client to ep and proves it with a ping. With credentials
// and no authMechanism in the URL it tries the driver's default (SCRAM),
// then PLAIN, and keeps whichever the server took. own, when not nil,
// counts the commands the client sends for itself.
func connect(ctx context.Context, ep driver.Endpoint, maxConns int, own *selfCount) (*mdb.Client, driver.Endpoint, error) {
	key := ep.Addr() + "|" + ep.User
	if m, ok := mechanisms.Load(key); ok {
		ep = withParam(ep, "authMechanism", m.(string))
	}
	c, err := tryConnect(ctx, ep, maxConns, own)
	if err != nil && ep.User != "" && !strings.Contains(ep.Params, "authMechanism") && isAuthError(err) {
		plain := withParam(ep, "authMechanism", "PLAIN")
		if c2, err2 := tryConnect(ctx, plain, maxConns, own); err2 == nil {
			mechanisms.Store(key, "PLAIN")
			return c2, plain, nil
		}
	}
	if err != nil {
		return nil, ep, err
	}
	return c, ep, nil
}

func tryConnect(ctx context.Context, ep driver.Endpoint, maxConns int, own *selfCount) (*mdb.Client, error) {
	o := clientOptions(ep, maxConns)
	if own != nil {
		o.SetDialer(&countingDialer{d: net.Dialer{Timeout: 10 * time.Second}, own: own})
	}
	c, err := mdb.Connect(o)
	if err != nil {
		return nil, redact(err)
	}
	if err := c.Ping(ctx, nil); err != nil {
		_ = c.Disconnect(context.Background())
		return nil, redact(err)
	}
	return c, nil
}

func withParam(ep driver.Endpoint, k, v string) driver.Endpoint {
	q, _ := url.ParseQuery(ep.Params)
	q.Set(k, v)
	ep.Params = q.Encode()
	return ep
}

func isAuthError(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "auth") || strings.Contains(s, "mechanism")
}

func redact(err error) error { return errors.New(driver.RedactURL(err.Error())) }

// Ping tries one connection within timeout.
func Ping(ctx context.Context, ep driver.Endpoint, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, _, err := connect(ctx, ep, 1, nil)
	if err != nil {
		return err
	}
	return c.Disconnect(context.Background())
}

// ServerInfo reads the server's version (buildInfo; a FerretDB server says
// so: "7.0.42 (FerretDB v1.24.2)") and its data directory when it tells.
func ServerInfo(ctx context.Context, ep driver.Endpoint) (version, datadir string, err error) {
	c, _, err := connect(ctx, ep, 1, nil)
	if err != nil {
		return "", "", err
	}
	defer c.Disconnect(context.Background())
	var bi bson.M
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&bi); err != nil {
		return "", "", redact(err)
	}
	version = Version(bi)
	var opts struct {
		Parsed struct {
			Storage struct {
				DBPath string `bson:"dbPath"`
			} `bson:"storage"`
		} `bson:"parsed"`
	}
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "getCmdLineOpts", Value: 1}}).Decode(&opts); err == nil {
		datadir = opts.Parsed.Storage.DBPath
	}
	return version, datadir, nil
}

// Version is buildInfo's version, labelled when the server is FerretDB
// (it answers as a MongoDB version but is not MongoDB).
func Version(buildInfo bson.M) string {
	v, _ := buildInfo["version"].(string)
	if f, ok := buildInfo["ferretdbVersion"]; ok {
		fv, _ := f.(string)
		if fv == "" {
			fv = "unknown"
		}
		return fmt.Sprintf("%s (FerretDB %s)", v, fv)
	}
	return v
}

// Variables reads the server's parameters (getParameter '*'), flattened.
// A server that refuses the command has none to compare.
func Variables(ctx context.Context, ep driver.Endpoint) (map[string]string, error) {
	c, _, err := connect(ctx, ep, 1, nil)
	if err != nil {
		return nil, err
	}
	defer c.Disconnect(context.Background())
	out := map[string]string{}
	var params bson.M
	if err := c.Database("admin").RunCommand(ctx, bson.D{{Key: "getParameter", Value: "*"}}).Decode(&params); err != nil {
		return out, nil
	}
	for k, v := range params {
		if k == "ok" || k == "$clusterTime" || k == "operationTime" {
			continue
		}
		out[k] = fmt.Sprint(v)
	}
	return out, nil
}

// EnsureDatabase checks the server answers: MongoDB creates a database
// with its first collection, so there is nothing to create.
func EnsureDatabase(ctx context.Context, ep driver.Endpoint) (bool, error) {
	return false, Ping(ctx, ep, 10*time.Second)
}

// DB is a pool to one MongoDB server.
type DB struct {
	client *mdb.Client
	ep     driver.Endpoint
	own    *selfCount // commands the pool sent for itself (handshakes, heartbeats)
	// life is the workers' operation context: Unblock cancels it, which
	// also ends a server selection in progress (a Disconnect does not).
	life   context.Context
	unlive context.CancelFunc
}

// Opener returns the engine's opener for ep.
func Opener(ep driver.Endpoint) driver.Opener {
	return func(ctx context.Context, maxConns int) (driver.DB, error) { return Open(ctx, ep, maxConns) }
}

// Open connects to ep with a pool of maxConns connections.
func Open(ctx context.Context, ep driver.Endpoint, maxConns int) (*DB, error) {
	own := &selfCount{}
	c, ep, err := connect(ctx, ep, maxConns, own)
	if err != nil {
		return nil, err
	}
	life, unlive := context.WithCancel(context.Background())
	return &DB{client: c, ep: ep, own: own, life: life, unlive: unlive}, nil
}

// Database is the workload's database.
func (d *DB) Database() *mdb.Database { return d.client.Database(d.ep.DB) }

// Conn is a thread's handle: the driver multiplexes threads over its pool
// (one connection per operation in flight), so a handle is all a thread owns.
func (d *DB) Conn(ctx context.Context) (driver.Conn, error) {
	return &Conn{db: d.Database(), life: d.life}, nil
}

// Conn is one thread's handle to the workload's database.
type Conn struct {
	db   *mdb.Database
	life context.Context
}

// Context is the one a worker's operations take: the engine runs events
// without a deadline, and Unblock cancels this one.
func (c *Conn) Context() context.Context { return c.life }

// ContextOf is conn's operation context (context.Background for a
// connection that has none).
func ContextOf(conn any) context.Context {
	if c, ok := conn.(interface{ Context() context.Context }); ok && c.Context() != nil {
		return c.Context()
	}
	return context.Background()
}

// Database is the workload's database.
func (c *Conn) Database() *mdb.Database { return c.db }

// Discard: the pool replaces broken connections itself.
func (c *Conn) Discard() {}

// Close releases nothing: the pool owns the connections.
func (c *Conn) Close() error { return nil }

// DatabaseOf returns a Conn's or DB's database, or an error naming the
// workload when the target speaks another protocol.
func DatabaseOf(x any, workload string) (*mdb.Database, error) {
	if d, ok := x.(interface{ Database() *mdb.Database }); ok {
		return d.Database(), nil
	}
	return nil, fmt.Errorf("workload %s speaks MongoDB's protocol; this target does not", workload)
}

// Unblock cancels the workers' operations and disconnects the client with
// a short deadline: operations stuck on a server that stopped answering (a
// paused container) fail at once instead of waiting for ever.
func (d *DB) Unblock() {
	d.unlive()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = d.client.Disconnect(ctx)
}

// Close disconnects the pool.
func (d *DB) Close() error { return d.client.Disconnect(context.Background()) }

// Classify reads an operation's error: a lost or timed-out connection is
// reconnected and the event restarted; a retryable write error or a
// duplicate key (two threads' delete+insert of one _id crossing) restarts
// the event; anything else ends the run with the server's message.
func (d *DB) Classify(err error) driver.Failure { return Classify(err) }

// Classify is the driver's error classes (see DB.Classify).
func Classify(err error) driver.Failure {
	code := ""
	var se mdb.ServerError
	if errors.As(err, &se) {
		for _, c := range []int{11000, 112, 251} {
			if se.HasErrorCode(c) {
				code = strconv.Itoa(c)
			}
		}
	}
	switch {
	case mdb.IsNetworkError(err), errors.Is(err, mdb.ErrClientDisconnected):
		return driver.Failure{Action: driver.Reconnect, Code: "network"}
	case se != nil && (se.HasErrorLabel("RetryableWriteError") || se.HasErrorLabel("TransientTransactionError")):
		return driver.Failure{Action: driver.Restart, Code: code}
	case mdb.IsDuplicateKeyError(err):
		return driver.Failure{Action: driver.Restart, Code: "11000"}
	case se != nil && se.HasErrorCode(112): // WriteConflict
		return driver.Failure{Action: driver.Restart, Code: "112"}
	}
	return driver.Failure{Action: driver.Fatal, Code: code, Err: fmt.Errorf("mongodb: %s", driver.RedactURL(driver.OneLine(err.Error())))}
}

// OpCount sums serverStatus.opcounters: every insert (per document),
// query, update, delete (per statement), getmore and command the server
// served, less the commands this pool sent for itself (handshakes,
// heartbeats). Its own serverStatus adds one command. An own command in
// flight may or may not be in the server's count yet, so the counter is
// read when none is, and read again if one was sent meanwhile.
func (d *DB) OpCount(ctx context.Context) (driver.OpCount, error) {
	var n, own uint64
	for attempt := 0; ; attempt++ {
		d.waitOwnSettled(ctx)
		own = d.own.sent.Load()
		var err error
		if n, err = d.opcounters(ctx); err != nil {
			return driver.OpCount{}, err
		}
		if d.own.sent.Load() == own && d.own.inFlight.Load() == 0 || attempt == 4 {
			break
		}
	}
	return driver.OpCount{Counter: "opcounters", N: n - min(n, own), Unit: driver.Operations, Self: 1,
		Note: "less dbduel's own handshakes and heartbeats; the counter includes any other client of this server"}, nil
}

// waitOwnSettled waits, a second at most, until no own command of the
// pool waits for its reply.
func (d *DB) waitOwnSettled(ctx context.Context) {
	for deadline := time.Now().Add(time.Second); d.own.inFlight.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(2 * time.Millisecond)
	}
}

// opcounters is the server's serverStatus.opcounters, summed.
func (d *DB) opcounters(ctx context.Context) (uint64, error) {
	var st struct {
		Opcounters map[string]any `bson:"opcounters"`
	}
	if err := d.client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		return 0, fmt.Errorf("%w: serverStatus: %v", driver.ErrNoOpCount, redact(err))
	}
	n, ok := SumOpcounters(st.Opcounters)
	if !ok {
		return 0, fmt.Errorf("%w: serverStatus has no opcounters", driver.ErrNoOpCount)
	}
	return n, nil
}

// SumOpcounters adds serverStatus.opcounters' six counters (false when
// the server has none of them).
func SumOpcounters(oc map[string]any) (uint64, bool) {
	var n uint64
	found := false
	for _, k := range []string{"insert", "query", "update", "delete", "getmore", "command"} {
		v, ok := oc[k]
		if !ok {
			continue
		}
		found = true
		switch v := v.(type) {
		case int32:
			n += uint64(v)
		case int64:
			n += uint64(v)
		case float64:
			n += uint64(v)
		}
	}
	return n, found
}

// MakeAdmin makes user a root of the fresh server at socket, through its
// localhost exception (a server with --auth and no user yet takes one
// user from a local client).
func MakeAdmin(ctx context.Context, socket, user, password string) error {
	o := options.Client().ApplyURI("mongodb://" + url.PathEscape(socket) + "/?directConnection=true").
		SetConnectTimeout(10 * time.Second).SetServerSelectionTimeout(10 * time.Second)
	c, err := mdb.Connect(o)
	if err != nil {
		return redact(err)
	}
	defer c.Disconnect(context.Background())
	cmd := bson.D{{Key: "createUser", Value: user}, {Key: "pwd", Value: password},
		{Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: "root"}, {Key: "db", Value: "admin"}}}}}
	if err := c.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		return errors.New(strings.ReplaceAll(redact(err).Error(), password, "***"))
	}
	return nil
}
