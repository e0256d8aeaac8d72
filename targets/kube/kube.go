// Package kube is a server in a Kubernetes pod, driven through client-go:
// a bare Pod in the Guaranteed QoS class (requests equal to limits), its
// environment in a Secret, dbduel's configuration in a ConfigMap, a
// Service in front of it, the datadir in an emptyDir or a
// PersistentVolumeClaim, and the benchmark client where the SPEC says:
// dbduel's agent in a pod beside it on its node (over pods/attach), or
// dbduel's own process. Everything carries the run's label and is deleted
// on Stop and by `dbduel clean`.
package kube

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/engine/result"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/ledger"
	"github.com/dbduel/dbduel/targets/provision"
	"github.com/dbduel/dbduel/targets/specs"
)

// readyTimeout bounds a pod's start: scheduling, the image (present on
// the node: nothing is pulled from here) and the server's first start.
const readyTimeout = 180 * time.Second

// Server is one server pod and what it needs.
type Server struct {
	name, spec, runID string
	o                 Options
	cfg               *rest.Config
	cs                kubernetes.Interface
	kubeconfig, kctx  string // what the run's kubeconfig and context were
	ns                string
	podName           string // also the Service's, the PVC's
	secretName        string
	configName        string
	agentName         string
	serverPort        int
	ep                targets.Endpoint
	pod               *corev1.Pod // as last read, Ready
	progress          io.Writer
	noted             bool      // the ledger knows where this target's objects are
	apiFailingSince   time.Time // Health's first failed read of a failing streak
	// The agent pod on the server's node: the binary copied in, how its
	// client is made, the sampler reading the pods' cgroups there and the
	// paths it found them at.
	binary          string
	dial            container.AgentDialer
	group           container.AgentGrouper // agents=N's client of its agents
	agentUID        string
	samplerConn     *agentStream
	sampler         cgroupReader
	samplerClient   container.AgentClient // the sampler, also the counters' reader of agents=N
	cgPath, agentCg string
	// extra are the agent pods 2..N of agents=N.
	extra []*extraAgent
	// loadName is the pod of a client-node= agent on another node than
	// the server's ("" when the load runs in the sampler's pod).
	loadName string
}

// quietClientGo sends client-go's own log (klog: a stream's closing, a
// watch's retry) nowhere: dbduel says what went wrong in its errors, and
// klog would write over the terminal's screen.
var quietClientGo sync.Once

// QuietClientGo sends client-go's log nowhere, once per process (before
// any client-go call of a program that uses it from several goroutines:
// the logger is a plain global).
func QuietClientGo() { quietClientGo.Do(func() { klog.SetLogger(logr.Discard()) }) }

// New returns an unstarted k8s: target for SPEC (without "k8s:").
func New(name, spec, runID string) (*Server, error) {
	QuietClientGo()
	o, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	s := &Server{name: name, spec: "k8s:" + spec, runID: runID, o: o,
		podName: objectName(runID, name, ""), secretName: objectName(runID, name, "env"),
		configName: objectName(runID, name, "config"), agentName: objectName(runID, name, "client")}
	s.serverPort = s.protocol().Image.Port
	return s, nil
}

// SetProgress sends start-up notes to w.
func (s *Server) SetProgress(w io.Writer) { s.progress = w }

func (s *Server) Name() string               { return s.name }
func (s *Server) Kind() string               { return "container" }
func (s *Server) SpecRedacted() string       { return driver.Redact(s.spec) }
func (s *Server) Endpoint() targets.Endpoint { return s.ep }

// ClientInCluster says the benchmark client is dbduel's agent in the
// cluster: in a pod on the server's node (beside) or in the server's pod
// (netns).
func (s *Server) ClientInCluster() bool { return s.o.Client != "here" }

func (s *Server) protocol() *driver.Protocol {
	p, err := driver.Lookup(s.o.Protocol)
	if err != nil {
		panic("kube: unregistered protocol " + s.o.Protocol) // ParseSpec admits only registered ones
	}
	return p
}

