package kube

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/dbduel/dbduel/engine/driver"
	"github.com/dbduel/dbduel/targets/cgroupstat"
	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/provision"
)

// agentTimeout bounds the agent's hello once its pod runs.
const agentTimeout = 30 * time.Second

// cgroupReader is an agent that reads a pod's cgroup on its node.
type cgroupReader interface {
	Cgroup(ctx context.Context, root, uid, rel, container string) (cgroupstat.Usage, error)
}

// SetAgent gives the target dbduel's (static) binary to copy into its
// agent pod, and how to make the engine's client of an agent: the pod on
// the server's node reads the server's cgroup there, and for client=beside
// runs the load.
func (s *Server) SetAgent(binary string, dial container.AgentDialer, group container.AgentGrouper) {
	s.binary, s.dial, s.group = binary, dial, group
}

// startAgentPod starts the agent pod on the server's node, copies dbduel
// in and starts the sampler: a second agent process, over exec, that
// reads the pods' cgroups while the first runs the workload.
func (s *Server) startAgentPod(ctx context.Context) error {
	if _, err := s.cs.CoreV1().Pods(s.ns).Create(ctx, s.agentPod(s.agentName, s.pod.Spec.NodeName, true), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("k8s: create the agent pod: %w", err)
	}
	pod, err := s.waitPod(ctx, s.agentName, agentName, false)
	if err != nil {
		return fmt.Errorf("dbduel's agent pod: %w", err)
	}
	s.agentUID = string(pod.UID)
	if err := s.copyBinary(ctx, s.agentName); err != nil {
		return fmt.Errorf("k8s: copy dbduel into pod %s: %w", s.agentName, err)
	}
	ex, err := s.executor(s.agentName, "exec", &corev1.PodExecOptions{Container: agentName,
		Command: []string{agentBinary, "agent", "--dir", agentDataDir}, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return err
	}
	s.samplerConn = openStream(ctx, ex)
	c, err := s.dial(ctx, s.samplerConn.stdin, s.samplerConn.stdout, agentDataDir, agentTimeout, s.samplerConn.lastWords(s, s.agentName))
	if err != nil {
		return fmt.Errorf("dbduel's agent in pod %s: %w", s.agentName, err)
	}
	r, ok := c.(cgroupReader)
	if !ok {
		return fmt.Errorf("dbduel's agent in pod %s reads no cgroups", s.agentName)
	}
	s.sampler, s.samplerClient = r, c
	return nil
}

// executor streams a subresource of an agent pod (exec or attach): over
// WebSocket, or SPDY where the API server or a proxy does not upgrade.
func (s *Server) executor(pod, sub string, opts runtime.Object) (remotecommand.Executor, error) {
	req := s.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(s.ns).Name(pod).
		SubResource(sub).VersionedParams(opts, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(s.cfg, "POST", req.URL())
	if err != nil {
		return nil, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(s.cfg, "GET", req.URL().String())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// copyBinary writes dbduel into an agent pod's binary directory through
// a shell in the image, under a temporary name first: the pod starts its
// agent once the executable appears whole.
func (s *Server) copyBinary(ctx context.Context, pod string) error {
	f, err := os.Open(s.binary)
	if err != nil {
		return fmt.Errorf("read the dbduel binary: %w", err)
	}
	defer f.Close()
	part := agentBinary + ".part"
	script := fmt.Sprintf("cat > %s && chmod 0755 %s && mv %s %s", part, part, part, agentBinary)
	ex, err := s.executor(pod, "exec", &corev1.PodExecOptions{Container: agentName, Command: []string{"/bin/sh", "-c", script},
		Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return err
	}
	// One buffer for both streams, locked: client-go copies stdout and
	// stderr from goroutines of their own.
	out := &provision.TailBuffer{Max: 4096}
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: f, Stdout: out, Stderr: out}); err != nil {
		return fmt.Errorf("%w %s", err, driver.OneLine(out.String()))
	}
	return nil
}

// agentStream is one conversation with an agent process in the pod (its
// attached main process, or one started over exec).
type agentStream struct {
	stdin  *io.PipeWriter
	stdout *io.PipeReader
	done   chan error
	cancel context.CancelFunc
	stderr *provision.TailBuffer
}

// openStream starts streaming ex: what is written to stdin goes to the
// process, what it prints comes out of stdout.
func openStream(ctx context.Context, ex remotecommand.Executor) *agentStream {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &agentStream{stdin: inW, stdout: outR, done: make(chan error, 1), cancel: cancel, stderr: &provision.TailBuffer{Max: 4096}}
	go func() {
		err := ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW, Stderr: a.stderr})
		if err == nil {
			err = io.EOF
		}
		// Writes to an ended stream fail at once, not block: client-go
		// stops reading stdin without closing it.
		inR.CloseWithError(err)
		outW.CloseWithError(err)
		a.done <- err
	}()
	return a
}

// close ends the conversation: the agent reads the end of its stdin and
// exits; the stream is cut if it has not ended within 2 s.
func (a *agentStream) close() {
	if a == nil {
		return
	}
	a.stdin.Close()
	select {
	case <-a.done:
	case <-time.After(2 * time.Second):
	}
	a.cancel()
}
