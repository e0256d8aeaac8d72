package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets/container"
)

// BesideClient is a server pod whose benchmark client is dbduel's agent
// in a pod of its own on the server's node (client=beside): the load is
// made where the database runs, over the pod network to the pod IP, and
// only results cross to dbduel, over the agent pod's attached stdin and
// stdout (the API server's pods/attach).
type BesideClient struct {
	*Server
	args   []string
	client container.AgentClient
	conn   *agentStream
}

// NewBesideClient wraps a server pod (with its agent set) with its client
// beside it; args are the workload's flags.
func NewBesideClient(s *Server, args []string) *BesideClient {
	return &BesideClient{Server: s, args: args}
}

// Start starts the server pod and the agent pod on its node, then
// attaches to the agent and points it at the server.
func (b *BesideClient) Start(ctx context.Context) error {
	if err := b.Server.Start(ctx); err != nil {
		return err
	}
	if b.o.Client == "netns" {
		return b.startNetns(ctx)
	}
	load := b.agentName
	if b.o.ClientNode != "" && b.o.ClientNode != b.pod.Spec.NodeName {
		if err := b.startLoadPod(ctx); err != nil {
			return err
		}
		load = b.loadName
	}
	var err error
	b.conn, b.client, err = b.attach(ctx, load)
	if err != nil {
		return err
	}
	if b.o.Agents > 1 {
		if err := b.startGroup(ctx); err != nil {
			return err
		}
	}
	b.client.Reach(b.ep, b.args)
	return nil
}

// startLoadPod starts client-node='s agent pod on that node (the sampler
// stays in its pod on the server's node, reading the server's cgroup).
func (b *BesideClient) startLoadPod(ctx context.Context) error {
	name := objectName(b.runID, b.name, "load")
	if _, err := b.cs.CoreV1().Pods(b.ns).Create(ctx, b.agentPod(name, b.o.ClientNode, false), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("k8s: create the agent pod on node %s: %w", b.o.ClientNode, err)
	}
	b.loadName = name
	if _, err := b.waitPod(ctx, name, agentName, false); err != nil {
		return fmt.Errorf("dbduel's agent pod on node %s: %w", b.o.ClientNode, err)
	}
	if err := b.copyBinary(ctx, name); err != nil {
		return fmt.Errorf("k8s: copy dbduel into pod %s: %w", name, err)
	}
	return nil
}

// startNetns starts the agent container in the server's pod (client=netns):
// dbduel copied in, attached, pointed at the server on the pod's loopback.
func (b *BesideClient) startNetns(ctx context.Context) error {
	// The pod is Ready with its server; its agent container runs too
	// (copy into it, and its cgroup's id, need it started).
	pod, err := b.waitPod(ctx, b.podName, agentName, false)
	if err != nil {
		return fmt.Errorf("the client (client=netns): %w", err)
	}
	if containerID(pod, serverName) == "" || containerID(pod, agentName) == "" {
		return fmt.Errorf("k8s: pod %s's status names no runtime id of its containers: their cgroups cannot be told apart", b.podName)
	}
	b.pod = pod
	if err := b.copyBinary(ctx, b.podName); err != nil {
		return fmt.Errorf("k8s: copy dbduel into pod %s's agent container: %w", b.podName, err)
	}
	if b.conn, b.client, err = b.attach(ctx, b.podName); err != nil {
		return err
	}
	b.client.Reach(b.agentEndpoint(), b.args)
	return nil
}

// agentEndpoint is the server as the load's agent reaches it: the pod's
// loopback from inside the pod, else the endpoint dbduel has.
func (b *BesideClient) agentEndpoint() driver.Endpoint {
	ep := b.ep
	if b.o.Client == "netns" {
		ep.Host, ep.Port = "127.0.0.1", b.serverPort
	}
	return ep
}

// attach talks to the agent that is pod's main process.
func (b *BesideClient) attach(ctx context.Context, pod string) (*agentStream, container.AgentClient, error) {
	ex, err := b.executor(pod, "attach", &corev1.PodAttachOptions{Container: agentName, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, nil, fmt.Errorf("the client (client=beside): dbduel's agent in pod %s: %w", pod, err)
	}
	conn := openStream(ctx, ex)
	c, err := b.dial(ctx, conn.stdin, conn.stdout, agentDataDir, agentTimeout, conn.lastWords(b.Server, pod))
	if err != nil {
		conn.close()
		return nil, nil, fmt.Errorf("the client (client=beside): dbduel's agent in pod %s: %w", pod, err)
	}
	return conn, c, nil
}

// lastWords is what the agent said on stderr and how its pod ended.
func (a *agentStream) lastWords(s *Server, pod string) func() string {
	return func() string { return a.explain(s, pod) }
}

func (a *agentStream) explain(s *Server, podName string) string {
	var parts []string
	if e := strings.TrimSpace(a.stderr.String()); e != "" {
		parts = append(parts, "agent said: "+driver.OneLine(e))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if pod, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, podName, metav1.GetOptions{}); err == nil {
		if _, why := podState(pod, agentName, false); why != "" {
			parts = append(parts, why)
		}
	} else {
		parts = append(parts, "its pod: "+err.Error())
	}
	return strings.Join(parts, "; ")
}

// Open gives the engine the agent.
func (b *BesideClient) Open(context.Context, int) (driver.DB, error) {
	if b.client == nil {
		return nil, errors.New("the agent is not running")
	}
	return b.client, nil
}

// Stop ends the agent (its stdin closes: it exits) and deletes the
// target's objects, the agent's pod among them.
func (b *BesideClient) Stop(ctx context.Context) error {
	b.conn.close()
	b.conn = nil
	b.stopExtra()
	return b.Server.Stop(ctx)
}

// Restart gives a fresh server on its claim and points the agent at the
// new pod's address.
func (b *BesideClient) Restart(ctx context.Context) error {
	if b.o.Client == "netns" {
		return fmt.Errorf("target %s: client=netns's agent lives in the server's pod, which a restart replaces: use client=beside to restart the server", b.name)
	}
	if err := b.Server.Restart(ctx); err != nil {
		return err
	}
	b.client.Reach(b.ep, b.args)
	return nil
}
