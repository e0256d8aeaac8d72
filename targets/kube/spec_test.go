package kube

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	_ "github.com/dbduel/dbduel/engine/driver/mongo"
	_ "github.com/dbduel/dbduel/engine/driver/mysql"
	_ "github.com/dbduel/dbduel/engine/driver/postgres"
	"github.com/dbduel/dbduel/targets/specs"
)

func TestParseSpecDefaults(t *testing.T) {
	o, err := ParseSpec("dbduel-test/mariadb:10.11.14")
	if err != nil {
		t.Fatal(err)
	}
	if o.Protocol != "mysql" || o.CPUs != 1 || o.MemoryBytes != 1<<30 || o.Client != "beside" || o.Via != "pod" || o.Storage != "emptydir" {
		t.Fatalf("defaults: %+v", o)
	}
	o, err = ParseSpec("registry.local:5000/library/postgres:16,cpus=1.5,memory=2g,client=here,via=nodeport,storage=standard:10Gi,namespace=bench,node=n-1,env=A=b,args=--x=1")
	if err != nil {
		t.Fatal(err)
	}
	if o.Protocol != "postgres" || o.CPUs != 1.5 || o.MemoryBytes != 2<<30 || o.Client != "here" || o.Via != "nodeport" ||
		o.Storage != "pvc" || o.StorageClass != "standard" || o.StorageBytes != 10<<30 || o.Namespace != "bench" || o.Node != "n-1" ||
		len(o.Env) != 1 || len(o.Args) != 1 {
		t.Fatalf("keys: %+v", o)
	}
	if o, _ := ParseSpec("mariadb,client-node=n-2"); o.ClientNode != "n-2" || o.Client != "beside" || o.Node != "" {
		t.Fatalf("client-node: %+v", o)
	}
	if o, _ := ParseSpec("mariadb,network=host"); o.Network != "host" || o.Via != "pod" {
		t.Fatalf("network=host: %+v", o)
	}
	if o, _ := ParseSpec("mongo:7"); o.Protocol != "mongodb" || o.Network != "pod" {
		t.Fatalf("mongo: %+v", o)
	}
}

func TestParseSpecRefusals(t *testing.T) {
	for spec, want := range map[string]string{
		"":                                 "needs an image",
		"img,colour=blue":                  "unknown key",
		"busybox":                          "say protocol=",
		"mariadb,via=service":              "via=service is the path of a client=here",
		"mariadb,storage=lots":             "storage=",
		"mariadb,namespace=Bad_NS":         "namespace=",
		"mariadb,memory=1k":                "memory=",
		"mariadb,cpus=0":                   "cpus=",
		"mariadb,client=inside":            "client=",
		"mariadb,client=netns,via=service": "a client=netns reaches the server on its pod's loopback",
		"mariadb,client-cpus=0":            "client-cpus=",
		"mariadb,protocol=redis":           "protocol=",
		"mariadb,network=bridge":           "network=",
		"mariadb,network=host,client=here,via=service": "network=host puts the server on its node's loopback",
		"mariadb,agents=0":                           "agents=",
		"mariadb,agents=33":                          "agents=",
		"mariadb,agents=2,client=here":               "agents=2 are agent pods of a client=beside",
		"mariadb,spread=nodes":                       "spread=nodes spreads agents=N",
		"mariadb,spread=all,agents=2":                "spread=",
		"mariadb,agents=2,spread=nodes,network=host": "agents on other nodes cannot reach it",
		"mariadb,client-node=Node_2":                 "client-node=",
		"mariadb,client-node=n2,client=here":         "client-node= places a client=beside's one agent pod",
		"mariadb,client-node=n2,agents=2":            "agents=N go over the nodes with spread=nodes",
		"mariadb,client-node=n2,network=host":        "an agent on another node cannot reach it",
	} {
		_, err := ParseSpec(spec)
		var ue *specs.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line usage error with %q", spec, err, want)
		}
	}
}

// Kubernetes names are DNS labels of at most 63: long target names are
// cut and told apart by a hash.
func TestObjectNames(t *testing.T) {
	n := objectName("test-0123456789ab", "a_target", "client")
	if n != "dbduel-test-0123456789ab-a-target-client" {
		t.Fatal(n)
	}
	long1 := objectName("0123456789ab", strings.Repeat("x", 60)+"1", "")
	long2 := objectName("0123456789ab", strings.Repeat("x", 60)+"2", "")
	if len(long1) > 63 || long1 == long2 || !dnsLabel.MatchString(long1) {
		t.Fatalf("%q %q", long1, long2)
	}
}

