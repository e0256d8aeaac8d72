package container

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/cli/cli/connhelper"
	"github.com/docker/docker/client"

	"github.com/dbduel/dbduel/targets/specs"
)

// An engine on another host is reached over a link that carries what the
// container target sends (the server's root password in its environment,
// the agent's traffic): TLS with verification (engine=tcp://HOST:2376 with
// tls=DIR, or the Docker CLI's DOCKER_TLS_VERIFY and DOCKER_CERT_PATH), or
// SSH (engine=ssh://USER@HOST[/SOCKET], through the Docker CLI's
// connection helper: the user's own ssh, its keys and known hosts). Plain
// TCP to another host is refused unless the user says --insecure-engine.

// tlsFiles are a TLS directory's files, as the Docker CLI names them.
var tlsFiles = []string{"ca.pem", "cert.pem", "key.pem"}

// checkTLSDir says whether dir holds the CA, the client's certificate and
// its key.
func checkTLSDir(dir string) error {
	for _, f := range tlsFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("tls=%s: no %s there (want ca.pem, cert.pem and key.pem, as the Docker CLI's DOCKER_CERT_PATH)", dir, f)
		}
	}
	return nil
}

// engineURL is the engine the SPEC names, or the environment's
// DOCKER_HOST when it names none ("" or podman: a socket on this machine).
func (o Options) engineURL() string {
	if o.Engine == "" || o.Engine == engineDocker {
		return os.Getenv("DOCKER_HOST")
	}
	return o.Engine
}

// tlsDir is where the engine's TLS files are: tls=, else the Docker CLI's
// DOCKER_CERT_PATH when DOCKER_TLS_VERIFY is set ("": no TLS).
func (o Options) tlsDir() string {
	if o.TLSDir != "" {
		return o.TLSDir
	}
	if os.Getenv("DOCKER_TLS_VERIFY") != "" && os.Getenv("DOCKER_CERT_PATH") != "" && strings.HasPrefix(o.engineURL(), "tcp://") {
		return os.Getenv("DOCKER_CERT_PATH")
	}
	return ""
}

// PlainRemoteEngine is the engine's address when it is reached over plain
// TCP on another host ("" otherwise): engine=, or DOCKER_HOST.
func (o Options) PlainRemoteEngine() string {
	e := o.engineURL()
	if !strings.HasPrefix(e, "tcp://") || o.tlsDir() != "" {
		return ""
	}
	if specs.HostOf(e) == "local" {
		return ""
	}
	return e
}

// cleanEnv is the environment `dbduel clean` needs to reach the engine:
// its address and, for TLS, the Docker CLI's variables.
func (o Options) cleanEnv(addr string) string {
	env := "DOCKER_HOST=" + addr
	if d := o.tlsDir(); d != "" {
		env += " DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=" + d
	}
	return env
}

// ErrPlainEngine refuses an engine on another host over plain TCP.
func ErrPlainEngine(engine string) error {
	return &specs.UsageError{Msg: fmt.Sprintf("engine=%s: plain TCP to another host carries the container's root password and the agent's traffic in clear: "+
		"use TLS (engine=tcp://HOST:2376,tls=DIR, or DOCKER_TLS_VERIFY and DOCKER_CERT_PATH), ssh://USER@HOST, or --insecure-engine to send them anyway", engine)}
}

// PlainEngineWarning is said when --insecure-engine lets plain TCP through.
func PlainEngineWarning(engine string) string {
	return fmt.Sprintf("engine %s is plain TCP (--insecure-engine): the container's root password, its environment and the agent's traffic cross the link in clear", engine)
}

// remoteClient connects to a tcp:// engine (with TLS when the SPEC or the
// environment gives it) or an ssh:// one.
func remoteClient(o Options) (*client.Client, error) {
	opts := []client.Opt{client.WithAPIVersionNegotiation()}
	switch {
	case strings.HasPrefix(o.Engine, "ssh://"):
		h, err := connhelper.GetConnectionHelper(o.Engine)
		if err != nil {
			return nil, &specs.UsageError{Msg: fmt.Sprintf("engine=%s: %v", o.Engine, err)}
		}
		opts = append(opts, client.WithHost(h.Host), client.WithDialContext(h.Dialer))
	case o.tlsDir() != "":
		hc, err := tlsHTTPClient(o.tlsDir())
		if err != nil {
			return nil, err
		}
		opts = append(opts, client.WithHost(o.Engine), client.WithHTTPClient(hc))
	default:
		opts = append(opts, client.WithHost(o.Engine))
	}
	return client.NewClientWithOpts(opts...)
}

// tlsHTTPClient verifies the engine against dir's CA and presents dir's
// client certificate.
func tlsHTTPClient(dir string) (*http.Client, error) {
	if err := checkTLSDir(dir); err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("tls=%s: ca.pem holds no certificate", dir)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		return nil, fmt.Errorf("tls=%s: %w", dir, err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: tr}, nil
}
