//go:build k8s

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestKubeFaults runs every fault of kubeFaults with the client here and
// beside the pod: dbduel (the binary, as a user runs it) on one k8s:
// target, the fault made once its first interval is out, then its exit
// code, the stop line, the bound, the partial result and nothing left in
// the cluster or the state directory.
func TestKubeFaults(t *testing.T) {
	cs := kubeClient(t)
	for _, f := range kubeFaults {
		t.Run(f.name, func(t *testing.T) {
			for _, p := range kubePlacements {
				t.Run(p, func(t *testing.T) {
					if !f.serial {
						t.Parallel() // two cells at a time (-parallel 2) fit the node's two cores
					}
					runKubeFault(t, cs, f, f.outcomeAt(p), "k8s:"+testImage(t)+",cpus=0.5,"+p+f.keys)
				})
			}
		})
	}
}

func runKubeFault(t *testing.T, cs kubernetes.Interface, f kubeFault, want outcome, spec string) {
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	env := []string{runEnv(runID), agentEnv(t)}
	var proxy *apiProxy
	if f.name == "API server unreachable" {
		proxy = newAPIProxy(t)
		env = append(env, "KUBECONFIG="+proxy.kubeconfig)
	}
	r := startKubeRun(t, env, spec, out)
	at := time.Now()
	switch f.name {
	case "pod deleted":
		if err := cs.CoreV1().Pods("default").Delete(context.Background(), serverPod(t, cs, runID).Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	case "OOM-killed":
		at = oomKillServer(t, cs, runID)
	case "API server unreachable":
		proxy.Close()
	case "kubelet stopped":
		kubelet(t, "stop")
		t.Cleanup(func() { kubelet(t, "start") }) // before the run's clean (cleanups run last first)
		if want.exit == 0 {
			runsOn(t, r, want.bound)
			return
		}
	case "dbduel SIGKILLed":
		r.cmd.Process.Kill()
		<-r.done
		stdout, errOut, code := dbduel(t, "clean", "--run", runID)
		if code != 0 || !strings.Contains(stdout, "removed the Kubernetes objects of run "+runID+", target c") {
			t.Fatalf("clean: exit %d: %s %s", code, stdout, errOut)
		}
		took := time.Since(at)
		t.Logf("clean in %s", took.Round(100*time.Millisecond))
		if took > want.bound {
			t.Fatalf("clean took %s, want within %s", took, want.bound)
		}
		checkKubeClean(t, cs, runID)
		return
	}
	var code int
	select {
	case code = <-r.done:
	case <-time.After(want.bound + 30*time.Second):
		t.Fatalf("still running %s after the fault:\n%s", time.Since(at).Round(time.Second), r.stderr.String())
	}
	took, msg := time.Since(at), r.stderr.String()
	t.Logf("exit %d %s after the fault: %s", code, took.Round(100*time.Millisecond), stopLine(msg))
	if code != want.exit || took > want.bound {
		t.Fatalf("exit %d after %s, want %d within %s:\n%s", code, took.Round(100*time.Millisecond), want.exit, want.bound, msg)
	}
	if !strings.Contains(stopLine(msg), want.names) {
		t.Fatalf("the stop line does not name %q:\n%s", want.names, msg)
	}
	checkPartial(t, out, false)
	if proxy != nil {
		// The API (through the same address) answers again: clean deletes
		// what dbduel could not.
		if !strings.Contains(msg, "dbduel clean --run "+runID) {
			t.Fatalf("no word on what was left behind:\n%s", msg)
		}
		proxy.Reopen(t)
		if _, errOut, code := dbduel(t, "clean", "--run", runID); code != 0 {
			t.Fatalf("clean: exit %d: %s", code, errOut)
		}
	}
	checkKubeClean(t, cs, runID)
}

// kubelet stops or starts the test cluster's kubelet.
func kubelet(t *testing.T, what string) {
	t.Helper()
	out, err := exec.Command("bash", "scripts/k8s-cluster.sh", "kubelet", what).CombinedOutput()
	if err != nil {
		t.Fatalf("kubelet %s: %v: %s", what, err, out)
	}
}

// runsOn checks that the run still runs for d after the fault, printing
// intervals.
func runsOn(t *testing.T, r *kubeRun, d time.Duration) {
	t.Helper()
	before := strings.Count(r.stdout.String(), "\n")
	select {
	case code := <-r.done:
		t.Fatalf("the run ended (exit %d) after the fault: %s", code, r.stderr.String())
	case <-time.After(d):
	}
	if after := strings.Count(r.stdout.String(), "\n"); after <= before {
		t.Fatalf("no interval printed in the %s after the fault:\n%s", d, r.stderr.String())
	}
}

// kubeRun is a dbduel binary running one target in the background.
type kubeRun struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan int
}

