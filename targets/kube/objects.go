package kube

import (
	"crypto/sha256"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/dbduel/dbduel/targets/ledger"
)

// Where the server's container sees dbduel's files, and the agent's.
const (
	configDir     = "/etc/dbduel"
	agentDir      = "/.dbduel"
	agentBinary   = agentDir + "/dbduel"
	agentDataDir  = "/var/lib/dbduel"
	targetLabel   = "dbduel.target"
	ownerAnnot    = ledger.OwnerLabel // "pid:executable" is no label value: an annotation
	serverName    = "server"
	agentName     = "agent"
	agentCPUMilli = 100
	// A pod whose agent only samples (the load runs here or on another
	// node) asks for less: it reads a few cgroup files a second.
	samplerCPUMilli = 50
	cgroupMount     = "/.dbduel-cgroup" // the node's /sys/fs/cgroup, read-only, in the agent pod
)

// objectName is a Kubernetes name for the run's target (and a suffix): DNS
// label characters, at most 63, unique per run and target.
func objectName(runID, target, suffix string) string {
	n := "dbduel-" + runID + "-" + strings.ReplaceAll(target, "_", "-")
	if suffix != "" {
		n += "-" + suffix
	}
	if len(n) > 63 {
		sum := sha256.Sum256([]byte(n))
		n = strings.TrimRight(n[:52], "-") + "-" + fmt.Sprintf("%x", sum[:5])
	}
	return n
}

// labelValue is the target's name as a label value (names allow what
// label values do, but for length).
func labelValue(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}

// meta is every object's name, labels (the run and target, which clean
// and the Service's selector find) and owner annotation.
func (s *Server) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: s.ns,
		Labels:      map[string]string{ledger.Label: s.runID, targetLabel: labelValue(s.name)},
		Annotations: map[string]string{ownerAnnot: ledger.Owner()}}
}

// resources are requests equal to limits: the Guaranteed QoS class, the
// CPU quota and memory limit `docker run --cpus --memory` sets.
func resources(cpus float64, memoryBytes int64) corev1.ResourceRequirements {
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(cpus*1000+0.5), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(memoryBytes, resource.BinarySI),
	}
	return corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()}
}

// serverPod is the bare Pod of the server: the image's own entrypoint with
// the protocol's arguments, its environment from the Secret, dbduel's
// configuration from the ConfigMap, the datadir as the SPEC says. Never
// restarted: a server that dies is dbduel's to report, not the kubelet's
// to hide.
func (s *Server) serverPod(cmd []string) *corev1.Pod {
	p := s.protocol()
	o := s.o
	c := corev1.Container{
		Name: serverName, Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent,
		Args:      append(append([]string{}, cmd...), o.Args...),
		EnvFrom:   []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.secretName}}}},
		Ports:     []corev1.ContainerPort{{Name: "db", ContainerPort: int32(s.serverPort), Protocol: corev1.ProtocolTCP}},
		Resources: resources(o.CPUs, o.MemoryBytes),
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: configDir, ReadOnly: true},
			{Name: "data", MountPath: p.Image.Datadir},
		},
		// Ready when the server's port accepts connections: the images'
		// first-start servers listen on no TCP port.
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(s.serverPort))}},
			PeriodSeconds: 1, FailureThreshold: 1},
		// The runtime's default seccomp filter, as Docker gives every
		// container: a pod without a profile runs unconfined unless its
		// kubelet sets seccompDefault, which dbduel cannot read, and the
		// comparison with Docker would then carry the filter too.
		SecurityContext: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
	}
	if o.Network == "host" {
		// The server listens on the node's loopback alone; the kubelet
		// probes from the node's network, so it can ask there.
		c.ReadinessProbe.TCPSocket.Host = "127.0.0.1"
	}
	m := s.meta(s.podName)
	m.Labels["dbduel.role"] = serverName
	pod := &corev1.Pod{ObjectMeta: m, Spec: corev1.PodSpec{
		Containers: []corev1.Container{c}, RestartPolicy: corev1.RestartPolicyNever,
		NodeName:                      o.Node,
		EnableServiceLinks:            new(bool),
		TerminationGracePeriodSeconds: ptr(int64(10)),
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.configName}}}},
			{Name: "data", VolumeSource: s.dataVolume()},
		},
	}}
	if o.Client == "netns" {
		s.addNetnsAgent(&pod.Spec)
	}
	if o.Storage == "pvc" && o.Node != "" {
		pinThroughScheduler(&pod.Spec, o.Node)
	}
	s.onNodeNetwork(&pod.Spec)
	return pod
}

// pinThroughScheduler puts a pod on node by a required node affinity
// instead of spec.nodeName: a pod with nodeName skips the scheduler, and
// only the scheduler tells a WaitForFirstConsumer claim (local volumes,
// most cloud classes) its node, so the claim would never bind.
func pinThroughScheduler(spec *corev1.PodSpec, node string) {
	spec.NodeName = ""
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

// dataVolume is the datadir's volume.
func (s *Server) dataVolume() corev1.VolumeSource {
	switch s.o.Storage {
	case "pvc":
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.podName}}
	}
	return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
}

