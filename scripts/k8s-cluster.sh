#!/usr/bin/env bash
# The test cluster: a one-node Kubernetes made here from upstream sources,
# for the tests of dbduel's k8s: targets (docs/testing.md, "The Kubernetes
# test cluster").
#
#   scripts/k8s-cluster.sh up      build once (cached), start, wait for the
#                                  node Ready and a test pod running
#   scripts/k8s-cluster.sh env     print the exports for kubectl and tests
#   scripts/k8s-cluster.sh down    stop everything, remove every file,
#                                  mount, link, cgroup and iptables chain it
#                                  made, put back the kernel settings
#   scripts/k8s-cluster.sh build   only build the binaries
#   scripts/k8s-cluster.sh node2 up|down
#                                  a second node beside the first (for the
#                                  tests of agents on other nodes), or
#                                  without it again; `down` removes it too
#
# The components build from the k8s.io/kubernetes module at one pinned
# release (internal/tools/k8s, a module of its own), cached by version in
# ${XDG_CACHE_HOME:-~/.cache}/dbduel/k8s-<version>; etcd is the upstream
# server through its embed package. The node runs Debian's containerd with
# a root, state, socket and CNI configuration of its own (Docker's private
# containerd and Podman's CNI networks are not touched), a kubelet on the
# cgroupfs driver (this machine is cgroup v1) and kube-proxy in iptables
# mode. The node's address is 10.254.100.1 on a link of its own, so
# nothing listens on this machine's other addresses; pods get 10.244.0.0/24
# on the bridge dbduel-cni0, Services 10.96.0.0/24. The second node is
# another containerd, kubelet and kube-proxy in a network namespace of their
# own (10.254.100.2, pods 10.244.1.0/24 on its bridge, routed from here),
# the kubelet's cgroups under /dbduel-k8s-node2 instead of the top. Claims
# of the StorageClass dbduel-local get a local volume on their pod's node
# from the cluster's own provisioner (internal/tools/k8s/cmd/provisioner),
# a directory under /var/lib/dbduel-k8s/pv.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/safedir.sh

version=v1.34.4
cache=${XDG_CACHE_HOME:-$HOME/.cache}/dbduel/k8s-$version
bin=$cache/bin
state=/run/dbduel-k8s    # pids, sockets, the runtime's state, the tools
data=/var/lib/dbduel-k8s # etcd, certificates, the runtime's images, pods
pki=$data/pki
node=dbduel-k8s-node
node_ip=10.254.100.1
node_link=dbduel-k8s0
bridge=dbduel-cni0
pod_cidr=10.244.0.0/24
cluster_cidr=10.244.0.0/16
service_cidr=10.96.0.0/24
sock=$state/containerd/containerd.sock
pause_image=docker.io/dbduel-test/pause:3.10
# The second node.
node2=dbduel-k8s-node2
node2_ip=10.254.100.2
node2_link=dbduel-k8s2 # this end of its veth pair; eth0 in its namespace
node2_pod_cidr=10.244.1.0/24
node2_state=$state/node2
node2_data=$data/node2
node2_sock=$node2_state/containerd/containerd.sock
node2_netns=$node2_state/netns
node2_cgroup=dbduel-k8s-node2
storage_class=dbduel-local
kube_binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
# The kernel settings the kubelet and kube-proxy may change (the kubelet
# sets the first five unless protectKernelDefaults, which would make it
# refuse to start instead): `up` records them, `down` puts them back.
sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
	kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables net.ipv4.ip_forward)

# Directories the kubelet and the CNI library use whatever their
# configuration says: `up` records which of them it makes, `down` removes
# what this cluster put there and those directories if they are then empty.
fixed_dirs=(/var/log/containers /var/lib/kubelet/device-plugins /usr/libexec/kubernetes/kubelet-plugins/volume/exec /var/lib/cni/results)

