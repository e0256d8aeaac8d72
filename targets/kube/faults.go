package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbduel/dbduel/engine/driver"
)

// What dbduel can say of a pod when a run on it fails, in the order
// Diagnose looks: the API server itself, the server pod (deleted, its
// container OOM-killed or exited), its node (NotReady, its kubelet not
// answering), the agent pod beside it.

// apiUnreachable is the one line naming an API server that stopped
// answering (a dead control plane, a closed tunnel to it).
func (s *Server) apiUnreachable(err error) string {
	return fmt.Sprintf("API server unreachable: the Kubernetes API of context %s at %s does not answer (%s)", s.kctx, s.cfg.Host, driver.OneLine(err.Error()))
}

// Health says whether the cluster still holds the server pod, asked every
// second of a run: an API server that stops answering ends the run (dbduel
// could neither watch nor delete what it made), and so does a pod deleted
// by someone else or a server container that ended (the kubelet reports
// it within a second or two; a client may wait longer to notice).
func (s *Server) Health(ctx context.Context) error {
	if s.cs == nil || s.pod == nil {
		return nil
	}
	pod, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, s.podName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return errors.New(podGone)
	case err != nil:
		return fmt.Errorf("%s: dbduel can no longer watch or delete the pod", s.apiUnreachable(err))
	}
	if why := podFault(pod, serverName); why != "" {
		return errors.New(why)
	}
	return nil
}

const podGone = "the server pod was deleted (by someone else: dbduel deletes it only after the run)"

// podFault names what ended a running pod's container: the pod deleted,
// the container OOM-killed or exited; "" while it runs.
func podFault(pod *corev1.Pod, container string) string {
	if pod.DeletionTimestamp != nil {
		return fmt.Sprintf("pod %s is being deleted (by someone else: dbduel deletes it only after the run)", pod.Name)
	}
	for _, c := range pod.Status.ContainerStatuses {
		t := c.State.Terminated
		if c.Name != container || t == nil {
			continue
		}
		if t.Reason == "OOMKilled" {
			return fmt.Sprintf("the container %s of pod %s was OOM-killed (exit code %d): its memory limit is too small for the server", container, pod.Name, t.ExitCode)
		}
		return fmt.Sprintf("the container %s of pod %s exited with code %d (%s)", container, pod.Name, t.ExitCode, t.Reason)
	}
	return ""
}

// Diagnose says what became of the server pod when a run failed: the API
// server unreachable, the pod deleted, its container OOM-killed or exited,
// its node NotReady or its kubelet not answering, the agent pod gone; ""
// when all look fine. The client may see the connection drop before the
// kubelet reports the container's end: a pod that looks fine is read again
// for a few seconds.
func (s *Server) Diagnose(ctx context.Context) string {
	if s.cs == nil || s.pod == nil {
		return ""
	}
	deadline := time.Now().Add(6 * time.Second)
	for {
		if why := s.diagnoseOnce(ctx); why != "" || time.Now().After(deadline) {
			return why
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (s *Server) diagnoseOnce(ctx context.Context) string {
	pod, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, s.podName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return podGone
	case err != nil:
		return s.apiUnreachable(err)
	}
	if why := podFault(pod, serverName); why != "" {
		return why
	}
	if why := s.nodeFault(ctx, pod.Spec.NodeName); why != "" {
		return why
	}
	if s.agentUID == "" {
		return ""
	}
	agent, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, s.agentName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("dbduel's agent pod %s was deleted (by someone else)", s.agentName)
	}
	if err == nil {
		return podFault(agent, agentName)
	}
	return ""
}

// nodeFault names a node that lost its kubelet: NotReady as the node
// controller marks it (after its grace period), or, sooner, a kubelet that
// does not answer the API server's proxy (which also carries attach and
// exec: a client beside the server ends with it). A user who may not read
// nodes or proxy to them gets "".
func (s *Server) nodeFault(ctx context.Context, name string) string {
	node, err := s.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return fmt.Sprintf("node %s is NotReady (%s: %s): its kubelet stopped reporting", name, c.Reason, c.Message)
		}
	}
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err = s.cs.CoreV1().RESTClient().Get().Resource("nodes").Name(name).SubResource("proxy").Suffix("healthz").Do(hctx).Error()
	if err != nil && !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
		return fmt.Sprintf("the kubelet of node %s does not answer (%s)", name, driver.OneLine(err.Error()))
	}
	return ""
}