// requests equal to limits, as Kubernetes compares them: the Guaranteed class.
func TestServerPodIsGuaranteed(t *testing.T) {
	s, err := New("pod", "dbduel-test/mariadb:10.11.14,cpus=1.5,memory=768m", "run1")
	if err != nil {
		t.Fatal(err)
	}
	s.ns = "default"
	pod := s.serverPod([]string{"--defaults-file=/etc/dbduel/dbduel.cnf"})
	c := pod.Spec.Containers[0]
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.Cmp(lim) != 0 || req.IsZero() {
			t.Fatalf("%s: request %s, limit %s", r, req.String(), lim.String())
		}
	}
	if c.Resources.Limits.Cpu().MilliValue() != 1500 || c.Resources.Limits.Memory().Value() != 768<<20 {
		t.Fatalf("limits %v", c.Resources.Limits)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Labels["dbduel.run"] != "run1" || pod.Labels["dbduel.role"] != "server" {
		t.Fatalf("pod %+v", pod.ObjectMeta)
	}
	if svc := s.service(); svc.Spec.Selector["dbduel.role"] != "server" || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Fatalf("service %+v", svc.Spec)
	}
	agent := s.agentPod(s.agentName, "node-1", true)
	if agent.Spec.NodeName != "node-1" || !agent.Spec.Containers[0].StdinOnce || agent.Labels["dbduel.role"] != "agent" {
		t.Fatalf("agent pod %+v", agent.Spec)
	}
	if !mountsCgroups(agent) {
		t.Fatal("the sampler's agent pod does not mount the node's cgroups")
	}
	// agents=N: pods 2..N run load only; they have no business with the
	// node's cgroups.
	if extra := s.agentPod("x-client2", "node-2", false); mountsCgroups(extra) || extra.Name != "x-client2" || extra.Spec.NodeName != "node-2" {
		t.Fatalf("extra agent pod %s on %s mounts cgroups: %v", extra.Name, extra.Spec.NodeName, mountsCgroups(extra))
	}
	if _, limited := agent.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; limited {
		t.Fatal("the agent pod has a CPU limit: it would be throttled, not Burstable")
	}
}

// network=host: the server and its agent on the node's network, the
// server on the node's loopback, probed there.
func TestHostNetworkPods(t *testing.T) {
	s, err := New("pod", "dbduel-test/mariadb:10.11.14,network=host", "run1")
	if err != nil {
		t.Fatal(err)
	}
	s.ns, s.serverPort = "default", 40123
	pod := s.serverPod(nil)
	probe := pod.Spec.Containers[0].ReadinessProbe.TCPSocket
	if !pod.Spec.HostNetwork || pod.Spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet || probe.Host != "127.0.0.1" || probe.Port.IntValue() != 40123 {
		t.Fatalf("server pod: hostNetwork %v, dns %s, probe %+v", pod.Spec.HostNetwork, pod.Spec.DNSPolicy, probe)
	}
	if agent := s.agentPod(s.agentName, "node-1", true); !agent.Spec.HostNetwork {
		t.Fatal("the agent pod is not on the node's network: it cannot reach the server's loopback")
	}
	if s.networkPath() != "host" {
		t.Fatalf("network path %q", s.networkPath())
	}
	s, _ = New("pod", "dbduel-test/mariadb:10.11.14", "run1")
	if s.serverPod(nil).Spec.HostNetwork || s.agentPod(s.agentName, "n", true).Spec.HostNetwork || s.networkPath() != "pod-ip" {
		t.Fatal("the default target is on the node's network")
	}
}

// A claim's pod is pinned through the scheduler (which tells a
// WaitForFirstConsumer claim its node), an emptyDir's by nodeName.
func TestClaimPodIsPinnedThroughTheScheduler(t *testing.T) {
	s, err := New("pod", "dbduel-test/mariadb:10.11.14,node=node-1,storage=local:1Gi", "run1")
	if err != nil {
		t.Fatal(err)
	}
	s.ns = "default"
	pod := s.serverPod(nil)
	if pod.Spec.NodeName != "" || pod.Spec.Affinity == nil {
		t.Fatalf("nodeName %q, affinity %+v: want the node through the scheduler", pod.Spec.NodeName, pod.Spec.Affinity)
	}
	f := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0]
	if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || len(f.Values) != 1 || f.Values[0] != "node-1" {
		t.Fatalf("node affinity %+v", f)
	}
	if v := pod.Spec.Volumes[1].PersistentVolumeClaim; v == nil || v.ClaimName != s.podName {
		t.Fatalf("datadir volume %+v: want the claim %s", pod.Spec.Volumes[1], s.podName)
	}
	if c := s.claim(); *c.Spec.StorageClassName != "local" || c.Spec.Resources.Requests.Storage().Value() != 1<<30 {
		t.Fatalf("claim %+v", c.Spec)
	}
	s, _ = New("pod", "dbduel-test/mariadb:10.11.14,node=node-1", "run1")
	if pod := s.serverPod(nil); pod.Spec.NodeName != "node-1" || pod.Spec.Affinity != nil {
		t.Fatalf("emptyDir pod: nodeName %q, affinity %+v", pod.Spec.NodeName, pod.Spec.Affinity)
	}
}