say() { echo "k8s-cluster: $*"; }
fail() {
	echo "k8s-cluster: $*" >&2
	local f
	for f in "$data"/logs/*.log; do
		[ -s "$f" ] && { echo "--- last lines of $f" >&2; tail -5 "$f" >&2; }
	done
	exit 1
}
kubectl() { "$bin/kubectl" --kubeconfig "$pki/admin.conf" "$@"; }

# private_dir makes DIR (mode 0700) or checks it: a directory of root's
# that no other account can change, reached through no symlink, under a
# parent no other account can change either.
private_dir() {
	local d=$1 parent
	parent=$(dirname "$d")
	[ "$(stat -c '%u' "$parent")" = 0 ] && [ $(($(stat -c '0%a' "$parent") & 022)) = 0 ] ||
		fail "$parent is changeable by another account: refusing to use $d"
	[ -L "$d" ] && fail "$d is a symlink: refusing to use it"
	mkdir -p -m 0700 "$d"
	[ "$(stat -c '%u' "$d")" = 0 ] || fail "$d is not root's: refusing to use it"
	chmod 0700 "$d"
}

# safe_cache checks every directory from / down to the cache: a build
# cache another account could change would run its programs as root.
safe_cache() { safe_dir "$cache" || fail "unsafe build cache"; }

build() {
	safe_cache
	local have=1 b
	for b in "${kube_binaries[@]}"; do [ -x "$bin/$b" ] || have=0; done
	if [ $have = 0 ]; then
		say "building Kubernetes $version from source into $bin (the first time on a machine: about 9 min on 2 idle cores)"
		local t0=$SECONDS minor=${version#v1.}
		minor=${minor%%.*}
		local ld="-s -w"
		for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
			ld+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
		done
		rm -rf "$bin.tmp"
		(cd internal/tools/k8s && go build -trimpath -ldflags "$ld" -o "$bin.tmp/" $(printf 'k8s.io/kubernetes/cmd/%s ' "${kube_binaries[@]}"))
		rm -rf "$bin"
		mv "$bin.tmp" "$bin"
		say "built in $((SECONDS - t0)) s"
	fi
	# The small tools are this checkout's: built each time (the Go build
	# cache makes that seconds), into the state directory; never under a
	# running cluster's processes.
	private_dir "$state"
	if [ -d "$state/pids" ] && ls "$state/pids" | grep -q .; then
		say "a cluster is up: its tools are not rebuilt under it"
		return 0
	fi
	(cd internal/tools/k8s && go build -trimpath -o "$state/bin/" ./cmd/etcd ./cmd/pki ./cmd/cri-clean ./cmd/pause-image ./cmd/provisioner &&
		CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$state/bin/pause" ./cmd/pause)
}

# start NAME COMMAND... runs a component in the background, its output in
# $data/logs/NAME.log, and records its pid with the start time the kernel
# gives it, so `down` signals that process and no other. With in_netns set
# (a namespace file), in that network namespace (nsenter execs the
# command: the same pid, and the command's program is recorded).
start() {
	local name=$1 exe
	shift
	exe=$(realpath "$1")
	[ -n "${in_netns:-}" ] && set -- nsenter --net="$in_netns" -- "$@"
	# Not holding the lock's descriptor: `down` must get the lock.
	setsid "$@" >"$data/logs/$name.log" 2>&1 </dev/null 9<&- &
	local pid=$!
	sleep 0.2
	echo "$pid $(starttime "$pid") $exe" >"$state/pids/$name"
}

# starttime PID prints the process's start time (nothing once it is gone).
starttime() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	st=${st##*) }
	echo "$st" | cut -d' ' -f20
}

# ours NAME prints the recorded pid if that process still runs the
# recorded program and started when recorded.
ours() {
	local f=$state/pids/$1 pid start exe
	[ -f "$f" ] || return 1
	read -r pid start exe <"$f"
	local now
	now=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
	# A binary replaced while it runs reads "PATH (deleted)": still ours.
	[ -n "$pid" ] && [ "$(starttime "$pid")" = "$start" ] && [ "${now% (deleted)}" = "$exe" ] && echo "$pid"
}

# stop NAME... ends those components together: SIGTERM, up to 10 s, then
# SIGKILL to any still running (the same process: its recorded start time
# checked again, a pid can be reused). A pid file goes only once its
# process is gone, so a `down` that failed here can be run again.
stop() {
	local name pid start exe procs=() p
	for name in "$@"; do
		if pid=$(ours "$name"); then
			read -r pid start exe <"$state/pids/$name"
			procs+=("$pid:$start:$name")
			kill -TERM "$pid" 2>/dev/null || true
		else
			rm -f "$state/pids/$name"
		fi
	done
	running() {
		for p in "${procs[@]}"; do
			p=${p%:*}
			[ "$(starttime "${p%%:*}")" = "${p#*:}" ] && echo "${p%%:*}"
		done
		return 0
	}
	local tries=0
	while [ -n "$(running)" ] && [ $tries -lt 100 ]; do
		sleep 0.1
		tries=$((tries + 1))
	done
	for pid in $(running); do kill -KILL "$pid" 2>/dev/null || true; done
	[ -n "$(running)" ] && sleep 1
	[ -z "$(running)" ] || { echo "k8s-cluster: still running after SIGKILL: $(running)" >&2; return 1; }
	for p in "${procs[@]}"; do rm -f "$state/pids/${p##*:}"; done
}

wait_for() { # what seconds command...
	local what=$1 secs=$2 t0=$SECONDS
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ $((SECONDS - t0)) -lt "$secs" ] || fail "$what not within $secs s (logs: $data/logs)"
		sleep 0.5
	done
}

# write_configs DATA STATE NODE IP BRIDGE POD_CIDR KUBELET_CERT [CGROUP_ROOT]
# writes one node's runtime, CNI, kubelet and kube-proxy configurations
# into DATA (the runtime's socket, state and runc's in STATE).
write_configs() {
	local d=$1 st=$2 nm=$3 ip=$4 br=$5 cidr=$6 cert=$7 cgroot=${8:-/}
	local so=$st/containerd/containerd.sock
	mkdir -p "$d/cni/net.d" "$d/cni/ipam" "$st/containerd"
	cat >"$d/containerd.toml" <<-EOF
		version = 2
		root = "$d/containerd"
		state = "$st/containerd"
		disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
		[grpc]
		  address = "$so"
		[ttrpc]
		  address = "$so.ttrpc"
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$d/containerd-opt"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$pause_image"
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  # This machine's root lacks CAP_SYS_RESOURCE: an oom_score_adj
		  # below containerd's own (the sandbox's -998, a Guaranteed pod's
		  # -997) would fail every pod's start; they are raised to it.
		  restrict_oom_score_adj = true
		  # Pods' network namespaces under this runtime's state, not /run/netns
		  # (Podman's and ip-netns' directory).
		  netns_mounts_under_state_dir = true
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        SystemdCgroup = false
		        Root = "$st/runc"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$d/cni/net.d"
		    max_conf_num = 1
	EOF
	# hairpinMode: a pod reaching itself through its Service's ClusterIP.
	# No ipMasq: pods talk to the node and each other, nothing beyond.
	cat >"$d/cni/net.d/10-dbduel-k8s.conflist" <<-EOF
		{"cniVersion": "0.4.0", "name": "dbduel-k8s", "plugins": [
		  {"type": "bridge", "bridge": "$br", "isGateway": true, "ipMasq": false, "hairpinMode": true,
		   "ipam": {"type": "host-local", "dataDir": "$d/cni/ipam", "ranges": [[{"subnet": "$cidr"}]],
		            "routes": [{"dst": "0.0.0.0/0"}]}}
		]}
	EOF
	cat >"$d/kubelet.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		cgroupDriver: cgroupfs
		cgroupRoot: $cgroot
		failCgroupV1: false
		failSwapOn: false
		containerRuntimeEndpoint: unix://$so
		address: $ip
		port: 10250
		readOnlyPort: 0
		healthzBindAddress: 127.0.0.1
		healthzPort: 10248
		tlsCertFile: $pki/$cert.crt
		tlsPrivateKeyFile: $pki/$cert.key
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: true}
		  x509: {clientCAFile: $pki/ca.crt}
		authorization: {mode: Webhook}
		clusterDomain: cluster.local
		podLogsDir: $d/pod-logs
		volumePluginDir: $d/volume-plugins
		makeIPTablesUtilChains: false
		# The images come from Docker's store, not a registry: none may be
		# collected. Evict only when the disk is really full.
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
		evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
		serializeImagePulls: false
	EOF
	cat >"$d/kube-proxy.yaml" <<-EOF
		apiVersion: kubeproxy.config.k8s.io/v1alpha1
		kind: KubeProxyConfiguration
		mode: iptables
		clientConnection: {kubeconfig: $pki/kube-proxy.conf}
		hostnameOverride: $nm
		bindAddress: $ip
		healthzBindAddress: 127.0.0.1:10256
		metricsBindAddress: 127.0.0.1:10249
		clusterCIDR: $cluster_cidr
		# NodePorts on the node's own address only, never this machine's
		# other addresses.
		nodePortAddresses: ["$ip/32"]
		iptables: {localhostNodePorts: false}
		# The machine's conntrack settings are left as they are.
		conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	EOF
}

# import_images SOCKET [IMAGE...] puts the pause image and the images
# (default: every dbduel-test/* image of Docker's store) into that
# runtime's k8s.io namespace.
import_images() {
	local ctr=(ctr -a "$1" -n k8s.io)
	shift
	"$state/bin/pause-image" -binary "$state/bin/pause" -tag "$pause_image" -o "$state/pause.tar.$$"
	"${ctr[@]}" images import "$state/pause.tar.$$" >/dev/null
	rm -f "$state/pause.tar.$$"
	local img
	[ $# -gt 0 ] || set -- $(docker images --format '{{.Repository}}:{{.Tag}}' 'dbduel-test/*' | grep -v '<none>')
	for img in "$@"; do
		docker save "$img" | "${ctr[@]}" images import - >/dev/null || fail "importing $img"
	done
}

# kube_chains lists the KUBE-* chains of every table, as "iptables TABLE
# CHAIN" (IPv4 and IPv6).
kube_chains() {
	local ipt table
	for ipt in iptables ip6tables; do
		for table in filter nat mangle raw; do
			"$ipt-save" -t "$table" 2>/dev/null | sed -n "s/^:\(KUBE-[^ ]*\) .*/$ipt $table \1/p" || true
		done
	done
}

