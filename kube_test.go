//go:build k8s

// The k8s: target's tests, on the test cluster (scripts/k8s-cluster.sh up;
// KUBECONFIG from its env): .ci/run runs them after bringing it up with
// `go test -tags k8s -run Kube .`.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets/kube"
	"github.com/dbduel/dbduel/targets/ledger"
)

// kubeClient is a client of the test cluster (KUBECONFIG must name it).
func kubeClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	kube.QuietClientGo() // before any client-go call: in-process runs set its logger too
	if os.Getenv("KUBECONFIG") == "" {
		t.Fatal("KUBECONFIG is not set: eval \"$(scripts/k8s-cluster.sh env)\" after scripts/k8s-cluster.sh up")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kubeLeftovers counts a run's labelled objects in the default namespace.
func kubeLeftovers(t *testing.T, cs kubernetes.Interface, runID string) []string {
	t.Helper()
	ctx := context.Background()
	lo := metav1.ListOptions{LabelSelector: ledger.Label + "=" + runID}
	var left []string
	pods, err := cs.CoreV1().Pods("default").List(ctx, lo)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		left = append(left, "pod/"+p.Name)
	}
	svcs, _ := cs.CoreV1().Services("default").List(ctx, lo)
	for _, s := range svcs.Items {
		left = append(left, "service/"+s.Name)
	}
	secrets, _ := cs.CoreV1().Secrets("default").List(ctx, lo)
	for _, s := range secrets.Items {
		left = append(left, "secret/"+s.Name)
	}
	cms, _ := cs.CoreV1().ConfigMaps("default").List(ctx, lo)
	for _, c := range cms.Items {
		left = append(left, "configmap/"+c.Name)
	}
	claims, _ := cs.CoreV1().PersistentVolumeClaims("default").List(ctx, lo)
	for _, c := range claims.Items {
		left = append(left, "persistentvolumeclaim/"+c.Name)
	}
	return left
}

// exactCounts checks that r has want measured runs, each counted by its
// server exactly as dbduel counted it.
func exactCounts(t *testing.T, r *result.Result, want int) {
	t.Helper()
	measured := 0
	for _, run := range r.Runs {
		if run.Warmup {
			continue
		}
		measured++
		if h := run.Honesty; h == nil || h.ServerQueries == 0 || h.ServerQueries != h.DbduelQueries {
			t.Errorf("%s run %d: the server's count is not dbduel's: %+v", run.Target, run.Index, run.Honesty)
		}
	}
	if measured != want {
		t.Errorf("%d measured runs, want %d", measured, want)
	}
}

// waitVolumesGone waits for the volumes bound to a run's claims to go:
// the class reclaims them (Delete) once dbduel has deleted the claims.
func waitVolumesGone(t *testing.T, cs kubernetes.Interface, runID string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		pvs, err := cs.CoreV1().PersistentVolumes().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		left = left[:0]
		for _, pv := range pvs.Items {
			if ref := pv.Spec.ClaimRef; ref != nil && strings.HasPrefix(ref.Name, "dbduel-"+runID+"-") {
				left = append(left, pv.Name+" ("+string(pv.Status.Phase)+")")
			}
		}
		if len(left) == 0 {
			return
		}
	}
	t.Fatalf("volumes of run %s's claims still there after a minute: %v", runID, left)
}

