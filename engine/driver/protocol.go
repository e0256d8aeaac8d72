package driver

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Protocol is everything dbduel knows about one database protocol: how to
// read its URLs, reach and describe a server, open the engine's pool, and
// set up the official images' containers. Each protocol package registers
// one value in init; nothing else in dbduel names a protocol's driver, so
// a new protocol is one registered value plus its package.
type Protocol struct {
	Name        string   // the Endpoint.Protocol value: "mysql", "postgres", "mongodb"
	Title       string   // for people: "MySQL/MariaDB"
	Schemes     []string // URL schemes: "postgres", "postgresql"
	DefaultPort int
	// URLHint is the URL's shape, for errors: "mysql://user:pass@host:port/db".
	URLHint string

	ParseURL       func(spec string) (Endpoint, error)
	Ping           func(ctx context.Context, ep Endpoint, timeout time.Duration) error
	ServerInfo     func(ctx context.Context, ep Endpoint) (version, datadir string, err error)
	Variables      func(ctx context.Context, ep Endpoint) (map[string]string, error)
	EnsureDatabase func(ctx context.Context, ep Endpoint) (created bool, err error)
	// Ready, if set, runs once a managed server first answers (PostgreSQL
	// installs pg_stat_statements for the honesty check).
	Ready func(ctx context.Context, ep Endpoint) error
	// MakeAdmin, if set, makes an account with every right on a fresh
	// managed server reached through its local socket, before it listens
	// on any port (MongoDB: its localhost exception).
	MakeAdmin func(ctx context.Context, socket, user, password string) error
	// Open returns the engine's way to open a pool to ep; opts carry the
	// protocol's own settings (CheckOptions has vetted them).
	Open func(ep Endpoint, opts OpenOptions) Opener
	// CheckOptions, if set, says whether opts are valid for this protocol.
	CheckOptions func(opts OpenOptions) error
	// Options are the command-line flags that set OpenOptions.
	Options []Option

	Image  ImageConventions
	Config ConfigFile
}

// OpenOptions are protocol-specific settings for opening a pool, keyed by
// the flag that sets them ("mysql-ignore-errors"); a protocol reads its own
// keys and ignores the others.
type OpenOptions map[string]string

// Option is one protocol-specific flag of run's family (sysbench's
// --mysql-ignore-errors); its value goes to OpenOptions under Name.
type Option struct {
	Name, Default, Usage string
}

// ImageConventions are how the protocol's official images are run.
type ImageConventions struct {
	Port    int    // the port the server listens on inside the container
	Datadir string // where the image keeps its data (its VOLUME)
	// Setup gives the container's environment, arguments and endpoint.
	Setup func(ImageSetup) ImageStart
}

// ImageSetup is what a managed container's set-up knows.
type ImageSetup struct {
	ConfigDir      string // where dbduel's config directory is mounted
	ConfigFile     string // dbduel's config file inside the container ("" when the protocol has none)
	UserConfig     string // the user's cnf= inside the container ("" when none)
	Port           int    // the host port the server is reached on
	HostNetwork    bool   // network=host: the server listens on Port at 127.0.0.1 itself
	OverlayDatadir string // datadir=overlay: a path outside the image's VOLUME
	Password       string // a generated password for the server's admin user
}

// ImageStart is the container's environment, server arguments and the
// endpoint dbduel reaches it at (Host and Port set by the caller).
type ImageStart struct {
	Env      []string
	Cmd      []string
	Endpoint Endpoint
	// StopSignal, if set, is the signal that stops the server quickly
	// (a docker stop or restart must not wait on connected clients).
	StopSignal string
}

// ConfigFile is the config every managed server of the protocol starts
// with, local process and container alike, so that dbduel never creates a
// config difference between the targets it compares.
type ConfigFile struct {
	Name     string // dbduel's file: "dbduel.cnf" ("" when the protocol has none)
	UserName string // the name a cnf= file is given beside it: "user.cnf"
	// Render is the file's content; include, when set, is the user's file
	// as the server sees it, included after the shared options.
	Render func(include string) []byte
}

var (
	regMu     sync.RWMutex
	protocols = map[string]*Protocol{}
)

// Register makes p known by its name and schemes; registering a name
// twice is a programming error.
func Register(p *Protocol) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, k := range append([]string{p.Name}, p.Schemes...) {
		if old, ok := protocols[k]; ok && old != p {
			panic("driver: protocol " + k + " registered twice")
		}
		protocols[k] = p
	}
}

// Lookup finds a protocol by name or URL scheme; an unknown one is an
// error, never a default.
func Lookup(name string) (*Protocol, error) {
	regMu.RLock()
	p, ok := protocols[name]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown protocol %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// ForURL finds the protocol of a URL by its scheme.
func ForURL(spec string) (*Protocol, error) {
	scheme, _, ok := strings.Cut(spec, "://")
	if !ok {
		return nil, fmt.Errorf("not a URL")
	}
	return Lookup(scheme)
}

// Names are the registered protocols' names, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	var names []string
	for _, p := range protocols {
		if !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names
}

// All are the registered protocols, sorted by name.
func All() []*Protocol {
	var ps []*Protocol
	for _, n := range Names() {
		p, _ := Lookup(n)
		ps = append(ps, p)
	}
	return ps
}

// ForPort finds the protocol whose images listen on port.
func ForPort(port int) (*Protocol, bool) {
	for _, p := range All() {
		if p.Image.Port == port && p.Image.Setup != nil {
			return p, true
		}
	}
	return nil, false
}

// CheckOpenOptions asks every protocol whether opts are valid for it.
func CheckOpenOptions(opts OpenOptions) error {
	for _, p := range All() {
		if p.CheckOptions != nil {
			if err := p.CheckOptions(opts); err != nil {
				return err
			}
		}
	}
	return nil
}

// RenderLines is a config file: the header lines, the shared settings one
// a line, then includeLine (the protocol's include of the user's file)
// when the user gave one.
func RenderLines(header []string, shared []string, includeLine string) []byte {
	lines := append(append([]string{}, header...), shared...)
	if includeLine != "" {
		lines = append(lines, includeLine)
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}