remove_kube_chains() {
	local ipt table chain rule
	kube_chains | while read -r ipt table chain; do
		# The rules of other chains that jump to it first (as iptables-save
		# prints them, quoted comments and all).
		"$ipt-save" -t "$table" 2>/dev/null | grep -E -- "^-A [^ ]+ .*-j $chain( |\$)" | grep -v -- "^-A KUBE-" |
			while read -r rule; do printf '%s\n' "${rule#-A }" | xargs "$ipt" -t "$table" -D; done || true
		"$ipt" -t "$table" -F "$chain" || true
	done
	kube_chains | while read -r ipt table chain; do "$ipt" -t "$table" -X "$chain" 2>/dev/null || true; done
}

# lock: one k8s-cluster.sh at a time (on the cache directory: no lock file
# to leave behind).
lock() {
	safe_cache
	exec 9<"$cache"
	flock -n 9 || fail "another k8s-cluster.sh is running"
}

up() {
	[ "$(id -u)" = 0 ] || fail "must run as root"
	lock
	if [ -d "$state/pids" ] && ls "$state/pids" | grep -q .; then
		ours kube-apiserver >/dev/null && { say "already up"; return 0; }
		fail "a cluster's remains are in $state: run '$0 down' first"
	fi
	# Another Kubernetes here would lose its chains, cgroups and device
	# plugins to this one's `down`: refuse to start beside it.
	[ -z "$(kube_chains)" ] || fail "KUBE-* firewall chains exist already (another Kubernetes on this machine?): refusing to start beside them"
	ls -d /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/"$node2_cgroup" >/dev/null 2>&1 &&
		fail "a kubepods or $node2_cgroup cgroup exists already (another kubelet?): refusing to start beside it"
	[ -e /var/lib/kubelet/device-plugins ] && fail "/var/lib/kubelet/device-plugins exists already (another kubelet's?): refusing to start beside it"
	local t0=$SECONDS
	build
	private_dir "$data"
	mkdir -p -m 0700 "$state/pids" "$data/logs" "$pki"
	# From here on `down` may undo what `up` does to the machine.
	local f top
	for f in "${fixed_dirs[@]}"; do
		top=""
		while [ ! -e "$f" ]; do top=$f; f=$(dirname "$f"); done
		[ -n "$top" ] && echo "$top"
	done >"$state/made-dirs"
	local s
	for s in "${sysctls[@]}"; do
		sysctl -n "$s" 2>/dev/null | sed "s|^|$s=|" || true
	done >"$state/sysctls"

	# A veth pair of its own (this kernel has no dummy links): the address
	# on one end, the other end idle.
	ip link add "$node_link" type veth peer name "${node_link%0}1"
	ip addr add "$node_ip/32" dev "$node_link"
	ip link set "$node_link" up
	ip link set "${node_link%0}1" up
	"$state/bin/pki" -dir "$pki" -node "$node" -node-ip "$node_ip" -service-ip "${service_cidr%.0/24}.1"
	write_configs "$data" "$state" "$node" "$node_ip" "$bridge" "$pod_cidr" kubelet

	start containerd /usr/bin/containerd --config "$data/containerd.toml"
	wait_for "containerd" 30 test -S "$sock"
	import_images "$sock" &
	local importing=$!

	start etcd "$state/bin/etcd" -data-dir "$data/etcd" -cert "$pki/etcd.crt" -key "$pki/etcd.key" -ca "$pki/etcd-ca.crt"
	start kube-apiserver "$bin/kube-apiserver" \
		--advertise-address="$node_ip" --bind-address="$node_ip" --secure-port=6443 \
		--etcd-servers=https://127.0.0.1:23790 --etcd-cafile="$pki/etcd-ca.crt" \
		--etcd-certfile="$pki/apiserver-etcd-client.crt" --etcd-keyfile="$pki/apiserver-etcd-client.key" \
		--client-ca-file="$pki/ca.crt" --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
		--kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$pki/ca.crt" --kubelet-preferred-address-types=InternalIP \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
		--service-cluster-ip-range="$service_cidr" --authorization-mode=Node,RBAC --anonymous-auth=false \
		--enable-admission-plugins=NodeRestriction --allow-privileged=true --profiling=false
	wait_for "the API server ready" 180 kubectl get --raw /readyz
	start kube-controller-manager "$bin/kube-controller-manager" \
		--kubeconfig="$pki/controller-manager.conf" --authentication-kubeconfig="$pki/controller-manager.conf" \
		--authorization-kubeconfig="$pki/controller-manager.conf" --bind-address=127.0.0.1 --leader-elect=false \
		--use-service-account-credentials=true --service-account-private-key-file="$pki/sa.key" \
		--root-ca-file="$pki/ca.crt" --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
		--flex-volume-plugin-dir="$data/volume-plugins" --profiling=false
	start kube-scheduler "$bin/kube-scheduler" \
		--kubeconfig="$pki/scheduler.conf" --authentication-kubeconfig="$pki/scheduler.conf" \
		--authorization-kubeconfig="$pki/scheduler.conf" --bind-address=127.0.0.1 --leader-elect=false --profiling=false
	# PersistentVolumeClaims of the class dbduel-local: a local volume on
	# the node the scheduler chose, a directory under $data/pv (root's).
	start provisioner "$state/bin/provisioner" -kubeconfig "$pki/admin.conf" -dir "$data/pv"
	kubectl apply -f - >/dev/null <<-EOF
		apiVersion: storage.k8s.io/v1
		kind: StorageClass
		metadata: {name: $storage_class}
		provisioner: dbduel.test/local-dir
		volumeBindingMode: WaitForFirstConsumer
		reclaimPolicy: Delete
	EOF
	wait "$importing" || fail "importing the images into the node's runtime failed"
	start_kubelet
	start kube-proxy "$bin/kube-proxy" --config="$data/kube-proxy.yaml"
	# Pod to pod (and to a Service's pod) crosses the bridge through the
	# FORWARD chain (bridge-nf-call-iptables), whose policy Docker sets to
	# DROP: accept the pod network's own traffic, in a KUBE-* chain of the
	# cluster's that `down` removes with kube-proxy's.
	iptables -N KUBE-DBDUEL-PODS
	iptables -A KUBE-DBDUEL-PODS -s "$cluster_cidr" -d "$cluster_cidr" -j ACCEPT
	iptables -I FORWARD -j KUBE-DBDUEL-PODS
	wait_for "the node Ready" 180 kubectl wait --for=condition=Ready "node/$node" --timeout=5s
	wait_for "the default service account" 120 kubectl get serviceaccount default
	# A pod must run: the sandbox image, the bridge network and the
	# runtime all work.
	kubectl apply -f - >/dev/null <<-EOF
		apiVersion: v1
		kind: Pod
		metadata: {name: dbduel-k8s-probe, namespace: default}
		spec:
		  automountServiceAccountToken: false
		  containers: [{name: probe, image: $pause_image, imagePullPolicy: Never}]
	EOF
	wait_for "a test pod running" 120 kubectl wait --for=condition=Ready pod/dbduel-k8s-probe --timeout=5s
	kubectl delete pod dbduel-k8s-probe --grace-period=0 --wait=false >/dev/null
	ours provisioner >/dev/null || fail "the provisioner exited: $(tail -n 3 "$data/logs/provisioner.log" 2>/dev/null)"
	say "up in $((SECONDS - t0)) s: node $node Ready at $node_ip; '$0 env' prints the exports"
}