// One image natively, in Docker and in a pod, interleaved: each run's
// queries as the server counted them, the pod read back from the API.
func TestKubeNativeVsDockerVsPod(t *testing.T) {
	cs := kubeClient(t)
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	image := testImage(t)
	_, stderr, code := dbduelWith(t, []string{runEnv(runID), agentEnv(t)}, "run", "oltp_point_select",
		"--target", "native=local:mariadbd", "--target", "docker=docker:"+image+",memory=1g,cpus=1",
		"--target", "pod=k8s:"+image, "--target", "podhere=k8s:"+image+",client=here,via=service,cpus=0.5,memory=512m",
		"--runs", "2", "--time", "3", "--threads", "2", "--table-size", "2000", "--cooldown", "0", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]result.Target{}
	for _, tg := range r.Targets {
		byName[tg.Name] = tg
	}
	pod := byName["pod"].Described
	if pod.Engine != "kubernetes" || pod.QOSClass != "Guaranteed" || pod.Node == "" || pod.ClientPlacement != "beside" ||
		pod.CPUs != 1 || pod.MemoryLimitBytes != 1<<30 || pod.NetworkPath != "pod-ip" || pod.Namespace != "default" ||
		pod.ImageID == "" || pod.Datadir == nil || pod.Datadir.Kind != "emptydir" || pod.SeccompMode != "filter" {
		t.Fatalf("pod not read back: %+v", pod)
	}
	if here := byName["podhere"].Described; here.ClientPlacement != "here" || here.NetworkPath != "cluster-ip" || here.QOSClass != "Guaranteed" {
		t.Fatalf("client=here,via=service not read back: %+v", here)
	}
	if byName["pod"].ServerVersion != byName["native"].ServerVersion {
		t.Fatalf("versions differ: pod %s, native %s", byName["pod"].ServerVersion, byName["native"].ServerVersion)
	}
	measured := map[string]int{}
	for _, run := range r.Runs {
		if run.Warmup {
			continue
		}
		measured[run.Target]++
		// The server's own count of the run's statements is dbduel's.
		if h := run.Honesty; h == nil || h.ServerQueries == 0 || h.ServerQueries != h.DbduelQueries {
			t.Errorf("%s run %d: the server's count is not dbduel's: %+v", run.Target, run.Index, run.Honesty)
		}
	}
	// The pods' CPU from their cgroups on the node, read by the agent there;
	// beside, the agent pod's (the client's) too.
	for _, run := range r.Runs {
		if run.Target != "pod" && run.Target != "podhere" {
			continue
		}
		server, client := peakCPU(run)
		if server <= 0 || (run.Target == "pod") != (client > 0) {
			t.Fatalf("%s run %d: server CPU %.3f cores, client CPU %.3f cores", run.Target, run.Index, server, client)
		}
	}
	if !strings.HasPrefix(pod.CgroupPath, "kubepods/pod") {
		t.Fatalf("the Guaranteed pod's cgroup: %q", pod.CgroupPath)
	}
	for _, name := range []string{"native", "docker", "pod", "podhere"} {
		if measured[name] != 2 {
			t.Fatalf("%s: %d measured runs, want 2 (%v)", name, measured[name], measured)
		}
	}
	if left := kubeLeftovers(t, cs, runID); len(left) != 0 {
		t.Fatalf("left in the cluster: %v", left)
	}
	if _, err := os.Stat(filepath.Join(ledger.Dir(), "kube-"+runID+"-pod.txt")); !os.IsNotExist(err) {
		t.Fatalf("the run's cluster note is still there: %v", err)
	}
}

// A context the kubeconfig lacks is refused in one line.
func TestKubeUnknownContext(t *testing.T) {
	kubeClient(t)
	_, stderr, code := dbduel(t, "run", "--target", "x=k8s:mariadb,context=nowhere", "--time", "1")
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, `no kubeconfig context "nowhere"`) {
		t.Errorf("an unknown context: exit %d, %q", code, stderr)
	}
}

