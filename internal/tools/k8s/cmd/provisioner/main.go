// Command provisioner is the test cluster's dynamic provisioner: it answers
// the PersistentVolumeClaims of StorageClasses whose provisioner is
// dbduel.test/local-dir with a `local` PersistentVolume, one directory per
// claim under a directory only root can enter, on the node the scheduler
// chose (the classes bind WaitForFirstConsumer, as local-path and most
// cloud classes do), and deletes volume and directory when the claim goes.
//
// Not kube-controller-manager's --enable-hostpath-provisioner: it makes
// its directories under /tmp, where another user may plant a symlink.
// Every node of the test cluster shares this machine's filesystem, so one
// provisioner here serves them all.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Name is the provisioner's name in a StorageClass.
const Name = "dbduel.test/local-dir"

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the cluster's kubeconfig")
	dir := flag.String("dir", "", "where the volumes' directories go (made root-only)")
	every := flag.Duration("every", 500*time.Millisecond, "how often the claims and volumes are looked at")
	flag.Parse()
	if *kubeconfig == "" || *dir == "" {
		fmt.Fprintln(os.Stderr, "provisioner: -kubeconfig and -dir are required")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *dir, *every); err != nil {
		fmt.Fprintln(os.Stderr, "provisioner:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, dir string, every time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	root, err := openRoot(dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	p := &provisioner{cs: cs, root: root}
	// A poll, not informers: a test cluster holds a handful of claims, and
	// a poll has no watch to lose across an API server restart.
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := p.pass(ctx); err != nil && ctx.Err() == nil {
			log.Print(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
