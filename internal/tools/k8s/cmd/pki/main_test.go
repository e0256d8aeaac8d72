package main

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// TestIdentitiesAndTrust checks what the cluster's authorizers and etcd
// rely on: each kubeconfig's identity (RBAC's and the Node authorizer's
// default names), the API server's addresses, and that etcd trusts only
// its own CA (a certificate of the cluster's CA, as the controller-manager
// issues, must not open etcd).
func TestIdentitiesAndTrust(t *testing.T) {
	dir := t.TempDir()
	nodeIP, serviceIP := net.ParseIP("10.254.100.1"), net.ParseIP("10.96.0.1")
	if err := run(dir, "n1", nodeIP, serviceIP); err != nil {
		t.Fatal(err)
	}
	ca, etcdCA := pool(t, dir, "ca"), pool(t, dir, "etcd-ca")

	for file, want := range map[string][2]string{
		"admin.conf":              {"kubernetes-admin", "system:masters"},
		"controller-manager.conf": {"system:kube-controller-manager", ""},
		"scheduler.conf":          {"system:kube-scheduler", ""},
		"kubelet.conf":            {"system:node:n1", "system:nodes"},
		"kube-proxy.conf":         {"system:kube-proxy", ""},
	} {
		cfg, err := clientcmd.LoadFromFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		if got := cfg.Clusters[ctx.Cluster].Server; got != "https://10.254.100.1:6443" {
			t.Errorf("%s: server %q", file, got)
		}
		cert := parse(t, cfg.AuthInfos[ctx.AuthInfo].ClientCertificateData)
		var org string
		if len(cert.Subject.Organization) > 0 {
			org = cert.Subject.Organization[0]
		}
		if cert.Subject.CommonName != want[0] || org != want[1] {
			t.Errorf("%s: CN %q O %q, want %q %q", file, cert.Subject.CommonName, org, want[0], want[1])
		}
		verify(t, file, cert, ca, x509.ExtKeyUsageClientAuth, true)
		verify(t, file+" against etcd", cert, etcdCA, x509.ExtKeyUsageClientAuth, false)
	}

	api := load(t, dir, "apiserver")
	if !slices.ContainsFunc(api.IPAddresses, nodeIP.Equal) || !slices.ContainsFunc(api.IPAddresses, serviceIP.Equal) ||
		!slices.Contains(api.DNSNames, "kubernetes.default.svc.cluster.local") {
		t.Errorf("API server names: %v %v", api.IPAddresses, api.DNSNames)
	}
	verify(t, "apiserver", api, ca, x509.ExtKeyUsageServerAuth, true)
	verify(t, "etcd", load(t, dir, "etcd"), etcdCA, x509.ExtKeyUsageServerAuth, true)
	verify(t, "apiserver-etcd-client", load(t, dir, "apiserver-etcd-client"), etcdCA, x509.ExtKeyUsageClientAuth, true)
	verify(t, "apiserver-etcd-client against the cluster CA", load(t, dir, "apiserver-etcd-client"), ca, x509.ExtKeyUsageClientAuth, false)
	kubelet := load(t, dir, "kubelet")
	if !slices.ContainsFunc(kubelet.IPAddresses, nodeIP.Equal) {
		t.Errorf("kubelet serving certificate for %v, want the node's address", kubelet.IPAddresses)
	}
	for _, key := range []string{"ca.key", "etcd-ca.key", "sa.key", "admin.conf", "kubelet.key"} {
		if fi, err := os.Stat(filepath.Join(dir, key)); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: readable by others (%v, %v)", key, fi.Mode(), err)
		}
	}
}

func verify(t *testing.T, what string, cert *x509.Certificate, roots *x509.CertPool, usage x509.ExtKeyUsage, want bool) {
	t.Helper()
	_, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}})
	if (err == nil) != want {
		t.Errorf("%s: verifies %v, want %v (%v)", what, err == nil, want, err)
	}
}

func load(t *testing.T, dir, name string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".crt"))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, b)
}

func parse(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pool(t *testing.T, dir, name string) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	p.AddCert(load(t, dir, name))
	return p
}