// network=host: the server pod on the node's network, listening on its
// loopback; reached from an agent pod on the node's network beside it, and
// from here (the test node is this machine). Counts exact, the path read
// back as host.
func TestKubeHostNetwork(t *testing.T) {
	cs := kubeClient(t)
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	image := testImage(t)
	_, stderr, code := dbduelWith(t, []string{runEnv(runID), agentEnv(t)}, "run", "oltp_point_select",
		"--target", "hostbeside=k8s:"+image+",network=host,cpus=0.5,memory=512m",
		"--target", "hosthere=k8s:"+image+",network=host,client=here,cpus=0.5,memory=512m",
		"--runs", "1", "--time", "3", "--threads", "2", "--table-size", "1000", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range r.Targets {
		d := tg.Described
		if d.Engine != "kubernetes" || d.NetworkMode != "host" || d.NetworkPath != "host" || d.Address != "127.0.0.1" || d.Host != "local" {
			t.Errorf("%s not read back as on the node's network: %+v", tg.Name, d)
		}
	}
	exactCounts(t, r, 2)
	if left := kubeLeftovers(t, cs, runID); len(left) != 0 {
		t.Fatalf("left in the cluster: %v", left)
	}
}

// storage=CLASS:SIZE with --restart-between-runs: the claim of the
// cluster's class binds on the pinned node (the pod placed through the
// scheduler), every run gets a new server pod on the same claim, and the
// tables prepared once are still there (each run's count exact: a fresh
// datadir would have no sbtest1). The claim goes with the run, and its
// volume with the claim.
func TestKubeClaimRestart(t *testing.T) {
	cs := kubeClient(t)
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	done := make(chan string, 1)
	go func() {
		_, stderr, code := dbduelWith(t, []string{runEnv(runID), agentEnv(t)}, "run", "oltp_point_select",
			"--target", "claim=k8s:"+testImage(t)+",node=dbduel-k8s-node,storage=dbduel-local:1Gi,cpus=0.5,memory=512m",
			"--restart-between-runs", "--runs", "2", "--time", "2", "--threads", "2", "--table-size", "1000", "--cooldown", "0", "--no-tui", "-o", out)
		if code != 0 {
			stderr = fmt.Sprintf("exit %d: %s", code, stderr)
		} else {
			stderr = ""
		}
		done <- stderr
	}()
	servers, claims := map[string]bool{}, map[string]bool{}
	for waiting := true; waiting; {
		select {
		case failed := <-done:
			if failed != "" {
				t.Fatal(failed)
			}
			waiting = false
		case <-time.After(300 * time.Millisecond):
			pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: ledger.Label + "=" + runID + ",dbduel.role=server"})
			if err != nil {
				continue
			}
			for _, p := range pods.Items {
				if p.Status.Phase != corev1.PodRunning {
					continue
				}
				servers[string(p.UID)] = true
				for _, v := range p.Spec.Volumes {
					if v.PersistentVolumeClaim != nil {
						claims[v.PersistentVolumeClaim.ClaimName+"@"+p.Spec.NodeName] = true
					}
				}
			}
		}
	}
	if len(servers) < 3 || len(claims) != 1 {
		t.Errorf("%d server pods on claims %v: want a new pod for each of the warm-up and 2 runs, one claim on dbduel-k8s-node", len(servers), claims)
	}
	for c := range claims {
		if !strings.HasSuffix(c, "@dbduel-k8s-node") {
			t.Errorf("claim's pod on %s, want dbduel-k8s-node", c)
		}
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Targets[0].Described; d.StorageClass != "dbduel-local" || d.Datadir == nil || d.Datadir.Kind != "pvc" {
		t.Errorf("described: storage class %q, datadir %+v", d.StorageClass, d.Datadir)
	}
	exactCounts(t, r, 2)
	if left := kubeLeftovers(t, cs, runID); len(left) != 0 {
		t.Fatalf("left in the cluster: %v", left)
	}
	waitVolumesGone(t, cs, runID)
}

