package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets/ledger"
)

// hopeless are the waiting reasons a pod does not recover from by itself
// within a benchmark's patience.
var hopeless = map[string]string{
	"ErrImageNeverPull":          "the image is not on the node",
	"ErrImagePull":               "the node cannot pull the image",
	"ImagePullBackOff":           "the node cannot pull the image",
	"InvalidImageName":           "the image name is invalid",
	"CreateContainerConfigError": "the container's configuration is refused",
	"CreateContainerError":       "the runtime cannot create the container",
}

// waitPod polls pod name until its container is ready (ready) or running,
// and says why when it will not be: the node refused it, the image is not
// there, the container exited, it stayed unschedulable.
func (s *Server) waitPod(ctx context.Context, name, container string, ready bool) (*corev1.Pod, error) {
	start := time.Now()
	deadline, nextNote := start.Add(readyTimeout), start.Add(15*time.Second)
	for {
		pod, err := s.cs.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("k8s: read pod %s: %w", name, err)
		}
		done, why := podState(pod, container, ready)
		if msg, ok := unschedulable(pod); ok && why == "" && time.Since(start) > unschedulableFor {
			// Nothing of the run's will free the node: its pods all start
			// before the plan does.
			why = "it cannot be scheduled: " + msg + " (lower its cpus= or memory=, or give node= a node with room)"
		}
		switch {
		case done:
			return pod, nil
		case why != "":
			return nil, fmt.Errorf("k8s: pod %s: %s%s", name, why, s.logTail(name, container))
		case time.Now().After(deadline):
			return nil, fmt.Errorf("k8s: pod %s was not %s within %s: %s%s", name, map[bool]string{true: "ready", false: "running"}[ready], readyTimeout, pending(pod), s.logTail(name, container))
		}
		if now := time.Now(); now.After(nextNote) && s.progress != nil {
			fmt.Fprintf(s.progress, "dbduel: %s: pod %s is still starting after %s: %s\n", s.name, name, now.Sub(start).Round(time.Second), pending(pod))
			nextNote = now.Add(15 * time.Second)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// unschedulableFor is how long a pod the scheduler finds no room for is
// waited on before the start gives up.
var unschedulableFor = 20 * time.Second

// unschedulable is the scheduler's word on a pod it cannot place.
func unschedulable(pod *corev1.Pod) (string, bool) {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Message, true
		}
	}
	return "", false
}

// podState says whether pod's container is there yet (running, and ready
// when asked), or why it never will be ("" while it may).
func podState(pod *corev1.Pod, container string, ready bool) (done bool, why string) {
	switch {
	case pod.Status.Phase == corev1.PodFailed && pod.Status.Reason == "Evicted":
		// The cause of its containers' end, whatever they say of it.
		return false, "it was evicted by its node (" + driver.OneLine(pod.Status.Message) + ")"
	case pod.Status.Phase == corev1.PodFailed, pod.Status.Phase == corev1.PodSucceeded:
		why = fmt.Sprintf("it ended (%s)", pod.Status.Phase)
		if pod.Status.Reason != "" || pod.Status.Message != "" {
			why = fmt.Sprintf("the node refused it: %s %s", pod.Status.Reason, pod.Status.Message)
		}
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.Name != container {
			continue
		}
		if w := c.State.Waiting; w != nil {
			if what, bad := hopeless[w.Reason]; bad {
				return false, fmt.Sprintf("%s (%s: %s)", what, w.Reason, w.Message)
			}
		}
		if t := c.State.Terminated; t != nil {
			if t.Reason == "OOMKilled" {
				return false, fmt.Sprintf("its container %s was OOM-killed (exit code %d): its memory limit is too small for the server", container, t.ExitCode)
			}
			return false, fmt.Sprintf("its container %s exited with code %d (%s)", container, t.ExitCode, t.Reason)
		}
		if c.State.Running != nil && why == "" {
			return !ready || c.Ready, ""
		}
	}
	return false, why
}

// pending is what a pod still waits on, as its conditions and container say.
func pending(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return "not scheduled: " + c.Message
		}
	}
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Waiting != nil {
			return "waiting: " + c.State.Waiting.Reason
		}
		if c.State.Running != nil && !c.Ready {
			return "running, its server not yet accepting connections (a first start initialises the datadir)"
		}
	}
	return "phase " + string(pod.Status.Phase)
}

// logTail is "; last log lines: ..." of a pod's container ("" when none).
func (s *Server) logTail(name, container string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := s.cs.CoreV1().Pods(s.ns).GetLogs(name, &corev1.PodLogOptions{Container: container, TailLines: ptr(int64(5))}).Stream(ctx)
	if err != nil {
		return ""
	}
	defer rc.Close()
	var out bytes.Buffer
	_, _ = io.Copy(&out, io.LimitReader(rc, 8192))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return "; last log lines: " + strings.Join(lines, " | ")
}

// deleteRun deletes the objects of run runID in namespace ns (of one
// target when target is not ""), pods at once, and waits until its pods
// are gone: a pod still terminating holds its node's CPU and memory.
func deleteRun(ctx context.Context, cs kubernetes.Interface, ns, runID, target string) error {
	sel := ledger.Label + "=" + runID
	if target != "" {
		sel += "," + targetLabel + "=" + target
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 90*time.Second)
	defer cancel()
	lo := metav1.ListOptions{LabelSelector: sel}
	now := metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}
	c := cs.CoreV1()
	errs := []error{
		ignoreNotFound(c.Pods(ns).DeleteCollection(ctx, now, lo)),
		deleteServices(ctx, cs, ns, lo),
		ignoreNotFound(c.Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, lo)),
		ignoreNotFound(c.ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, lo)),
		ignoreNotFound(c.PersistentVolumeClaims(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, lo)),
	}
	errs = append(errs, waitGone(ctx, cs, ns, lo))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("k8s: delete run %s's objects in namespace %s: %w", runID, ns, err)
	}
	return nil
}

// deleteServices deletes the selected Services one by one (the API has no
// collection delete for them).
func deleteServices(ctx context.Context, cs kubernetes.Interface, ns string, lo metav1.ListOptions) error {
	list, err := cs.CoreV1().Services(ns).List(ctx, lo)
	if err != nil {
		return ignoreNotFound(err)
	}
	var errs []error
	for _, svc := range list.Items {
		errs = append(errs, ignoreNotFound(cs.CoreV1().Services(ns).Delete(ctx, svc.Name, metav1.DeleteOptions{})))
	}
	return errors.Join(errs...)
}

// waitGone waits until no pod matches lo.
func waitGone(ctx context.Context, cs kubernetes.Interface, ns string, lo metav1.ListOptions) error {
	for {
		list, err := cs.CoreV1().Pods(ns).List(ctx, lo)
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s still there: %w", list.Items[0].Name, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
