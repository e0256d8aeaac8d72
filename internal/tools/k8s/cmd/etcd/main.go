// Command etcd is the test cluster's etcd: the upstream server through its
// embed package, on loopback, every client and peer holding a certificate
// of etcd's own CA (a local user without one cannot read or write the
// cluster's state).
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "where etcd keeps its data")
	clientURL := flag.String("client-url", "https://127.0.0.1:23790", "the clients' URL (https, loopback)")
	peerURL := flag.String("peer-url", "https://127.0.0.1:23800", "the peer URL (https, loopback)")
	certFile := flag.String("cert", "", "server certificate")
	keyFile := flag.String("key", "", "server key")
	caFile := flag.String("ca", "", "the CA clients and peers must be signed by")
	flag.Parse()
	if err := run(*dataDir, *clientURL, *peerURL, transport.TLSInfo{
		CertFile: *certFile, KeyFile: *keyFile, TrustedCAFile: *caFile, ClientCertAuth: true,
	}); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

func run(dataDir, clientURL, peerURL string, tlsInfo transport.TLSInfo) error {
	if dataDir == "" || tlsInfo.CertFile == "" || tlsInfo.KeyFile == "" || tlsInfo.TrustedCAFile == "" {
		return fmt.Errorf("--data-dir, --cert, --key and --ca are required")
	}
	cu, err := url.Parse(clientURL)
	if err != nil {
		return err
	}
	pu, err := url.Parse(peerURL)
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name = "dbduel-k8s"
	cfg.Dir = dataDir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ClientTLSInfo, cfg.PeerTLSInfo = tlsInfo, tlsInfo
	cfg.LogLevel = "warn"
	// A test cluster made and removed by each CI run: its state is not
	// worth an fsync per write on a disk the benchmarks share.
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		return fmt.Errorf("not ready after 60 s")
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-e.Err():
		return err
	case <-stop:
		return nil
	}
}
