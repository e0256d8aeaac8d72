package kube

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dbduel/dbduel/targets/ledger"
)

// Cleaned is one run's namespace cleaned of its objects.
type Cleaned struct {
	RunID, Target, Context, Namespace string
}

// Clean deletes the labelled objects of the runs whose notes say they made
// some in a cluster (run runID's alone when it is not ""), where the note
// says: its kubeconfig, context and namespace. A run whose dbduel still
// runs (its pid in inProgress, or its note's owner alive when every run is
// cleaned) is left alone.
func Clean(ctx context.Context, runID string, inProgress map[string]int) ([]Cleaned, error) {
	var out []Cleaned
	var errs []error
	for _, n := range ledger.KubeNotes(runID) {
		if runID == "" {
			if _, busy := inProgress[n.RunID]; busy {
				continue
			}
			if _, alive := ledger.OwnerAlive(n.Owner); alive {
				continue
			}
		}
		cs, err := clientFor(n.Kubeconfig, n.Context)
		if err == nil {
			err = deleteRun(ctx, cs, n.Namespace, n.RunID, labelValue(n.Target))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s, target %s (context %s, namespace %s): %w", n.RunID, n.Target, n.Context, n.Namespace, err))
			continue
		}
		n.Forget()
		out = append(out, Cleaned{RunID: n.RunID, Target: n.Target, Context: n.Context, Namespace: n.Namespace})
	}
	return out, errors.Join(errs...)
}

// clientFor is a client of a kubeconfig (a KUBECONFIG list; "": the
// default) and context.
func clientFor(kubeconfig, kctx string) (kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.Precedence = filepathList(kubeconfig)
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kctx}).ClientConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// filepathList splits a KUBECONFIG value as clientcmd does.
func filepathList(v string) []string {
	var out []string
	for _, p := range filepath.SplitList(v) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