// Prepare loads the kubeconfig (KUBECONFIG, else ~/.kube/config; the
// SPEC's context, else the current one) and checks the cluster answers.
func (s *Server) Prepare(ctx context.Context) error {
	if s.cs != nil {
		return nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: s.o.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return fmt.Errorf("k8s: read the kubeconfig: %w", err)
	}
	s.kctx = s.o.Context
	if s.kctx == "" {
		s.kctx = raw.CurrentContext
	}
	if _, ok := raw.Contexts[s.kctx]; !ok {
		return &specs.UsageError{Msg: fmt.Sprintf("k8s: no kubeconfig context %q (KUBECONFIG=%q): set KUBECONFIG or context=", s.kctx, os.Getenv("KUBECONFIG"))}
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	cfg.UserAgent = "dbduel"
	s.ns = s.o.Namespace
	if s.ns == "" {
		if s.ns, _, err = cc.Namespace(); err != nil || s.ns == "" {
			s.ns = "default"
		}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("k8s: the API server of context %s does not answer: %w", s.kctx, err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(cctx, s.ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return &specs.UsageError{Msg: fmt.Sprintf("k8s: namespace %q does not exist in context %s", s.ns, s.kctx)}
	}
	s.cfg, s.cs, s.kubeconfig = cfg, cs, os.Getenv("KUBECONFIG")
	return nil
}

// Start creates the server's objects, waits for its pod to be Ready and,
// for a client here, for the server to answer.
func (s *Server) Start(ctx context.Context) error {
	if err := s.Prepare(ctx); err != nil {
		return err
	}
	if err := ledger.NoteKube(s.runID, s.name, s.kubeconfig, s.kctx, s.ns); err != nil {
		return err
	}
	s.noted = true
	if s.o.Network == "host" {
		// The node's network: a port that is free here, which is the
		// node's network when the node is this machine; on another node a
		// taken port fails the server's start, by name.
		port, err := provision.FreePort()
		if err != nil {
			return err
		}
		s.serverPort = port
	}
	st, err := s.createConfig(ctx)
	if err != nil {
		return err
	}
	s.ep = st.Endpoint
	if s.o.Storage == "pvc" {
		if _, err := s.cs.CoreV1().PersistentVolumeClaims(s.ns).Create(ctx, s.claim(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("k8s: create the datadir's claim: %w", err)
		}
	}
	if _, err := s.cs.CoreV1().Services(s.ns).Create(ctx, s.service(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("k8s: create the service: %w", err)
	}
	if err := s.startPod(ctx, st.Cmd); err != nil {
		return err
	}
	if s.binary == "" {
		return nil
	}
	return s.startAgentPod(ctx)
}

// startPod creates the server pod and waits until it is Ready and reached.
func (s *Server) startPod(ctx context.Context, cmd []string) error {
	pod := s.serverPod(cmd)
	if s.pod != nil { // a restart: on the node the agent pod is on (its claim bound by now)
		pod.Spec.NodeName, pod.Spec.Affinity = s.pod.Spec.NodeName, nil
	}
	s.cgPath = ""
	if _, err := s.cs.CoreV1().Pods(s.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("k8s: create the server pod: %w", err)
	}
	pod, err := s.waitPod(ctx, s.podName, serverName, true)
	if err != nil {
		return err
	}
	s.pod = pod
	if err := s.setEndpoint(ctx); err != nil {
		return err
	}
	if s.o.Client == "here" {
		return s.waitAnswers(ctx)
	}
	return nil
}

// createConfig writes the Secret (the server's environment: its
// password) and the ConfigMap (dbduel's configuration file, the SPEC's
// cnf=), and returns the image's set-up.
func (s *Server) createConfig(ctx context.Context) (driver.ImageStart, error) {
	p := s.protocol()
	in := driver.ImageSetup{ConfigDir: configDir, Port: s.serverPort, Password: provision.NewPassword(),
		HostNetwork: s.o.Network == "host"}
	files := map[string]string{}
	if s.o.Cnf != "" {
		data, err := os.ReadFile(s.o.Cnf)
		if err != nil {
			return driver.ImageStart{}, err
		}
		files[p.Config.UserName] = string(data)
		in.UserConfig = configDir + "/" + p.Config.UserName
	}
	if p.Config.Name != "" {
		files[p.Config.Name] = string(p.Config.Render(in.UserConfig))
		in.ConfigFile = configDir + "/" + p.Config.Name
	}
	st := p.Image.Setup(in)
	env := map[string]string{}
	for _, kv := range append(append([]string{}, st.Env...), s.o.Env...) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	secret := &corev1.Secret{ObjectMeta: s.meta(s.secretName), StringData: env, Type: corev1.SecretTypeOpaque}
	if _, err := s.cs.CoreV1().Secrets(s.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return st, fmt.Errorf("k8s: create the server's secret: %w", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: s.meta(s.configName), Data: files}
	if _, err := s.cs.CoreV1().ConfigMaps(s.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return st, fmt.Errorf("k8s: create the server's config map: %w", err)
	}
	return st, nil
}

// setEndpoint is where the client reaches the server: the pod IP (from
// beside it, or here with via=pod), the Service's ClusterIP, or a node's
// address and the NodePort.
func (s *Server) setEndpoint(ctx context.Context) error {
	s.ep.Host, s.ep.Port = s.pod.Status.PodIP, s.serverPort
	if s.o.Network == "host" {
		// On the node's loopback: reached from beside it (an agent pod on
		// the node's network too), or here when the node is this machine.
		if s.o.Client == "here" && !isLocalAddress(s.pod.Status.HostIP) {
			return fmt.Errorf("k8s: network=host: the server listens on node %s's loopback, which client=here on this machine cannot reach: use client=beside", s.pod.Spec.NodeName)
		}
		s.ep.Host = "127.0.0.1"
		return nil
	}
	if s.o.Via == "service" || s.o.Via == "nodeport" {
		svc, err := s.cs.CoreV1().Services(s.ns).Get(ctx, s.podName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("k8s: read the service: %w", err)
		}
		s.ep.Host = svc.Spec.ClusterIP
		if s.o.Via == "nodeport" {
			s.ep.Host, s.ep.Port = s.pod.Status.HostIP, int(svc.Spec.Ports[0].NodePort)
		}
	}
	if s.ep.Host == "" {
		return fmt.Errorf("k8s: pod %s has no address", s.podName)
	}
	return nil
}

// waitAnswers connects until the server answers (a Ready pod's port is
// open; the server may still be finishing its start).
func (s *Server) waitAnswers(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		err := driver.Ping(ctx, s.ep, 2*time.Second)
		if err == nil {
			return driver.Ready(ctx, s.ep)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("k8s: the server in pod %s at %s did not answer within %s: %v", s.podName, s.ep.Host, readyTimeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Sample reads the server pod's cgroup on its node (through the agent
// pod's sampler): its CPU, memory and CPU-quota throttling; and the agent
// pod's CPU, the client's when it runs beside.
func (s *Server) Sample(ctx context.Context) (targets.Sample, error) {
	if s.sampler == nil || s.pod == nil {
		return targets.Sample{}, fmt.Errorf("k8s: no agent on the node reads the pod's cgroup")
	}
	uid := string(s.pod.UID)
	// With the client in the pod, the pod's cgroup holds both: the
	// server's figures are its container's.
	server := ""
	if s.o.Client == "netns" {
		// An empty id would read the whole pod's cgroup: the client's too.
		if server = containerID(s.pod, serverName); server == "" {
			return targets.Sample{}, fmt.Errorf("k8s: pod %s's server container has no runtime id yet", s.podName)
		}
	}
	u, err := s.sampler.Cgroup(ctx, cgroupMount, uid, s.cgPath, server)
	if err != nil {
		return targets.Sample{}, fmt.Errorf("k8s: the pod's cgroup: %w", err)
	}
	s.cgPath = u.Path
	out := targets.Sample{At: time.Now(), CPUNS: u.CPUNS, MemBytes: u.MemBytes,
		ThrottledNS: u.ThrottledNS, Periods: u.Periods, ThrottledPeriods: u.ThrottledPeriods}
	switch s.o.Client {
	case "netns":
		a, err := s.sampler.Cgroup(ctx, cgroupMount, uid, s.agentCg, containerID(s.pod, agentName))
		if err != nil {
			return targets.Sample{}, fmt.Errorf("k8s: the agent container's cgroup: %w", err)
		}
		s.agentCg, out.ClientCPUNS = a.Path, a.CPUNS
	case "beside":
		a, err := s.sampler.Cgroup(ctx, cgroupMount, s.agentUID, s.agentCg, "")
		if err != nil {
			return targets.Sample{}, fmt.Errorf("k8s: the agent pod's cgroup: %w", err)
		}
		s.agentCg, out.ClientCPUNS = a.Path, a.CPUNS
		if s.loadName != "" {
			// The load runs on another node, where the sampler cannot
			// read it: no client figure rather than the sampler's alone.
			out.ClientCPUNS = 0
			break
		}
		// The client is all the agents: without any one of them (on
		// another node, or its reading failed) no figure, not a part; the
		// server's figures stand.
		n, err := s.extraCPU(ctx)
		out.ClientCPUNS += n
		if err != nil || s.extraElsewhere() {
			out.ClientCPUNS = 0
		}
	}
	return out, nil
}

// containerID is a container's runtime id in pod ("" before it started).
func containerID(pod *corev1.Pod, name string) string {
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name == name {
			_, id, _ := strings.Cut(c.ContainerID, "://")
			return id
		}
	}
	return ""
}

// Restart gives a fresh server on the same data: a new pod on the claim.
// An emptyDir dies with its pod, so storage=emptydir cannot restart.
func (s *Server) Restart(ctx context.Context) error {
	if s.o.Storage != "pvc" {
		return &specs.UsageError{Msg: "k8s: an emptyDir datadir dies with its pod: restarting the server needs storage=CLASS:SIZE"}
	}
	if err := s.deletePod(ctx, s.podName); err != nil {
		return err
	}
	st, err := s.currentSetup(ctx)
	if err != nil {
		return err
	}
	return s.startPod(ctx, st)
}

// currentSetup is the server's arguments as its pod had them.
func (s *Server) currentSetup(context.Context) ([]string, error) {
	if s.pod == nil {
		return nil, fmt.Errorf("k8s: the server was never started")
	}
	args := s.pod.Spec.Containers[0].Args
	return args[:len(args)-len(s.o.Args)], nil
}

// Describe reads the pod back: its node, QoS class, runtime class,
// limits, address and datadir.
func (s *Server) Describe(ctx context.Context) (result.Target, error) {
	t := result.Target{Name: s.name, Kind: "container", SpecRedacted: s.SpecRedacted()}
	pod, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, s.podName, metav1.GetOptions{})
	if err != nil {
		return t, fmt.Errorf("k8s: read pod %s: %w", s.podName, err)
	}
	v, datadir, err := driver.ServerInfo(ctx, s.ep)
	if err != nil {
		return t, err
	}
	t.ServerVersion = v
	d := &t.Described
	d.Engine, d.Image, d.Host = "kubernetes", s.o.Image, s.nodeHost(ctx, pod.Spec.NodeName)
	d.KubeContext, d.Namespace, d.Pod, d.Node = s.kctx, s.ns, pod.Name, pod.Spec.NodeName
	d.QOSClass = string(pod.Status.QOSClass)
	if pod.Spec.RuntimeClassName != nil {
		d.RuntimeClass = *pod.Spec.RuntimeClassName
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == serverName {
			d.ImageID = cs.ImageID
		}
	}
	c := pod.Spec.Containers[0]
	d.CPUs = float64(c.Resources.Limits.Cpu().MilliValue()) / 1000
	d.MemoryLimitBytes = c.Resources.Limits.Memory().Value()
	d.NetworkMode, d.NetworkPath = s.o.Network, s.networkPath()
	// The server container's profile is RuntimeDefault (serverPod): the
	// runtime applies its filter, or the container does not start.
	d.SeccompMode = "filter"
	if sc := pod.Spec.Containers[0].SecurityContext; sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		d.SeccompMode = ""
	}
	d.Address = s.ep.Host
	d.ClientPlacement = s.o.Client
	if s.o.Agents > 1 {
		d.ClientAgents = s.o.Agents
	}
	if s.o.Client == "beside" {
		d.ClientNodes = s.clientNodes()
	}
	if s.cgPath == "" && s.sampler != nil {
		_, _ = s.Sample(ctx) // finds the cgroup; Sample's error says it again in the run
	}
	d.CgroupPath = s.cgPath
	d.Datadir = &result.Datadir{Kind: "emptydir", Path: datadir}
	if s.o.Storage == "pvc" {
		d.Datadir.Kind, d.StorageClass = "pvc", s.o.StorageClass
	}
	return t, nil
}

// nodeHost is the machine a node is: "local" when its address is one of
// this machine's (a node of a cluster on this host), else its address.
func (s *Server) nodeHost(ctx context.Context, name string) string {
	node, err := s.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return name // a user without nodes/get: the node's name is what is known
	}
	var addr string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP || (addr == "" && a.Type == corev1.NodeExternalIP) {
			addr = a.Address
		}
	}
	if addr == "" {
		return name
	}
	if isLocalAddress(addr) {
		return "local"
	}
	return addr
}

// isLocalAddress says addr is an address of one of this machine's interfaces.
func isLocalAddress(addr string) bool {
	ip := net.ParseIP(addr)
	ifAddrs, err := net.InterfaceAddrs()
	if ip == nil || err != nil {
		return false
	}
	for _, a := range ifAddrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// networkPath names the path the client's packets take to the server.
func (s *Server) networkPath() string {
	switch {
	case s.o.Client == "netns":
		return "pod-loopback"
	case s.o.Network == "host":
		return "host"
	case s.o.Via == "service":
		return "cluster-ip"
	case s.o.Via == "nodeport":
		return "node-port"
	}
	return "pod-ip"
}

// Stop deletes every object the target made and waits until its pods
// are gone (idempotent).
func (s *Server) Stop(ctx context.Context) error {
	s.samplerConn.close()
	s.samplerConn, s.sampler, s.samplerClient = nil, nil, nil
	if s.cs == nil || !s.noted {
		return nil
	}
	// An API server that does not answer is asked once, briefly, not
	// through every delete and wait: the note stays, and clean finds the
	// objects through it.
	if err := s.apiAnswers(ctx); err != nil {
		return fmt.Errorf("the Kubernetes objects of target %s are left behind: %s; `dbduel clean --run %s` deletes them once it answers", s.name, s.apiUnreachable(err), s.runID)
	}
	if err := deleteRun(ctx, s.cs, s.ns, s.runID, labelValue(s.name)); err != nil {
		return err
	}
	ledger.ForgetKube(s.runID, s.name)
	s.noted = false
	return nil
}

// stopPodTimeout bounds a restart's wait for the kubelet to confirm the old
// server's end: its grace period (10 s), then the kill and the unmounts.
const stopPodTimeout = 40 * time.Second

// deletePod stops the server pod as a restart stops a server: SIGTERM and
// its grace period, and waits until the kubelet confirms the containers
// ended and the volumes are unmounted (the API keeps a pod deleted with a
// grace period until then). Not at once (grace 0): that removes the pod
// from the API while its server still runs, and the next pod would start a
// second server on the same claim.
func (s *Server) deletePod(ctx context.Context, name string) error {
	err := s.cs.CoreV1().Pods(s.ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("k8s: delete pod %s: %w", name, err)
	}
	wctx, cancel := context.WithTimeout(ctx, stopPodTimeout)
	defer cancel()
	err = waitGone(wctx, s.cs, s.ns, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return fmt.Errorf("k8s: the kubelet did not confirm the end of pod %s within %s (its node NotReady?): not starting a second server on its data", name, stopPodTimeout)
	}
	return err
}