// startKubeRun starts oltp_point_select on c=spec and returns once its
// first interval is out.
func startKubeRun(t *testing.T, env []string, spec, out string) *kubeRun {
	t.Helper()
	r := &kubeRun{done: make(chan int, 1)}
	r.cmd = exec.Command(buildBinary(t), "run", "oltp_point_select", "--target", "c="+spec, "--time", "150",
		"--table-size", "300", "--threads", "2", "--format", "text", "-o", out)
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.cmd.Wait()
		r.done <- r.cmd.ProcessState.ExitCode()
	}()
	// A cell that fails mid-run leaves no pods to starve the next ones:
	// dbduel killed, then its run cleaned.
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		if _, errOut, code := dbduel(t, "clean", "--run", runIDOf(env)); code != 0 {
			t.Logf("clean after the cell: exit %d: %s", code, errOut)
		}
	})
	deadline := time.Now().Add(3 * time.Minute)
	for !intervalPrinted(r.stdout.String()) {
		select {
		case code := <-r.done:
			t.Fatalf("the run ended (exit %d) before it started: %s", code, r.stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not start: %s", r.stderr.String())
		}
	}
	return r
}

// serverPod is run runID's server pod.
func serverPod(t *testing.T, cs kubernetes.Interface, runID string) *corev1.Pod {
	t.Helper()
	pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: "dbduel.run=" + runID + ",dbduel.role=server"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("run %s's server pod: %v (%d pods)", runID, err, len(pods.Items))
	}
	return &pods.Items[0]
}

// oomKillServer makes the server container's processes the OOM killer's
// first choice (from the host: the node is this machine), runs a memory
// hog in the container, and returns when the kubelet reports the
// container's end: the fault is the kill, not the hog's start.
func oomKillServer(t *testing.T, cs kubernetes.Interface, runID string) time.Time {
	t.Helper()
	pod := serverPod(t, cs, runID)
	var cid string
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == "server" {
			_, cid, _ = strings.Cut(c.ContainerID, "://")
		}
	}
	procs, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/memory/kubepods*/pod%s/%s/cgroup.procs", pod.UID, cid))
	more, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/memory/kubepods*/*/pod%s/%s/cgroup.procs", pod.UID, cid))
	procs = append(procs, more...)
	if len(procs) != 1 {
		t.Fatalf("the server container's cgroup: %v", procs)
	}
	data, err := os.ReadFile(procs[0])
	if err != nil || len(strings.Fields(string(data))) == 0 {
		t.Fatalf("the server container's processes: %v %q", err, data)
	}
	for _, pid := range strings.Fields(string(data)) {
		if err := os.WriteFile("/proc/"+pid+"/oom_score_adj", []byte("1000"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// tail reads /dev/zero for a line's end, keeping all of it.
	hog := exec.Command("kubectl", "exec", pod.Name, "-c", "server", "--", "tail", "/dev/zero")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Process.Kill(); hog.Wait() })
	deadline := time.Now().Add(90 * time.Second)
	for {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return time.Now() // dbduel saw the kill first, ended and deleted the pod
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.Name == "server" && c.State.Terminated != nil {
				return time.Now()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hog did not fill the container's %s in 90 s", pod.Spec.Containers[0].Resources.Limits.Memory())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkKubeClean fails if anything of run runID is left in the cluster
// or in the state directory.
func checkKubeClean(t *testing.T, cs kubernetes.Interface, runID string) {
	t.Helper()
	if left := kubeLeftovers(t, cs, runID); len(left) != 0 {
		t.Fatalf("left in the cluster: %v", left)
	}
	if files := stateFiles(t, runID); len(files) != 0 {
		t.Fatalf("files left in the state directory: %v", files)
	}
}

// apiProxy forwards a loopback port to the test cluster's API server, with
// a kubeconfig that goes through it: closing it is an API server that
// stops answering; Reopen brings it back at the same address.
type apiProxy struct {
	kubeconfig, addr, upstream string
	mu                         sync.Mutex
	l                          net.Listener
	conns                      []net.Conn
}

func newAPIProxy(t *testing.T) *apiProxy {
	t.Helper()
	cfg, err := clientcmd.NewDefaultClientConfigLoadingRules().Load()
	if err != nil {
		t.Fatal(err)
	}
	cluster := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	u, err := url.Parse(cluster.Server)
	if err != nil {
		t.Fatal(err)
	}
	p := &apiProxy{upstream: u.Host}
	p.listen(t, "127.0.0.1:0")
	p.addr = p.l.Addr().String()
	// The API server's certificate names "kubernetes", not this address.
	cluster.Server, cluster.TLSServerName = "https://"+p.addr, "kubernetes"
	p.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p.kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func (p *apiProxy) listen(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(l)
}

// serve forwards what l accepts to the API server.
func (p *apiProxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.l != l { // closed while this one was accepted
				p.mu.Unlock()
				c.Close()
				up.Close()
				continue
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

// Close stops listening and cuts every forwarded connection.
func (p *apiProxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Reopen listens again at the proxy's address.
func (p *apiProxy) Reopen(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := net.Listen("tcp", p.addr)
		if err == nil {
			p.serve(l)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy's address %s: %v", p.addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runIDOf is the run id an environment gives dbduel.
func runIDOf(env []string) string {
	for _, kv := range env {
		if id, ok := strings.CutPrefix(kv, "DBDUEL_RUN_ID="); ok {
			return id
		}
	}
	return ""
}
