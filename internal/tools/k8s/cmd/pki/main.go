// Command pki makes the test cluster's certificates, service-account keys
// and kubeconfigs in one directory, with kubeadm's own helpers: a CA, the
// API server's serving and client certificates, etcd's, the kubelet's
// serving certificate, and a kubeconfig for every client identity RBAC's
// default bindings know (admin, controller-manager, scheduler, the node,
// kube-proxy). With -add-node it makes a further node's files only (its
// kubelet's serving certificate and kubeconfig, signed by the CA already
// in the directory): the cluster's second node.
package main

import (
	"crypto"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeconfigutil "k8s.io/kubernetes/cmd/kubeadm/app/util/kubeconfig"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pkiutil"
)

func main() {
	dir := flag.String("dir", "", "where the files go (an existing directory only root can change)")
	node := flag.String("node", "", "the node's name")
	nodeIP := flag.String("node-ip", "", "the node's address (the kubelet and the API server listen there)")
	serviceIP := flag.String("service-ip", "10.96.0.1", "the kubernetes Service's ClusterIP")
	addNode := flag.Bool("add-node", false, "only a further node's kubelet files (kubelet-NODE.crt, .key, .conf), signed by the directory's CA")
	apiIP := flag.String("api-ip", "", "with -add-node: the API server's address")
	flag.Parse()
	var err error
	if *addNode {
		err = addKubelet(*dir, *node, net.ParseIP(*nodeIP), net.ParseIP(*apiIP))
	} else {
		err = run(*dir, *node, net.ParseIP(*nodeIP), net.ParseIP(*serviceIP))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

func run(dir, node string, nodeIP, serviceIP net.IP) error {
	if dir == "" || node == "" || nodeIP == nil || serviceIP == nil {
		return fmt.Errorf("--dir, --node, --node-ip and --service-ip are required")
	}
	algo := kubeadmapi.EncryptionAlgorithmECDSAP256
	caCert, caKey, err := newCA(dir, "ca", "dbduel-k8s-ca")
	if err != nil {
		return err
	}
	// etcd trusts a CA of its own: the cluster's CA also signs what the
	// controller-manager approves (a node's client certificate, say), and
	// none of that may open etcd.
	etcdCACert, etcdCAKey, err := newCA(dir, "etcd-ca", "dbduel-k8s-etcd-ca")
	if err != nil {
		return err
	}
	loopback := net.ParseIP("127.0.0.1")
	leaves := []struct {
		etcd  bool // signed by etcd's CA
		name  string
		cn    string
		orgs  []string
		usage []x509.ExtKeyUsage
		alt   certutil.AltNames
	}{
		{false, "apiserver", "kube-apiserver", nil, server, certutil.AltNames{
			IPs:      []net.IP{nodeIP, loopback, serviceIP},
			DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		}},
		{false, "apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, client, certutil.AltNames{}},
		{true, "apiserver-etcd-client", "kube-apiserver-etcd-client", nil, client, certutil.AltNames{}},
		{true, "etcd", "dbduel-k8s-etcd", nil, both, certutil.AltNames{IPs: []net.IP{loopback}, DNSNames: []string{"localhost"}}},
		{false, "kubelet", node, nil, server, certutil.AltNames{IPs: []net.IP{nodeIP}, DNSNames: []string{node}}},
	}
	for _, l := range leaves {
		signer, signerKey := caCert, caKey
		if l.etcd {
			signer, signerKey = etcdCACert, etcdCAKey
		}
		cert, key, err := pkiutil.NewCertAndKey(signer, signerKey, &pkiutil.CertConfig{
			Config:              certutil.Config{CommonName: l.cn, Organization: l.orgs, Usages: l.usage, AltNames: l.alt},
			EncryptionAlgorithm: algo,
		})
		if err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		if err := pkiutil.WriteCertAndKey(dir, l.name, cert, key); err != nil {
			return err
		}
	}
	saKey, err := pkiutil.NewPrivateKey(algo)
	if err != nil {
		return err
	}
	if err := pkiutil.WriteKey(dir, "sa", saKey); err != nil {
		return err
	}
	if err := pkiutil.WritePublicKey(dir, "sa", saKey.Public()); err != nil {
		return err
	}
	return writeKubeconfigs(dir, node, nodeIP, caCert, caKey)
}

// addKubelet writes a further node's kubelet serving certificate and its
// kubeconfig (identity system:node:NODE, as the Node authorizer wants),
// both signed by the CA in dir.
func addKubelet(dir, node string, nodeIP, apiIP net.IP) error {
	if dir == "" || node == "" || nodeIP == nil || apiIP == nil {
		return fmt.Errorf("-add-node needs --dir, --node, --node-ip and --api-ip")
	}
	caCert, caKey, err := pkiutil.TryLoadCertAndKeyFromDisk(dir, "ca")
	if err != nil {
		return err
	}
	cert, key, err := pkiutil.NewCertAndKey(caCert, caKey, &pkiutil.CertConfig{
		Config:              certutil.Config{CommonName: node, Usages: server, AltNames: certutil.AltNames{IPs: []net.IP{nodeIP}, DNSNames: []string{node}}},
		EncryptionAlgorithm: kubeadmapi.EncryptionAlgorithmECDSAP256,
	})
	if err != nil {
		return err
	}
	if err := pkiutil.WriteCertAndKey(dir, "kubelet-"+node, cert, key); err != nil {
		return err
	}
	return writeKubeconfig(dir, "kubelet-"+node+".conf", "https://"+net.JoinHostPort(apiIP.String(), "6443"),
		"system:node:"+node, "system:nodes", caCert, caKey)
}

// newCA makes a CA and writes it as NAME.crt and NAME.key in dir.
func newCA(dir, name, cn string) (*x509.Certificate, crypto.Signer, error) {
	cert, key, err := pkiutil.NewCertificateAuthority(&pkiutil.CertConfig{
		Config: certutil.Config{CommonName: cn}, EncryptionAlgorithm: kubeadmapi.EncryptionAlgorithmECDSAP256,
	})
	if err != nil {
		return nil, nil, err
	}
	return cert, key, pkiutil.WriteCertAndKey(dir, name, cert, key)
}

var (
	server = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	client = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	both   = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
)

// writeKubeconfigs gives each component its own identity, so the API
// server's Node and RBAC authorizers treat each as upstream clusters do.
func writeKubeconfigs(dir, node string, nodeIP net.IP, caCert *x509.Certificate, signer crypto.Signer) error {
	serverURL := "https://" + net.JoinHostPort(nodeIP.String(), "6443")
	identities := []struct{ file, cn, org string }{
		{"admin.conf", "kubernetes-admin", "system:masters"},
		{"controller-manager.conf", "system:kube-controller-manager", ""},
		{"scheduler.conf", "system:kube-scheduler", ""},
		{"kubelet.conf", "system:node:" + node, "system:nodes"},
		{"kube-proxy.conf", "system:kube-proxy", ""},
	}
	for _, id := range identities {
		if err := writeKubeconfig(dir, id.file, serverURL, id.cn, id.org, caCert, signer); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig writes one client identity's kubeconfig (CN, and the
// group org when not ""), its certificate signed by the CA.
func writeKubeconfig(dir, file, serverURL, cn, org string, caCert *x509.Certificate, signer crypto.Signer) error {
	var orgs []string
	if org != "" {
		orgs = []string{org}
	}
	cert, key, err := pkiutil.NewCertAndKey(caCert, signer, &pkiutil.CertConfig{
		Config:              certutil.Config{CommonName: cn, Organization: orgs, Usages: client},
		EncryptionAlgorithm: kubeadmapi.EncryptionAlgorithmECDSAP256,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	cfg := kubeconfigutil.CreateWithCerts(serverURL, "dbduel-k8s", cn, pkiutil.EncodeCertPEM(caCert), keyPEM, pkiutil.EncodeCertPEM(cert))
	return clientcmd.WriteToFile(*cfg, filepath.Join(dir, file))
}