// agents=3: one target's threads shared by three agent pods beside the
// server, started and ended together. The server's count of every run is
// exactly the sum of the agents' statements, the merged histogram holds
// every event, the per-thread spread covers all four threads, the client
// CPU is the agents' together, and three agent pods ran. Beside it,
// client=netns: the agent a second container of the server's pod, the
// pod still Guaranteed, the server's CPU read from its own container's
// cgroup and the client's from the agent's.
func TestKubeAgents(t *testing.T) {
	cs := kubeClient(t)
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	image := testImage(t)
	type outcome struct {
		stderr string
		code   int
	}
	done := make(chan outcome, 1)
	go func() {
		_, stderr, code := dbduelWith(t, []string{runEnv(runID), agentEnv(t)}, "run", "oltp_point_select",
			"--target", "pods=k8s:"+image+",agents=3,cpus=0.5,memory=512m",
			"--target", "podns=k8s:"+image+",client=netns,client-cpus=0.25,cpus=0.5,memory=512m",
			"--runs", "2", "--time", "3", "--threads", "4", "--table-size", "2000", "--cooldown", "0", "--no-tui", "-o", out)
		done <- outcome{stderr, code}
	}()
	// The agent pods running at once, as the API shows them during the run.
	agents := 0
	var o outcome
	for waiting := true; waiting; {
		select {
		case o = <-done:
			waiting = false
		case <-time.After(300 * time.Millisecond):
			pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: ledger.Label + "=" + runID + ",dbduel.target=pods,dbduel.role=agent"})
			if err == nil {
				running := 0
				for _, p := range pods.Items {
					if p.Status.Phase == corev1.PodRunning {
						running++
					}
				}
				agents = max(agents, running)
			}
		}
	}
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if agents != 3 {
		t.Errorf("%d agent pods ran at once, want 3", agents)
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Targets[0].Described; d.ClientPlacement != "beside" || d.ClientAgents != 3 || d.Engine != "kubernetes" {
		t.Fatalf("not read back as three agents beside: %+v", d)
	}
	ns := r.Targets[1].Described
	if ns.ClientPlacement != "netns" || ns.NetworkPath != "pod-loopback" || ns.QOSClass != "Guaranteed" || ns.CPUs != 0.5 ||
		strings.Count(ns.CgroupPath, "/") != 2 || !strings.HasPrefix(ns.CgroupPath, "kubepods/pod") {
		t.Fatalf("client=netns not read back (the server's own container's cgroup, the pod Guaranteed): %+v", ns)
	}
	measured := 0
	for _, run := range r.Runs {
		if run.Warmup {
			continue
		}
		measured++
		if run.Target == "podns" {
			checkNetnsRun(t, run)
			continue
		}
		if h := run.Honesty; h == nil || h.ServerQueries == 0 || h.ServerQueries != h.DbduelQueries {
			t.Errorf("run %d: the server's count is not the agents' sum: %+v", run.Index, run.Honesty)
		}
		s := run.Summary
		hist, err := hdrhistogram.Decode([]byte(run.Histogram))
		if err != nil || uint64(hist.TotalCount()) != s.Events || float64(hist.ValueAtQuantile(95)) != s.P95US {
			t.Errorf("run %d: merged histogram (%v) holds %d of %d events, p95 %g", run.Index, err, hist.TotalCount(), s.Events, s.P95US)
		}
		if f := run.Fairness; f == nil || math.Abs(f.EventsAvg*4-float64(s.Events)) > 0.5 {
			t.Errorf("run %d: per-thread mean %+v is not the events over 4 threads (%d)", run.Index, run.Fairness, s.Events)
		}
		var ivEvents uint64
		client := 0.0
		for _, iv := range run.Intervals {
			ivEvents += iv.Events
			c, _ := iv.Telemetry.Get(result.TelClientCPUCores)
			client = max(client, c)
		}
		if len(run.Intervals) != 3 || ivEvents == 0 || ivEvents > s.Events || client <= 0 {
			t.Errorf("run %d: %d intervals, %d of %d events, client CPU %.3f", run.Index, len(run.Intervals), ivEvents, s.Events, client)
		}
	}
	if measured != 4 {
		t.Errorf("%d measured runs, want 4", measured)
	}
	if left := kubeLeftovers(t, cs, runID); len(left) != 0 {
		t.Fatalf("left in the cluster: %v", left)
	}
}

// peakCPU is a run's highest server and client CPU of an interval (cores).
func peakCPU(run result.Run) (server, client float64) {
	for _, iv := range run.Intervals {
		v, _ := iv.Telemetry.Get(result.TelServerCPUCores)
		server = max(server, v)
		c, _ := iv.Telemetry.Get(result.TelClientCPUCores)
		client = max(client, c)
	}
	return server, client
}

