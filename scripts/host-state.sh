#!/usr/bin/env bash
# Prints what the test cluster must leave as it found it on this machine:
# Docker's and Podman's containers, images and networks, the network
# links, the firewall's tables (without counters), the mounts, the kernel
# settings the node's components may change, the cgroups at the top of
# each hierarchy. .ci/run compares it before `k8s-cluster.sh up` and after
# `down`.
set -uo pipefail
echo "# docker containers, images, networks"
docker ps -a --no-trunc --format '{{.ID}} {{.Names}} {{.State}}' | sort
docker images -a --no-trunc --format '{{.ID}} {{.Repository}}:{{.Tag}}' | sort
docker network ls --no-trunc --format '{{.ID}} {{.Name}} {{.Driver}}' | sort
echo "# podman containers, images, networks"
podman ps -a --no-trunc --format '{{.ID}} {{.Names}} {{.State}}' 2>&1 | sort
podman images -a --no-trunc --format '{{.ID}} {{.Repository}}:{{.Tag}}' 2>&1 | sort
podman network ls --format '{{.Name}} {{.Driver}}' 2>&1 | sort
echo "# links"
ip -o link | awk -F': ' '{print $2}' | sort
echo "# iptables"
# A table holding only its built-in chains at ACCEPT, without a rule, is
# left out: the first iptables call that names it makes the kernel load it
# (kube-proxy's, on a fresh machine), and an empty table is no change.
for t in iptables-save ip6tables-save iptables-legacy-save ip6tables-legacy-save; do
	"$t" 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//' | awk '
		/^\*/ { table = $0; buf = ""; used = 0; next }
		/^COMMIT/ { if (used) printf "%s\n%s%s\n", table, buf, $0; next }
		{ buf = buf $0 "\n" }
		!/^:(INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) ACCEPT *$/ { used = 1 }' | sort
done
echo "# mounts"
awk '{print $2, $3}' /proc/mounts | sort
echo "# netns"
ls /run/netns 2>/dev/null | sort
echo "# sysctls"
sysctl vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys \
	kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables net.ipv4.ip_forward 2>&1
echo "# the kubelet's, CNI's and runc's fixed directories"
for d in /var/log/containers /var/lib/kubelet /usr/libexec/kubernetes /var/lib/cni /run/containerd/runc /etc/kubernetes; do
	[ -e "$d" ] && find "$d" | sort
done
echo "# cgroups"
find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d | sort