start_kubelet() {
	start kubelet "$bin/kubelet" --config="$data/kubelet.yaml" --kubeconfig="$pki/kubelet.conf" \
		--root-dir="$data/kubelet" --hostname-override="$node" --node-ip="$node_ip"
}

# kubelet stop|start: the node's kubelet alone, for the fault tests (the
# pods' containers run on without it; the node goes NotReady). start
# waits until the node is Ready again.
kubelet_ctl() {
	[ "$(id -u)" = 0 ] || fail "must run as root"
	lock
	ours kube-apiserver >/dev/null || fail "the cluster is not up"
	case "${1:-}" in
	stop)
		stop kubelet
		say "kubelet stopped"
		;;
	start)
		ours kubelet >/dev/null || start_kubelet
		# Answering through the API server's node proxy (which attach and
		# exec take), and Ready (the node controller may have marked it not).
		wait_for "the kubelet answering" 120 kubectl get --raw "/api/v1/nodes/$node/proxy/healthz"
		wait_for "the node Ready" 120 kubectl wait --for=condition=Ready "node/$node" --timeout=5s
		say "kubelet running, node Ready"
		;;
	*) fail "usage: $0 kubelet stop|start" ;;
	esac
}

down() {
	[ "$(id -u)" = 0 ] || fail "must run as root"
	lock
	[ -d "$state" ] || [ -d "$data" ] || { say "not up"; return 0; }
	# Only an `up` that passed its checks leaves made-dirs: without it,
	# nothing of the machine's (chains, cgroups, links, settings) is this
	# cluster's to remove.
	local started=0
	[ -f "$state/made-dirs" ] && started=1
	stop kubelet kube-proxy node2-kubelet node2-kube-proxy
	# The pods: torn down through each runtime (their containers killed,
	# their network deleted) while it still runs.
	ours containerd >/dev/null && { "$state/bin/cri-clean" -socket "$sock" || true; }
	ours node2-containerd >/dev/null && { "$state/bin/cri-clean" -socket "$node2_sock" || true; }
	stop containerd node2-containerd
	kill_shims "$sock"
	kill_shims "$node2_sock"
	stop provisioner kube-scheduler kube-controller-manager kube-apiserver
	stop etcd
	if [ $started = 1 ]; then
		undo_machine_changes
	fi
	local d
	for d in $(awk -v s="$state" -v v="$data" 'index($2, s"/") == 1 || index($2, v"/") == 1 {print $2}' /proc/mounts | sort -r); do
		umount -l "$d" || true
	done
	rm -rf --one-file-system "$data" "$state"
	say "down"
}

