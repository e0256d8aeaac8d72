#!/usr/bin/env bash
# A second Docker engine, "another host" for the remote-engine tests:
# dockerd in a network namespace of its own (dbduel-remote), listening on
# tcp://10.254.77.2:2375, reached from this machine over a veth pair
# (10.254.77.1 here), with its own data root, exec root, containerd and
# bridge (172.31.250.1/24). `ip netns exec` cannot run it (it remounts /sys
# and dockerd then finds no devices cgroup): nsenter --net does.
# Usage: scripts/remote-engine.sh up [IMAGE...]   start it, copy the images in
#        scripts/remote-engine.sh down            stop it, remove everything
set -euo pipefail
ns=dbduel-remote
here_ip=10.254.77.1
engine_ip=10.254.77.2
engine=tcp://$engine_ip:2375
data=/var/lib/dbduel-remote-engine
run=/run/dbduel-remote-engine

answers() { timeout 5 docker -H "$engine" version --format '{{.Server.Version}}' >/dev/null 2>&1; }

up() {
	if ! answers; then
		ip netns list | grep -qw "$ns" || ip netns add "$ns"
		if ! ip link show dbd-remote0 >/dev/null 2>&1; then
			ip link add dbd-remote0 type veth peer name dbd-remote1
			ip link set dbd-remote1 netns "$ns"
			ip addr add "$here_ip/24" dev dbd-remote0
			ip link set dbd-remote0 up
			ip -n "$ns" addr add "$engine_ip/24" dev dbd-remote1
			ip -n "$ns" link set dbd-remote1 up
			ip -n "$ns" link set lo up
			ip -n "$ns" route add default via "$here_ip"
		fi
		mkdir -p "$data" "$run"
		# The config file must not repeat what the command line says
		# (data-root): dockerd refuses the conflict.
		echo '{"storage-driver": "fuse-overlayfs", "mtu": 1400}' >"$run/daemon.json"
		nsenter --net="/var/run/netns/$ns" dockerd --config-file "$run/daemon.json" -H "$engine" \
			--data-root "$data" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" \
			--bip 172.31.250.1/24 >"$run/dockerd.log" 2>&1 &
		for _ in $(seq 1 120); do
			answers && break
			sleep 0.5
		done
		answers || { echo "remote engine: dockerd did not answer on $engine within 60 s:" >&2; tail -5 "$run/dockerd.log" >&2; exit 1; }
	fi
	for img in "$@"; do
		docker -H "$engine" image inspect "$img" >/dev/null 2>&1 && continue
		echo "remote engine: loading $img"
		docker save "$img" | docker -H "$engine" load -q >/dev/null
	done
	echo "remote engine: $engine"
}

down() {
	if [ -f "$run/dockerd.pid" ]; then
		pid=$(cat "$run/dockerd.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 60); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -9 "$pid" 2>/dev/null || true
	fi
	# Its containerd's shims and the engine's mounts go with it.
	pkill -f "containerd.*$run" 2>/dev/null || true
	grep -o " $data[^ ]*\| $run[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	ip netns list | grep -qw "$ns" && ip netns del "$ns"
	ip link del dbd-remote0 2>/dev/null || true
	rm -rf "$data" "$run"
}

case "${1:-}" in
up) shift; up "$@" ;;
down) down ;;
*) echo "usage: $0 up [IMAGE...] | down" >&2; exit 2 ;;
esac