// checkNetnsRun: a client=netns run counted exactly, with the server's and
// the client's CPU each from its own container.
func checkNetnsRun(t *testing.T, run result.Run) {
	t.Helper()
	if h := run.Honesty; h == nil || h.ServerQueries == 0 || h.ServerQueries != h.DbduelQueries {
		t.Errorf("podns run %d: the server's count is not dbduel's: %+v", run.Index, run.Honesty)
	}
	server, client := peakCPU(run)
	// Each container is held to its own quota (0.5 and 0.25 CPUs).
	if server <= 0 || client <= 0 || server > 0.6 || client > 0.35 {
		t.Errorf("podns run %d: server CPU %.3f cores (quota 0.5), client %.3f (quota 0.25)", run.Index, server, client)
	}
}

// Two nodes: the test cluster's second node (scripts/k8s-cluster.sh node2)
// for this test alone, so that no other test's pods land on it.
func TestKubeTwoNodes(t *testing.T) {
	cs := kubeClient(t)
	node2 := func(args ...string) {
		t.Helper()
		out, err := exec.Command("bash", append([]string{"scripts/k8s-cluster.sh", "node2"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("k8s-cluster.sh node2 %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	node2("up", testImage(t))
	t.Cleanup(func() { node2("down") })
	t.Run("agents over nodes", func(t *testing.T) { kubeAgentsOverNodes(t, cs) })
	t.Run("explain rungs", func(t *testing.T) { kubeExplainRungs(t, cs) })
}

// Agents on another node than the server's: client-node= moves the one
// agent there, agents=2,spread=nodes puts one on each node. The API shows
// the agent pods where they were asked to be, the servers' counts are
// exact (the sum of the agents'), described names the nodes, and no
// client CPU is claimed for an agent the server's node cannot read.
func kubeAgentsOverNodes(t *testing.T, cs kubernetes.Interface) {
	const home, other = "dbduel-k8s-node", "dbduel-k8s-node2"
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	image := testImage(t)
	done := make(chan struct {
		stderr string
		code   int
	}, 1)
	go func() {
		_, stderr, code := dbduelWith(t, []string{runEnv(runID), agentEnv(t)}, "run", "oltp_point_select",
			"--target", "far=k8s:"+image+",node="+home+",client-node="+other+",cpus=0.5,memory=512m",
			"--target", "spread=k8s:"+image+",node="+home+",agents=2,spread=nodes,cpus=0.5,memory=512m",
			"--runs", "2", "--time", "3", "--threads", "4", "--table-size", "2000", "--cooldown", "0", "--no-tui", "-o", out)
		done <- struct {
			stderr string
			code   int
		}{stderr, code}
	}()
	// Where the API shows each target's running agent pods.
	placed := map[string]bool{}
	for waiting := true; waiting; {
		select {
		case o := <-done:
			if o.code != 0 {
				t.Fatalf("exit %d: %s", o.code, o.stderr)
			}
			waiting = false
		case <-time.After(300 * time.Millisecond):
			pods, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{LabelSelector: ledger.Label + "=" + runID + ",dbduel.role=agent"})
			if err != nil {
				continue
			}
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					placed[p.Labels["dbduel.target"]+"@"+p.Spec.NodeName] = true
				}
			}
		}
	}
	// far's sampler stays on the server's node, its load runs on the other.
	for _, want := range []string{"far@" + home, "far@" + other, "spread@" + home, "spread@" + other} {
		if !placed[want] {
			t.Errorf("no agent pod ran as %s (ran: %v)", want, placed)
		}
	}
	r, err := result.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	wantNodes := map[string]string{"far": other, "spread": home + "," + other}
	for _, tg := range r.Targets {
		d := tg.Described
		if d.Node != home || d.ClientPlacement != "beside" || strings.Join(d.ClientNodes, ",") != wantNodes[tg.Name] {
			t.Errorf("%s: node %q, client %s on %v; want the server on %s, the client on %s", tg.Name, d.Node, d.ClientPlacement, d.ClientNodes, home, wantNodes[tg.Name])
		}
	}
	exactCounts(t, r, 4) // the server's count is the agents' sum
	for _, run := range r.Runs {
		if server, client := peakCPU(run); !run.Warmup && (server <= 0 || client != 0) {
			t.Errorf("%s run %d: server CPU %.3f cores, client %.3f (want the server's, and none claimed for agents elsewhere)", run.Target, run.Index, server, client)
		}
	}
	if left := kubeLeftovers(t, cs, runID); len(left) != 0 {
		t.Fatalf("left in the cluster: %v", left)
	}
}

// explain --k8s: Kubernetes's rungs on the test cluster, from Docker's
// host-bind rung through a container of the pods' size to a pod on the
// node's network, on its pod IP, behind its ClusterIP and NodePort, with
// the client beside it, and on the other node. Every rung valid (its
// evidence shows the engine, path, size and client node it claims), a
// paired step with its CI, nothing left.
func kubeExplainRungs(t *testing.T, cs kubernetes.Interface) {
	runID := newRunID()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := dbduelWith(t, []string{runEnv(runID), agentEnv(t)}, "explain", "oltp_point_select",
		"--native", "local:mariadbd", "--image", testImage(t), "--k8s", "--rungs", "pod-clusterip,pod-nodeport,pod-other-node,pod-pvc", "--k8s-storage", "dbduel-local:1Gi",
		"--server-time=false", "--threads", "2", "--time", "2", "--runs", "2", "--table-size", "1000", "--cooldown", "0", "--no-tui", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := result.ReadFile(out)
	if err != nil || r.Explain == nil {
		t.Fatalf("result: %v", err)
	}
	var names []string
	paths, datadirs := map[string]string{}, map[string]string{}
	for _, rg := range r.Explain.Rungs {
		names = append(names, rg.Name)
		paths[rg.Name], _ = rg.Evidence["network_path"].(string)
		datadirs[rg.Name], _ = rg.Evidence["datadir_kind"].(string)
		if !rg.Valid {
			t.Errorf("%s: invalid: %s (evidence %v)", rg.Name, rg.Invalid, rg.Evidence)
		}
		if rg.Name != "native" && (rg.N != 2 || !rg.HasCI || rg.CILowPct > rg.DeltaPct || rg.CIHighPct < rg.DeltaPct) {
			t.Errorf("%s: delta %.1f%% CI [%.1f, %.1f] n=%d", rg.Name, rg.DeltaPct, rg.CILowPct, rg.CIHighPct, rg.N)
		}
	}
	if got := strings.Join(names, " "); got != "native host-bind quota-pod-size pod-hostnet pod-ip pod-clusterip pod-nodeport pod-beside pod-other-node pod-pvc" {
		t.Fatalf("rungs %s", got)
	}
	want := map[string]string{"pod-hostnet": "host", "pod-ip": "pod-ip", "pod-clusterip": "cluster-ip", "pod-nodeport": "node-port", "pod-beside": "pod-ip", "pod-other-node": "pod-ip", "pod-pvc": "pod-ip"}
	for name, path := range want {
		if paths[name] != path {
			t.Errorf("%s: network path %q, want %q", name, paths[name], path)
		}
	}
	// The claim was provisioned (a local volume of the cluster's class, on
	// the pinned node through the scheduler) and read back as the datadir.
	if datadirs["pod-pvc"] != "pvc" || datadirs["pod-beside"] != "emptydir" {
		t.Errorf("datadirs: pod-pvc %q, pod-beside %q", datadirs["pod-pvc"], datadirs["pod-beside"])
	}
	for _, tg := range r.Targets {
		if d := tg.Described; tg.Name == "pod-pvc" && (d.StorageClass != "dbduel-local" || d.Node != "dbduel-k8s-node") {
			t.Errorf("pod-pvc: storage class %q on %q", d.StorageClass, d.Node)
		}
	}
	t.Logf("waterfall:\n%s", stdout)
	if left := kubeLeftovers(t, cs, runID); len(left) != 0 {
		t.Fatalf("left in the cluster: %v", left)
	}
	waitVolumesGone(t, cs, runID)
	if n := leftovers(t, runID); n != 0 {
		t.Fatalf("%d things of run %s left", n, runID)
	}
}