# kill_shims SOCKET ends the shims of that runtime: a shim outlives its
# containerd, and names its socket.
kill_shims() {
	local sock=$1 pid exe id
	for pid in $(pgrep -u 0 -f "containerd-shim-runc-v2 .*-address $sock( |$)" || true); do
		exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
		[ "${exe% (deleted)}" = /usr/bin/containerd-shim-runc-v2 ] || continue
		id=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n '/^-id$/{n;p;q}')
		kill -KILL "$pid" 2>/dev/null || true
		# Its socket is in /run/containerd/s whatever the runtime's state
		# directory (named by a hash of the runtime's address, namespace
		# and id), and a killed shim leaves it there.
		[ -n "$id" ] && rm -f "/run/containerd/s/$(printf '%s' "$sock/k8s.io/$id" | sha256sum | cut -d' ' -f1)"
	done
	return 0
}

# remove_cgroups NAME: the processes left in each hierarchy's NAME cgroup
# tree are killed, then the tree removed.
remove_cgroups() {
	local c
	for c in /sys/fs/cgroup/*/"$1"; do
		[ -d "$c" ] || continue
		find "$c" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
		find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

# undo_machine_changes removes what `up` added outside its directories.
undo_machine_changes() {
	# kube-proxy's chains (iptables mode: no IPVS, ipset or nftables) and
	# what the kubelet adds and no option turns off (KUBE-FIREWALL and the
	# jumps to it, KUBE-IPTABLES-HINT, KUBE-KUBELET-CANARY). Not
	# `kube-proxy --cleanup`: it also flushes every IPVS service of the
	# machine. `up` refused to start where any KUBE-* chain existed, so
	# all of them are this cluster's.
	remove_kube_chains
	# What a killed pod could leave: the pods' cgroups (processes first;
	# `up` refused where a kubepods cgroup existed).
	remove_cgroups kubepods
	remove_cgroups "$node2_cgroup"
	ip link del "$bridge" 2>/dev/null || true
	ip link del "$node_link" 2>/dev/null || true
	ip link del "$node2_link" 2>/dev/null || true
	if [ -f "$state/sysctls" ]; then
		local kv
		while read -r kv; do sysctl -q -w "$kv" >/dev/null 2>&1 || true; done <"$state/sysctls"
	fi
	# The fixed directories: this cluster's entries, then the directories
	# `up` made, if nothing else has put anything there since.
	find /var/log/containers -maxdepth 1 -type l -lname "$data/*" -delete 2>/dev/null || true
	local f id
	for f in /var/lib/cni/results/dbduel-k8s-*-eth0; do
		[ -f "$f" ] || continue
		id=${f#/var/lib/cni/results/dbduel-k8s-}
		rm -f "$f" "/var/lib/cni/results/cni-loopback-${id%-eth0}-lo"
	done
	rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
	# The fixed directory and its parents up to the one `up` made, each
	# only if empty: nothing another program put there goes.
	local top
	while read -r top; do
		for d in "${fixed_dirs[@]}"; do
			case "$d/" in "$top"/*) ;; *) continue ;; esac
			while rmdir "$d" 2>/dev/null && [ "$d" != "$top" ]; do d=$(dirname "$d"); done
		done
	done <"$state/made-dirs"
}

# node2_up [IMAGE...] adds the second node: its network namespace (a file
# in the state directory, not /run/netns: Podman's and ip-netns'), a veth
# pair to this machine and the routes between the two pod networks, its
# kubelet's cgroup root, certificate and configurations, and its
# containerd (the pause image and IMAGEs imported, default every
# dbduel-test/* image), kubelet and kube-proxy in the namespace; it waits
# for the node Ready.
node2_up() {
	[ "$(id -u)" = 0 ] || fail "must run as root"
	lock
	ours kube-apiserver >/dev/null || fail "the cluster is not up"
	ours node2-kubelet >/dev/null && { say "node2 already up"; return 0; }
	[ -e "$node2_state" ] && fail "node2's remains are in $node2_state: run '$0 node2 down' first"
	ls -d /sys/fs/cgroup/*/"$node2_cgroup" >/dev/null 2>&1 && fail "a $node2_cgroup cgroup exists already: refusing to use it"
	local t0=$SECONDS
	mkdir -m 0700 "$node2_state"
	mkdir -p -m 0700 "$node2_data"
	touch "$node2_netns"
	unshare --net="$node2_netns" true
	# Made from inside, its other end put in this script's namespace.
	nsenter --net="$node2_netns" ip link add eth0 type veth peer name "$node2_link" netns $$
	nsenter --net="$node2_netns" sh -euc "
		ip link set lo up
		ip addr add $node2_ip/32 dev eth0
		ip link set eth0 up
		ip route add $node_ip/32 dev eth0
		ip route add default via $node_ip dev eth0
		sysctl -qw net.ipv4.ip_forward=1
		sysctl -qw net.bridge.bridge-nf-call-iptables=1"
	ip link set "$node2_link" up
	ip route add "$node2_ip/32" dev "$node2_link"
	ip route add "$node2_pod_cidr" via "$node2_ip" dev "$node2_link"
	# The kubelet's cgroup root, in every hierarchy (a cpuset's CPUs and
	# memory nodes are its parent's).
	local c
	for c in /sys/fs/cgroup/*/; do
		[ -L "${c%/}" ] && continue
		mkdir "$c$node2_cgroup"
		if [ -f "${c}cpuset.cpus" ]; then
			cat "${c}cpuset.cpus" >"$c$node2_cgroup/cpuset.cpus"
			cat "${c}cpuset.mems" >"$c$node2_cgroup/cpuset.mems"
		fi
	done
	"$state/bin/pki" -add-node -dir "$pki" -node "$node2" -node-ip "$node2_ip" -api-ip "$node_ip"
	write_configs "$node2_data" "$node2_state" "$node2" "$node2_ip" dbduel-cni1 "$node2_pod_cidr" "kubelet-$node2" "/$node2_cgroup"
	in_netns=$node2_netns start node2-containerd /usr/bin/containerd --config "$node2_data/containerd.toml"
	wait_for "node2's containerd" 30 test -S "$node2_sock"
	import_images "$node2_sock" "$@"
	in_netns=$node2_netns start node2-kubelet "$bin/kubelet" --config="$node2_data/kubelet.yaml" \
		--kubeconfig="$pki/kubelet-$node2.conf" --root-dir="$node2_data/kubelet" --hostname-override="$node2" --node-ip="$node2_ip"
	in_netns=$node2_netns start node2-kube-proxy "$bin/kube-proxy" --config="$node2_data/kube-proxy.yaml"
	wait_for "node2 Ready" 180 kubectl wait --for=condition=Ready "node/$node2" --timeout=5s
	say "node2 up in $((SECONDS - t0)) s: $node2 Ready at $node2_ip"
}

# node2_down takes the second node away: its pods, processes, cgroups,
# namespace, link, files and Node object.
node2_down() {
	[ "$(id -u)" = 0 ] || fail "must run as root"
	lock
	[ -d "$node2_state" ] || { say "node2 not up"; return 0; }
	stop node2-kubelet node2-kube-proxy
	ours node2-containerd >/dev/null && { "$state/bin/cri-clean" -socket "$node2_sock" || true; }
	stop node2-containerd
	kill_shims "$node2_sock"
	remove_cgroups "$node2_cgroup"
	ours kube-apiserver >/dev/null && { kubectl delete node "$node2" --ignore-not-found --wait=false >/dev/null || true; }
	local d
	for d in $(awk -v s="$node2_state" -v v="$node2_data" 'index($2, s"/") == 1 || index($2, v"/") == 1 {print $2}' /proc/mounts | sort -r); do
		umount -l "$d" || true
	done
	ip link del "$node2_link" 2>/dev/null || true
	find /var/log/containers -maxdepth 1 -type l -lname "$node2_data/*" -delete 2>/dev/null || true
	rm -rf --one-file-system "$node2_data" "$node2_state"
	rm -f "$pki/kubelet-$node2".*
	say "node2 down"
}

print_env() {
	echo "export KUBECONFIG=$pki/admin.conf"
	echo "export PATH=$bin:\$PATH"
}

case "${1:-}" in
up) up ;;
down) down ;;
env) print_env ;;
build) build ;;
kubelet) kubelet_ctl "${2:-}" ;;
node2)
	case "${2:-}" in
	up) shift 2; node2_up "$@" ;;
	down) node2_down ;;
	*) echo "usage: $0 node2 up [IMAGE...]|down" >&2; exit 2 ;;
	esac
	;;
*) echo "usage: $0 up|down|env|build|kubelet stop|start|node2 up [IMAGE...]|down" >&2; exit 2 ;;
esac
