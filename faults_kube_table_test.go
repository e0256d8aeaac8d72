package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The Kubernetes fault table: faults done to a k8s: target's pod, its
// cluster and dbduel, for a client here and beside the pod. The cells run
// on the test cluster (TestKubeFaults, behind the k8s build tag);
// docs/faults.md's Kubernetes table is rendered from this one, which the
// default tests check (TestKubeFaultsDoc).

// kubePlacements are the columns: where the benchmark client runs.
var kubePlacements = []string{"client=here", "client=beside"}

// kubeFault is one row: how the test makes it, what dbduel must do (by
// placement where it differs), and the SPEC keys the cell adds to
// `k8s:IMAGE,cpus=0.5`. A serial row's cells run one at a time (they
// change the node every cell shares).
type kubeFault struct {
	name, how   string
	keys        string
	want        outcome
	byPlacement map[string]outcome
	serial      bool
}

// outcomeAt is what dbduel must do for the client at placement p.
func (f kubeFault) outcomeAt(p string) outcome {
	if w, ok := f.byPlacement[p]; ok {
		return w
	}
	return f.want
}

var kubeFaults = []kubeFault{
	{name: "pod deleted", how: "`kubectl delete pod` of the server pod (its default grace period)", keys: ",memory=512m",
		want: ends("deleted (by someone else", 10*time.Second)},
	{name: "OOM-killed", how: "a memory hog `kubectl exec`ed into the server container with `memory=384m`, the server made the OOM killer's first choice", keys: ",memory=384m",
		want: ends("was OOM-killed", 30*time.Second)},
	{name: "API server unreachable", how: "the kubeconfig's server through a proxy the test closes, opened again for `dbduel clean`; a client here runs on until the API has failed every read for 10 s", keys: ",memory=512m",
		want: ends("API server unreachable", 20*time.Second)},
	{name: "dbduel SIGKILLed", how: "`kill -KILL` of dbduel mid-run, then `dbduel clean`", keys: ",memory=512m",
		want: cleaned()},
	{name: "kubelet stopped", how: "`scripts/k8s-cluster.sh kubelet stop` (the pods' containers run on; started again after the cell)", keys: ",memory=512m",
		serial: true,
		want:   ends("kubelet of node", 20*time.Second),
		byPlacement: map[string]outcome{"client=here": {exit: 0, bound: 15 * time.Second,
			rule: "goes on: the server keeps serving (checked for 15 s)"}},
	},
}

// kubeNotTested are faults of the list without a cell, and why.
const kubeNotTested = "A client beside the pod talks to its agent through the kubelet (attach), so it ends with it, " +
	"and the stop line names the kubelet that does not answer the API server's node proxy (or, once the node " +
	"controller marks it, `node N is NotReady`). The pods are deleted at once (grace 0): their containers end when " +
	"the kubelet is back. Not made by the tests: a second node (the test cluster has one)."

func kubeFaultsMarkdown() string {
	var b strings.Builder
	b.WriteString("| fault (how the test makes it) |")
	for _, p := range kubePlacements {
		b.WriteString(" " + p + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(kubePlacements)) + "\n")
	for _, f := range kubeFaults {
		fmt.Fprintf(&b, "| **%s** (%s) |", f.name, f.how)
		for _, p := range kubePlacements {
			w := f.outcomeAt(p)
			if w.exit == 0 {
				fmt.Fprintf(&b, " %s |", w.rule)
			} else {
				fmt.Fprintf(&b, " ends, exit %d, within %s: «%s» |", w.exit, w.bound, w.names)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + kubeNotTested + "\n")
	b.WriteString("\nEach cell is `go test -tags k8s -run 'TestKubeFaults/<fault>/<placement>' .` (spaces as `_`) on the test cluster.\n")
	return b.String()
}

// TestKubeFaultsDoc keeps docs/faults.md's Kubernetes table the one
// TestKubeFaults runs: DBDUEL_UPDATE_DOCS=1 rewrites it.
func TestKubeFaultsDoc(t *testing.T) {
	checkRendered(t, "docs/faults.md", "kubernetes faults: rendered by TestKubeFaultsDoc", "end of the kubernetes faults", kubeFaultsMarkdown(), "TestKubeFaultsDoc")
}