// claim is the PVC of storage=CLASS:SIZE.
func (s *Server) claim() *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: s.meta(s.podName), Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: &s.o.StorageClass,
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceStorage: *resource.NewQuantity(s.o.StorageBytes, resource.BinarySI)}},
	}}
}

// service fronts the server pod: a ClusterIP, or a NodePort for via=nodeport.
func (s *Server) service() *corev1.Service {
	t := corev1.ServiceTypeClusterIP
	if s.o.Via == "nodeport" {
		t = corev1.ServiceTypeNodePort
	}
	return &corev1.Service{ObjectMeta: s.meta(s.podName), Spec: corev1.ServiceSpec{
		Type:     t,
		Selector: map[string]string{ledger.Label: s.runID, targetLabel: labelValue(s.name), "dbduel.role": serverName},
		Ports:    []corev1.ServicePort{{Name: "db", Port: int32(s.serverPort), TargetPort: intstr.FromInt32(int32(s.serverPort)), Protocol: corev1.ProtocolTCP}},
	}}
}

// agentPod runs dbduel's agent on node: the server's image (it has a
// shell), started as root, waiting for its binary (copied in over exec)
// before it serves the engine over its attached stdin and stdout. Burstable
// at a small request, so it fits beside a Guaranteed server. The sampler's
// pod (the first) also mounts the node's cgroups, read-only.
func (s *Server) agentPod(name, node string, sampler bool) *corev1.Pod {
	milli := int64(agentCPUMilli)
	if sampler && !s.loadInSampler() {
		milli = samplerCPUMilli
	}
	req := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(milli, resource.DecimalSI)}
	m := s.meta(name)
	m.Labels["dbduel.role"] = agentName
	c := agentContainer(s.o.Image, corev1.ResourceRequirements{Requests: req})
	pod := &corev1.Pod{ObjectMeta: m, Spec: corev1.PodSpec{
		Containers:    []corev1.Container{c},
		RestartPolicy: corev1.RestartPolicyNever, NodeName: node,
		EnableServiceLinks:            new(bool),
		TerminationGracePeriodSeconds: ptr(int64(2)),
		Volumes:                       agentVolumes(),
	}}
	if sampler {
		// The server pod's CPU, memory and throttling are in its cgroup
		// on the node: read there, as a container's are here.
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "cgroup", MountPath: cgroupMount, ReadOnly: true})
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "cgroup", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/sys/fs/cgroup", Type: ptr(corev1.HostPathDirectory)}}})
	}
	s.onNodeNetwork(&pod.Spec)
	return pod
}

// loadInSampler says the first agent pod runs the load too: a beside
// client on the server's node.
func (s *Server) loadInSampler() bool {
	return s.o.Client == "beside" && (s.o.ClientNode == "" || s.o.ClientNode == s.pod.Spec.NodeName)
}

// agentContainer is dbduel's agent in image (it has a shell), started as
// root, waiting for its binary (copied in over exec) before it serves the
// engine over its attached stdin and stdout.
func agentContainer(image string, res corev1.ResourceRequirements) corev1.Container {
	wait := fmt.Sprintf("while [ ! -x %s ]; do sleep 0.1; done; exec %s agent --dir %s", agentBinary, agentBinary, agentDataDir)
	return corev1.Container{
		Name: agentName, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"/bin/sh", "-c", wait},
		Stdin:   true, StdinOnce: true,
		Resources:       res,
		SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(0)), RunAsGroup: ptr(int64(0))},
		VolumeMounts:    []corev1.VolumeMount{{Name: "bin", MountPath: agentDir}, {Name: "work", MountPath: agentDataDir}},
	}
}

// agentVolumes are the agent's binary and work directories.
func agentVolumes() []corev1.Volume {
	return []corev1.Volume{
		{Name: "bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
}

// addNetnsAgent puts a client=netns agent in the server pod: a second
// container, requests equal to limits (client-cpus, 256Mi) so the pod stays
// Guaranteed, under the same seccomp profile as the server.
func (s *Server) addNetnsAgent(spec *corev1.PodSpec) {
	c := agentContainer(s.o.Image, resources(s.o.ClientCPUs, clientMemoryBytes))
	c.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	spec.Containers = append(spec.Containers, c)
	spec.Volumes = append(spec.Volumes, agentVolumes()...)
}

// onNodeNetwork puts a network=host target's pods (the server and its
// agent, which reaches it on the node's loopback) on the node's network.
func (s *Server) onNodeNetwork(spec *corev1.PodSpec) {
	if s.o.Network == "host" {
		spec.HostNetwork = true
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
}

func ptr[T any](v T) *T { return &v }
