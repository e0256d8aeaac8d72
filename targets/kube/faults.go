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
// Diagnose looks: the API server itself, the server pod (deleted, evicted,
// its container OOM-killed or exited), the agent pod beside it, its node
// (NotReady, its kubelet not answering).

// apiPatience is how long the API server may fail every read before a run
// ends for it: a control plane on a loaded machine, or throttling, can
// drop one read; a pod deleted or a container ended ends the run at once.
var apiPatience = 10 * time.Second

// apiUnreachable is the one line naming an API server that does not
// answer dbduel (a dead control plane, a closed tunnel to it), or refuses
// its credentials.
func (s *Server) apiUnreachable(err error) string {
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return fmt.Sprintf("API server refused dbduel: the Kubernetes API of context %s at %s refused its credentials (%s)", s.kctx, s.cfg.Host, driver.OneLine(err.Error()))
	}
	return fmt.Sprintf("API server unreachable: the Kubernetes API of context %s at %s does not answer (%s)", s.kctx, s.cfg.Host, driver.OneLine(err.Error()))
}

// Health says whether the cluster still holds the server pod, asked every
// second of a run: a pod deleted or evicted, or a server container that
// ended (the kubelet reports it within a second or two; a client may wait
// longer to notice) ends the run; an API server that fails every read for
// apiPatience does too (dbduel could neither watch nor delete what it
// made).
func (s *Server) Health(ctx context.Context) error {
	if s.cs == nil || s.pod == nil {
		return nil
	}
	pod, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, s.podName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return errors.New(podGone)
	case err != nil:
		if s.apiFailingSince.IsZero() {
			s.apiFailingSince = time.Now()
		}
		if time.Since(s.apiFailingSince) < apiPatience {
			return nil
		}
		return fmt.Errorf("%s for %s: dbduel can no longer watch or delete the pod", s.apiUnreachable(err), apiPatience)
	}
	s.apiFailingSince = time.Time{}
	if why := podFault(pod, serverName); why != "" {
		return errors.New(why)
	}
	return nil
}

const podGone = "the server pod was deleted (by someone else, a drain or an eviction: dbduel deletes it only after the run)"

// podFault names what ended a running pod's container: the pod deleted or
// evicted, the container OOM-killed or exited (as podState names them);
// "" while it runs.
func podFault(pod *corev1.Pod, container string) string {
	// A deletion first: the container it stops exits too, and that is
	// not the cause.
	why := "it is being deleted (by someone else, a drain or an eviction: dbduel deletes it only after the run)"
	if pod.DeletionTimestamp == nil {
		_, why = podState(pod, container, false)
	}
	if why == "" {
		return ""
	}
	return "pod " + pod.Name + ": " + why
}

// Diagnose says what became of the server pod when a run failed: the API
// server unreachable, the pod deleted or evicted, its container
// OOM-killed or exited, the agent pod gone, its node NotReady or its
// kubelet not answering; "" when all look fine. The client may see the
// connection drop before the kubelet reports the container's end: the
// pods are read again for a few seconds before the node is asked.
func (s *Server) Diagnose(ctx context.Context) string {
	if s.cs == nil || s.pod == nil {
		return ""
	}
	deadline := time.Now().Add(6 * time.Second)
	for {
		why, err := s.podsFault(ctx)
		switch {
		case why != "":
			return why
		case ctx.Err() != nil:
			return "" // out of time to diagnose: nothing is known
		case err != nil:
			return s.apiUnreachable(err)
		case time.Now().After(deadline):
			return s.nodeFault(ctx, s.pod.Spec.NodeName)
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// podsFault reads the server pod and, for a client beside it, the agent
// pods: what ended one ("" while all run), or the API's error.
func (s *Server) podsFault(ctx context.Context) (string, error) {
	pod, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, s.podName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return podGone, nil
	case err != nil:
		return "", err
	}
	if why := podFault(pod, serverName); why != "" || s.o.Client == "here" || s.agentUID == "" {
		return why, nil
	}
	if s.o.Client == "netns" {
		return podFault(pod, agentName), nil // the client is the pod's second container
	}
	names := []string{s.agentName}
	for _, e := range s.extra {
		names = append(names, e.name)
	}
	for _, name := range names {
		agent, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Sprintf("dbduel's agent pod %s was deleted (by someone else, a drain or an eviction)", name), nil
		case err != nil:
			return "", err
		}
		if why := podFault(agent, agentName); why != "" {
			return why, nil
		}
	}
	return "", nil
}

// nodeFault names a node that lost its kubelet: NotReady as the node
// controller marks it (Unknown: the kubelet stopped reporting, after its
// grace period) or as the kubelet says (False), or a kubelet that does not
// answer the API server's node proxy (which also carries attach and exec:
// a client beside the server ends with it). A user who may not read nodes
// or proxy to them gets "".
func (s *Server) nodeFault(ctx context.Context, name string) string {
	node, err := s.cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, c := range node.Status.Conditions {
		switch {
		case c.Type != corev1.NodeReady:
		case c.Status == corev1.ConditionUnknown:
			return fmt.Sprintf("node %s is NotReady: its kubelet stopped reporting (%s)", name, driver.OneLine(c.Message))
		case c.Status == corev1.ConditionFalse:
			return fmt.Sprintf("node %s is NotReady: its kubelet says %s (%s)", name, c.Reason, driver.OneLine(c.Message))
		}
	}
	hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err = s.cs.CoreV1().RESTClient().Get().Resource("nodes").Name(name).SubResource("proxy").Suffix("healthz").Do(hctx).Error()
	if err != nil && ctx.Err() == nil && !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) && !apierrors.IsNotFound(err) {
		return fmt.Sprintf("the kubelet of node %s does not answer (%s)", name, driver.OneLine(err.Error()))
	}
	return ""
}

// apiAnswers says whether the API server answers a read within a few
// seconds (nil), or why not.
func (s *Server) apiAnswers(ctx context.Context) error {
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return s.cs.Discovery().RESTClient().Get().AbsPath("/version").Do(vctx).Error()
}
