// Command cri-clean stops and removes every pod sandbox of one container
// runtime through the CRI, so the runtime itself tears each pod down as the
// kubelet would: its containers killed, its CNI network deleted (the
// bridge plugin's address released), its network namespace unmounted.
// The test cluster's `down` runs it after stopping the kubelet, so no pod
// outlives the cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	socket := flag.String("socket", "", "the runtime's CRI socket")
	flag.Parse()
	if err := run(*socket); err != nil {
		fmt.Fprintln(os.Stderr, "cri-clean:", err)
		os.Exit(1)
	}
}

func run(socket string) error {
	if socket == "" {
		return fmt.Errorf("--socket is required")
	}
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var failed error
	for _, p := range pods.Items {
		name := p.Metadata.GetNamespace() + "/" + p.Metadata.GetName()
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			failed = fmt.Errorf("stop %s: %w", name, err)
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			failed = fmt.Errorf("remove %s: %w", name, err)
			continue
		}
		fmt.Println("removed pod", name)
	}
	return failed
}