func TestPodStateSaysWhy(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "server", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "never pull"}}}}}}
	if done, why := podState(pod, "server", true); done || !strings.Contains(why, "not on the node") {
		t.Fatalf("%v %q", done, why)
	}
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
	if _, why := podState(pod, "server", true); !strings.Contains(why, "memory limit is too small") {
		t.Fatal(why)
	}
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	if done, why := podState(pod, "server", true); done || why != "" {
		t.Fatalf("running, not ready: %v %q", done, why)
	}
	pod.Status.ContainerStatuses[0].Ready = true
	if done, _ := podState(pod, "server", true); !done {
		t.Fatal("ready pod not done")
	}
}

// A running pod's fault names its end as the start's wait does, a
// deletion before the exit it causes, and an eviction by name.
func TestPodFault(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "server", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	if why := podFault(pod, "server"); why != "" {
		t.Fatalf("a running pod: %q", why)
	}
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}
	if why := podFault(pod, "server"); why != "pod p: its container server was OOM-killed (exit code 137): its memory limit is too small for the server" {
		t.Fatalf("OOM-killed: %q", why)
	}
	pod.DeletionTimestamp = &metav1.Time{}
	if why := podFault(pod, "server"); !strings.HasPrefix(why, "pod p: it is being deleted (by someone else") {
		t.Fatalf("deleted: %q", why)
	}
	pod.DeletionTimestamp = nil
	pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, "Evicted", "The node was low on resource: ephemeral-storage."
	if why := podFault(pod, "server"); !strings.HasPrefix(why, "pod p: it was evicted by its node (The node was low") {
		t.Fatalf("evicted: %q", why)
	}
}

func mountsCgroups(p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil {
			return true
		}
	}
	for _, m := range p.Spec.Containers[0].VolumeMounts {
		if m.MountPath == cgroupMount {
			return true
		}
	}
	return false
}

// spread=nodes takes the nodes that take pods: Ready, schedulable, and
// without a NoSchedule or NoExecute taint.
func TestTakesPods(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	for _, c := range []struct {
		n    corev1.Node
		want bool
	}{
		{corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, true},
		{corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}}, false},
		{corev1.Node{Spec: corev1.NodeSpec{Unschedulable: true}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, false},
		{corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, false},
		{corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}}}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}}}, true},
		{corev1.Node{}, false},
	} {
		if got := takesPods(&c.n); got != c.want {
			t.Errorf("%+v: takesPods %v, want %v", c.n.Spec, got, c.want)
		}
	}
}

// client=netns: the agent is a second container of the server's pod, with
// requests equal to limits (the pod stays Guaranteed), the server's
// seccomp profile and no view of the node's cgroups; it reaches the server
// on the pod's loopback, and the path says so.
func TestNetnsAgentInTheServerPod(t *testing.T) {
	s, err := New("pod", "dbduel-test/mariadb:10.11.14,client=netns,client-cpus=0.25", "run1")
	if err != nil {
		t.Fatal(err)
	}
	s.ns = "default"
	pod := s.serverPod(nil)
	if len(pod.Spec.Containers) != 2 || pod.Spec.Containers[1].Name != agentName {
		t.Fatalf("containers %d", len(pod.Spec.Containers))
	}
	for _, c := range pod.Spec.Containers {
		if !c.Resources.Requests.Cpu().Equal(*c.Resources.Limits.Cpu()) || !c.Resources.Requests.Memory().Equal(*c.Resources.Limits.Memory()) || c.Resources.Limits.Cpu().IsZero() {
			t.Fatalf("%s: requests %v, limits %v: the pod would not be Guaranteed", c.Name, c.Resources.Requests, c.Resources.Limits)
		}
		if sc := c.SecurityContext; sc == nil || sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Fatalf("%s runs without the runtime's seccomp filter", c.Name)
		}
	}
	if got := pod.Spec.Containers[1].Resources.Limits.Cpu().MilliValue(); got != 250 {
		t.Fatalf("agent container CPU %dm, want 250m", got)
	}
	if mountsCgroups(pod) {
		t.Fatal("the server's pod mounts the node's cgroups")
	}
	b := NewBesideClient(s, nil)
	b.ep.Host, s.serverPort = "10.1.2.3", 3306
	if ep := b.agentEndpoint(); ep.Host != "127.0.0.1" || ep.Port != 3306 || s.networkPath() != "pod-loopback" {
		t.Fatalf("the agent reaches %s:%d, path %s", ep.Host, ep.Port, s.networkPath())
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: serverName, ContainerID: "containerd://abc"}, {Name: agentName, ContainerID: "containerd://def"}}
	if containerID(pod, serverName) != "abc" || containerID(pod, agentName) != "def" || containerID(pod, "x") != "" {
		t.Fatal("container ids not read from the pod's status")
	}
}
