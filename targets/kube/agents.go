package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dbduel/dbduel/targets/container"
)

// extraAgent is one of the agent pods 2..N of agents=N: its main process
// runs a share of the threads (the first agent pod, with the sampler, is
// the Server's own).
type extraAgent struct {
	name, node string
	uid, cg    string
	conn       *agentStream
}

// startGroup starts agent pods 2..N (on the server's node, or spread over
// the nodes) and makes the client a group of all N agents: each runs its
// share of the threads, and the sampler, idle during runs, reads the
// server's counters at the group's barriers.
func (b *BesideClient) startGroup(ctx context.Context) error {
	nodes, err := b.agentNodes(ctx)
	if err != nil {
		return err
	}
	// Every pod is created before any is waited for: they start together.
	for i := 1; i < b.o.Agents; i++ {
		e := &extraAgent{name: objectName(b.runID, b.name, fmt.Sprintf("client%d", i+1)), node: nodes[i%len(nodes)]}
		if _, err := b.cs.CoreV1().Pods(b.ns).Create(ctx, b.agentPod(e.name, e.node, false), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("k8s: create agent pod %d of %d: %w", i+1, b.o.Agents, err)
		}
		b.extra = append(b.extra, e)
	}
	if b.group == nil {
		return fmt.Errorf("k8s: agents=%d: this dbduel cannot group agents", b.o.Agents)
	}
	members := []container.AgentClient{b.client}
	for _, e := range b.extra {
		pod, err := b.waitPod(ctx, e.name, agentName, false)
		if err != nil {
			return fmt.Errorf("dbduel's agent pod %s: %w", e.name, err)
		}
		e.uid = string(pod.UID)
		if err := b.copyBinary(ctx, e.name); err != nil {
			return fmt.Errorf("k8s: copy dbduel into pod %s: %w", e.name, err)
		}
		conn, c, err := b.attach(ctx, e.name)
		if err != nil {
			return err
		}
		e.conn = conn
		members = append(members, c)
	}
	g, err := b.group(members, b.samplerClient)
	if err != nil {
		return err
	}
	b.client = g
	return nil
}

// agentNodes are the nodes agent pods go to, the server's first:
// spread=nodes takes every Ready node that takes pods, by name.
func (s *Server) agentNodes(ctx context.Context) ([]string, error) {
	home := s.pod.Spec.NodeName
	if s.o.Spread != "nodes" {
		return []string{home}, nil
	}
	nodes, err := podNodes(ctx, s.cs)
	if err != nil {
		return nil, fmt.Errorf("k8s: spread=nodes lists the nodes: %w", err)
	}
	var others []string
	for _, n := range nodes {
		if n != home {
			others = append(others, n)
		}
	}
	return append([]string{home}, others...), nil
}

// PodNodes names the nodes of the kubeconfig's current context that take
// pods (Ready, schedulable, untainted), sorted.
func PodNodes(ctx context.Context) ([]string, error) {
	QuietClientGo()
	cs, err := clientFor("", "")
	if err != nil {
		return nil, fmt.Errorf("k8s: read the kubeconfig: %w", err)
	}
	nodes, err := podNodes(ctx, cs)
	if err != nil {
		return nil, fmt.Errorf("k8s: list the nodes: %w", err)
	}
	return nodes, nil
}

// podNodes names the cluster's nodes that take pods, sorted.
func podNodes(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range list.Items {
		if takesPods(&n) {
			names = append(names, n.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// takesPods says a node is Ready, schedulable and untainted for pods.
func takesPods(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// clientNodes are the nodes the load's agents run on, each once, the
// first agent's first.
func (s *Server) clientNodes() []string {
	first := s.pod.Spec.NodeName
	if s.loadName != "" {
		first = s.o.ClientNode
	}
	nodes := []string{first}
	for _, e := range s.extra {
		if !slices.Contains(nodes, e.node) {
			nodes = append(nodes, e.node)
		}
	}
	return nodes
}

// extraCPU is the CPU of agent pods 2..N on the sampler's node.
func (s *Server) extraCPU(ctx context.Context) (uint64, error) {
	var sum uint64
	for _, e := range s.extra {
		if e.node != s.pod.Spec.NodeName || e.uid == "" {
			continue
		}
		u, err := s.sampler.Cgroup(ctx, cgroupMount, e.uid, e.cg, "")
		if err != nil {
			return 0, fmt.Errorf("k8s: agent pod %s's cgroup: %w", e.name, err)
		}
		e.cg = u.Path
		sum += u.CPUNS
	}
	return sum, nil
}

// extraElsewhere says some agent pods run on other nodes than the
// sampler's, which cannot read their cgroups.
func (s *Server) extraElsewhere() bool {
	for _, e := range s.extra {
		if e.node != s.pod.Spec.NodeName {
			return true
		}
	}
	return false
}

// stopExtra ends agents 2..N (their pods go with the target's objects),
// all at once: each close may wait its 2 s.
func (s *Server) stopExtra() {
	var wg sync.WaitGroup
	for _, e := range s.extra {
		wg.Add(1)
		go func() { defer wg.Done(); e.conn.close() }()
	}
	wg.Wait()
	s.extra = nil
}
