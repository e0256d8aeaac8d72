package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/docker/go-units"
	"github.com/spf13/cobra"

	"github.com/dbduel/dbduel/engine/explain"
	"github.com/dbduel/dbduel/targets"
	"github.com/dbduel/dbduel/targets/container"
	"github.com/dbduel/dbduel/targets/kube"
)

// explainOptions are dbduel explain's flags: run's, and the ladder's.
type explainOptions struct {
	runOptions
	native, image, rungs, rootlessUser string
	cpus                               int
	serverTime, podman, k8s            bool
	k8sCPUs                            float64
	k8sMemory, k8sStorage              string
	ladder                             []explain.Rung
}

// newExplainCmd is dbduel explain: the ablation ladder from a native
// server to the container `docker run -p` gives, every rung a target of
// one interleaved plan, ending with a waterfall of deltas with CIs.
func newExplainCmd(st *State) *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain [WORKLOAD] --native SPEC --image IMAGE",
		Short: "Attribute a container's gap to its causes, layer by layer, with confidence intervals",
		Long: `explain measures an ablation ladder in shuffled interleaved blocks, each rung
changing one thing of another: native; the container on the host network with
a bind-mounted datadir (the container itself); a named volume; the overlay
filesystem; bridge with a port published on 127.0.0.1 (docker-proxy); no
seccomp filter; a cpuset; a CPU quota of as many CPUs. With --podman, Podman's
rungs too: its host network, its published port (NAT, no proxy) and, with
--rootless-user, rootless Podman's (rootlessport). With --k8s, Kubernetes's:
a container of the pods' size, then Guaranteed pods on the node's network,
on the pod IP, behind the Service's ClusterIP and NodePort, with the
client in an agent pod beside the server (and on another node, given two),
and with --k8s-storage the datadir on a claim. It ends with each
rung's Δ% and CI, the evidence read back for it (network path, proxy and
server CPU per transaction, datadir, seccomp, throttling) and the
attribution of the total gap to layers.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			if err := o.ladderTargets(st.Stderr); err != nil {
				return err
			}
			return runFamilyVerb(cmd.Context(), st, name, o)
		},
	}
	bindRunFlags(cmd.Flags(), &o.runOptions)
	cmd.Flags().StringVar(&o.native, "native", "", "the native server's SPEC (local:mariadbd, local:postgres, mysql://...)")
	cmd.Flags().StringVar(&o.image, "image", "", "the image of the container rungs")
	cmd.Flags().StringVar(&o.rungs, "rungs", "", "comma-separated rungs to measure (with the rungs they are compared to); default: all")
	cmd.Flags().IntVar(&o.cpus, "explain-cpus", 1, "CPUs of the cpuset and CPU-quota rungs")
	cmd.Flags().BoolVar(&o.podman, "podman", false, "add Podman's rungs: host network, published port (and rootless with --rootless-user)")
	cmd.Flags().StringVar(&o.rootlessUser, "rootless-user", "", "the unprivileged user (with /etc/subuid and /etc/subgid ranges) of the podman-rootless rung; implies --podman")
	cmd.Flags().BoolVar(&o.k8s, "k8s", false, "add Kubernetes's rungs (the kubeconfig's current context): hostNetwork, pod IP, ClusterIP, NodePort, the client beside")
	cmd.Flags().Float64Var(&o.k8sCPUs, "k8s-cpus", 0.2, "CPUs of every Kubernetes rung's pod (requests = limits), and of the container they are compared with")
	cmd.Flags().StringVar(&o.k8sMemory, "k8s-memory", "512m", "memory of every Kubernetes rung's pod, and of the container they are compared with")
	cmd.Flags().StringVar(&o.k8sStorage, "k8s-storage", "", "CLASS:SIZE: add the pod-pvc rung, the datadir on a PersistentVolumeClaim of that StorageClass (e.g. standard:10Gi)")
	cmd.Flags().BoolVar(&o.serverTime, "server-time", true, "turn performance_schema on in managed MySQL/MariaDB rungs to split latency into server time and the rest")
	return cmd
}

// ladderTargets makes the rungs the targets, from --native and --image.
func (o *explainOptions) ladderTargets(stderr io.Writer) error {
	if len(o.targets) > 0 {
		return usageErr("explain builds its targets from --native and --image; --target does not apply")
	}
	if o.native == "" || o.image == "" {
		return usageErr("explain needs --native SPEC (e.g. local:mariadbd) and --image IMAGE")
	}
	if strings.HasPrefix(o.image, "docker:") || strings.Contains(o.image, ",") {
		return usageErr("--image %q: want an image name only (the rungs add their own keys)", o.image)
	}
	if o.cpus < 1 {
		return usageErr("--explain-cpus must be at least 1")
	}
	// Whole millicores from 0.01 (Docker's least quota): a pod reads back
	// in millicores, and a rung whose size reads back otherwise is invalid.
	if milli := o.k8sCPUs * 1000; !(o.k8sCPUs >= 0.01) || math.Abs(milli-math.Round(milli)) > 1e-6 {
		return usageErr("--k8s-cpus %g: want CPUs of at least 0.01 in whole millicores (e.g. 0.25)", o.k8sCPUs)
	}
	memBytes, err := units.RAMInBytes(o.k8sMemory)
	if err != nil || memBytes < 64<<20 {
		return usageErr("--k8s-memory %q: want a size of at least 64m (e.g. 512m)", o.k8sMemory)
	}
	home, other, err := kubeNodes(o, stderr)
	if err != nil {
		return err
	}
	if err := o.checkStorage(stderr); err != nil {
		return err
	}
	kubeRungs := explain.KubeRungs(explain.KubeSize{CPUs: o.k8sCPUs, Memory: o.k8sMemory, MemoryBytes: memBytes, Home: home, Other: other, Storage: o.k8sStorage})
	ladder, err := explainLadder(o.cpus, o.rungs, o.podman, o.rootlessUser, o.k8s, kubeRungs)
	if err != nil {
		return err
	}
	// MySQL/MariaDB time their statements only with performance_schema
	// on: every managed rung gets it alike (PostgreSQL's
	// pg_stat_statements is always there on managed targets).
	perfSchema := o.serverTime && (strings.HasPrefix(o.native, "local:mariadbd") || strings.HasPrefix(o.native, "local:mysqld"))
	if perfSchema {
		fmt.Fprintln(stderr, "dbduel: explain: performance_schema is on in every managed rung, for the server's time per statement (--server-time=false leaves it off)")
	}
	for _, r := range ladder {
		spec := r.Spec(o.native, o.image)
		if perfSchema {
			spec += ",args=--performance-schema=ON"
		}
		o.targets = append(o.targets, r.Name+"="+spec)
	}
	o.ladder = ladder
	return nil
}

// check is run's, and the memory-limit rung sized from the native server.
func (o *explainOptions) check(st *State, rc *runConfig) error {
	rc.prestart = sizeMemoryRung(st.Stderr)
	return o.runOptions.check(st, rc)
}

// do is run's, with the ladder analysed at every annotation.
func (o *explainOptions) do(ctx context.Context, st *State, rc *runConfig, ts *startedTargets) error {
	ts.ladder = o.ladder
	return o.runOptions.do(ctx, st, rc, ts)
}

// asks says whether --rungs names rung.
func (o *explainOptions) asks(rung string) bool {
	return slices.Contains(strings.Split(o.rungs, ","), rung)
}

// checkStorage reads --k8s-storage as a k8s: target would, and says when
// the pod-pvc rung is left out for the want of it.
func (o *explainOptions) checkStorage(stderr io.Writer) error {
	asked := o.asks(explain.PVCRung)
	if o.k8sStorage == "" {
		if asked {
			return usageErr("the %s rung needs --k8s-storage CLASS:SIZE (a StorageClass of the cluster, e.g. standard:10Gi)", explain.PVCRung)
		}
		if o.k8s {
			fmt.Fprintf(stderr, "dbduel: explain: no %s rung: --k8s-storage CLASS:SIZE names the StorageClass to claim from\n", explain.PVCRung)
		}
		return nil
	}
	if !o.k8s && !asked {
		return usageErr("--k8s-storage is for the %s rung: add --k8s or --rungs %s", explain.PVCRung, explain.PVCRung)
	}
	// The target's own parser (it needs an image and a protocol to read the key).
	if _, err := kube.ParseSpec("img,protocol=mysql,storage=" + o.k8sStorage); err != nil || o.k8sStorage == "emptydir" {
		return usageErr("--k8s-storage %q: want CLASS:SIZE, a StorageClass of the cluster and the claim's size (e.g. standard:10Gi)", o.k8sStorage)
	}
	return nil
}

// kubeNodes picks the nodes of the Kubernetes rungs: with two nodes that
// take pods, the first for every server pod and the second for the
// pod-other-node rung's client; with one, none (and no such rung).
func kubeNodes(o *explainOptions, stderr io.Writer) (home, other string, err error) {
	asked := o.asks(explain.OtherNodeRung)
	if !o.k8s && !asked {
		return "", "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := kube.PodNodes(ctx)
	if err != nil {
		return "", "", err
	}
	if len(nodes) < 2 {
		if asked {
			return "", "", usageErr("the %s rung needs a cluster with two nodes that take pods (this one has %d)", explain.OtherNodeRung, len(nodes))
		}
		fmt.Fprintf(stderr, "dbduel: explain: no %s rung: the cluster has %d node(s) that take pods\n", explain.OtherNodeRung, len(nodes))
		return "", "", nil
	}
	return nodes[0], nodes[1], nil
}

// explainLadder is the rungs to measure: Docker's, Podman's with --podman
// (the rootless one with a user), Kubernetes's with --k8s, or those
// --rungs names (with their references).
func explainLadder(cpus int, rungs string, podman bool, rootlessUser string, k8s bool, kube []explain.Rung) ([]explain.Rung, error) {
	ladder := explain.Ladder(cpus)
	podmans := explain.PodmanRungs(rootlessUser)
	all := append(append(slices.Clone(ladder), podmans...), kube...)
	if podman || rootlessUser != "" {
		if rootlessUser == "" {
			podmans = podmans[:len(podmans)-1] // the rootless rung needs its user
		}
		ladder = append(ladder, podmans...)
	}
	if k8s {
		ladder = append(ladder, kube...)
	}
	if rungs != "" {
		var err error
		if ladder, err = explain.Select(all, strings.Split(rungs, ",")); err != nil {
			return nil, usageErr("--rungs: %v", err)
		}
	}
	for _, r := range ladder {
		if r.Name == explain.RootlessRung && rootlessUser == "" {
			return nil, usageErr("the %s rung needs --rootless-user USER: an unprivileged user with ranges in /etc/subuid and /etc/subgid", explain.RootlessRung)
		}
	}
	return ladder, nil
}

// sizeMemoryRung sets the memory-limit rung's limit from the native
// server's resident memory, read just before the rung's container starts.
func sizeMemoryRung(stderr io.Writer) func(context.Context, targets.Target, []targets.Target) error {
	return func(ctx context.Context, t targets.Target, started []targets.Target) error {
		c, ok := t.(*container.Server)
		if !ok || t.Name() != explain.MemoryRung || len(started) == 0 {
			return nil
		}
		s, err := started[0].Sample(ctx)
		if err != nil || s.MemBytes == 0 {
			return fmt.Errorf("the native server's footprint is unknown (%v): the memory-limit rung needs it; leave it out with --rungs", err)
		}
		limit := explain.MemoryLimit(s.MemBytes)
		fmt.Fprintf(stderr, "dbduel: explain: memory-limit rung: %d MiB (the native server uses %d MiB)\n", limit>>20, s.MemBytes>>20)
		c.SetMemory(limit)
		return nil
	}
}
