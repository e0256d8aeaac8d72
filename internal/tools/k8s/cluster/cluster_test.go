// Package cluster_test checks the test cluster that scripts/k8s-cluster.sh
// makes, as the tests of dbduel's k8s: targets will use it: the node is
// Ready, and a pod of dbduel's MariaDB test image runs on the bridge
// network with its server answering from the node. .ci/run runs it
// between `k8s-cluster.sh up` and `down`, with `k8s-cluster.sh env`'s
// exports.
package cluster_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	nodeName = "dbduel-k8s-node"
	nodeIP   = "10.254.100.1"
	podCIDR  = "10.244.0.0/24"
)

func client(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		t.Fatal("KUBECONFIG is unset: start the cluster with scripts/k8s-cluster.sh up, then eval \"$(scripts/k8s-cluster.sh env)\"")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestNodeIsReady(t *testing.T) {
	cs := client(t)
	node, err := cs.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		t.Fatalf("node %s is not Ready: %+v", nodeName, node.Status.Conditions)
	}
	var internal string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			internal = a.Address
		}
	}
	if internal != nodeIP {
		t.Errorf("node's InternalIP is %q, want %s (the dummy link's, never this machine's own address)", internal, nodeIP)
	}
	if v := node.Status.NodeInfo.KubeletVersion; v != "v1.34.4" {
		t.Errorf("kubelet version %q, want v1.34.4 (set at build time)", v)
	}
	if rt := node.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(rt, "containerd://") {
		t.Errorf("runtime %q, want containerd", rt)
	}
}

// TestMariaDBPodAnswersFromTheNode runs the MariaDB test image as a pod
// and queries its server from the node over the pod network.
func TestMariaDBPodAnswersFromTheNode(t *testing.T) {
	cs := client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	version := hostMariaDBVersion(t)
	image := "dbduel-test/mariadb:" + version
	password := randomHex(t)
	ns := "dbduel-k8s-test-" + randomHex(t)[:8]
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "mariadb"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: new(false),
			Containers: []corev1.Container{{
				Name: "mariadb", Image: image, ImagePullPolicy: corev1.PullNever,
				Env:   []corev1.EnvVar{{Name: "MARIADB_ROOT_PASSWORD", Value: password}},
				Ports: []corev1.ContainerPort{{ContainerPort: 3306}},
			}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var running *corev1.Pod
	for running == nil {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "mariadb", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			running = p
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pod not running: phase %s, %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		time.Sleep(time.Second)
	}
	if running.Spec.NodeName != nodeName || running.Status.HostIP != nodeIP {
		t.Errorf("pod on node %q at %q, want %s at %s", running.Spec.NodeName, running.Status.HostIP, nodeName, nodeIP)
	}
	_, pods, _ := net.ParseCIDR(podCIDR)
	if !pods.Contains(net.ParseIP(running.Status.PodIP)) {
		t.Errorf("pod IP %s outside the cluster's pod network %s", running.Status.PodIP, podCIDR)
	}
	// The server initialises its datadir first: it answers within a minute.
	var out []byte
	var err error
	for {
		cmd := exec.CommandContext(ctx, "mariadb", "--host", running.Status.PodIP, "--user", "root",
			"--connect-timeout", "2", "--batch", "--skip-column-names", "-e", "SELECT VERSION()")
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+password)
		if out, err = cmd.CombinedOutput(); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the server at %s:3306 did not answer: %v: %s", running.Status.PodIP, err, out)
		}
		time.Sleep(time.Second)
	}
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, version+"-MariaDB") {
		t.Errorf("the pod's server says version %q, want %s-MariaDB…", got, version)
	}
}

// hostMariaDBVersion is this machine's mariadbd version: the test image is
// built at it (scripts/build-test-image.sh).
func hostMariaDBVersion(t *testing.T) string {
	out, err := exec.Command("mariadbd", "--version").Output()
	if err != nil {
		t.Fatalf("mariadbd --version: %v", err)
	}
	m := regexp.MustCompile(`Ver (\d+\.\d+\.\d+)-`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no version in %q", out)
	}
	return string(m[1])
}

func randomHex(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
