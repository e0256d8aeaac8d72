#!/usr/bin/env bash
# A second Docker engine, "another host" for the remote-engine tests:
# dockerd in a network namespace of its own (dbduel-remote), listening on
# tcp://10.254.77.2:2376 with TLS (a CA, server and client certificates made
# here for the test: the client's in /run/dbduel-remote-engine/tls/client,
# as the Docker CLI's DOCKER_CERT_PATH) and on a unix socket for this
# script, reached from this machine over a veth pair (10.254.77.1 here),
# with its own data root, exec root, containerd and bridge
# (172.31.250.1/24). `ip netns exec` cannot run it (it remounts /sys and
# dockerd then finds no devices cgroup): nsenter --net does.
# Usage: scripts/remote-engine.sh up [IMAGE...]   start it, copy the images in
#        scripts/remote-engine.sh down            stop it, remove everything
set -euo pipefail
ns=dbduel-remote
here_ip=10.254.77.1
engine_ip=10.254.77.2
engine=tcp://$engine_ip:2376
data=/var/lib/dbduel-remote-engine
run=/run/dbduel-remote-engine
sock=unix://$run/docker.sock
tls=$run/tls

answers() { timeout 5 docker -H "$sock" version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# certs makes a CA, the engine's certificate (for its address) and a
# client's, each key on P-256, valid for two days.
certs() {
	mkdir -p "$tls/client"
	chmod 700 "$tls"
	cd "$tls"
	openssl ecparam -genkey -name prime256v1 -noout -out ca-key.pem 2>/dev/null
	openssl req -new -x509 -days 2 -key ca-key.pem -subj "/CN=dbduel test CA" -out ca.pem 2>/dev/null
	sign() { # name CN extensions
		openssl ecparam -genkey -name prime256v1 -noout -out "$1-key.pem" 2>/dev/null
		openssl req -new -key "$1-key.pem" -subj "/CN=$2" -out "$1.csr" 2>/dev/null
		printf '%s\n' "$3" >"$1.ext"
		openssl x509 -req -days 2 -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -out "$1-cert.pem" -extfile "$1.ext" 2>/dev/null
	}
	sign server "$engine_ip" "subjectAltName=IP:$engine_ip
extendedKeyUsage=serverAuth"
	sign client "dbduel test client" "extendedKeyUsage=clientAuth"
	cp ca.pem client/ca.pem
	mv client-cert.pem client/cert.pem
	mv client-key.pem client/key.pem
	cd - >/dev/null
}

# sshd_up starts an sshd in the namespace on $engine_ip:22 (when sshd is
# installed) for the ssh:// tests: one key, root's, whose only command is
# the Docker CLI's dial-stdio to this engine's socket; its host key pinned
# in a known-hosts file, and an ssh in $run/ssh/bin that uses them (the
# Docker client's connection helper runs the ssh it finds in PATH).
sshd_up() {
	[ -x /usr/sbin/sshd ] || return 0
	local d=$run/ssh
	if [ ! -f "$d/client_key" ]; then
		mkdir -p "$d/bin"
		chmod 700 "$d"
		ssh-keygen -q -t ed25519 -N '' -f "$d/host_key"
		ssh-keygen -q -t ed25519 -N '' -f "$d/client_key"
		printf 'restrict,command="%s --host %s system dial-stdio" %s\n' "$(command -v docker)" "$sock" "$(cat "$d/client_key.pub")" >"$d/authorized_keys"
		printf '%s %s\n' "$engine_ip" "$(cut -d' ' -f1,2 "$d/host_key.pub")" >"$d/known_hosts"
		cat >"$d/sshd_config" <<-EOC
			ListenAddress $engine_ip:22
			HostKey $d/host_key
			AuthorizedKeysFile $d/authorized_keys
			PermitRootLogin prohibit-password
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			UsePAM no
			PidFile $d/sshd.pid
		EOC
		cat >"$d/ssh_config" <<-EOC
			Host $engine_ip
			  User root
			  IdentityFile $d/client_key
			  IdentitiesOnly yes
			  UserKnownHostsFile $d/known_hosts
			  StrictHostKeyChecking yes
			  BatchMode yes
		EOC
		printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$d/ssh_config" >"$d/bin/ssh"
		chmod 755 "$d/bin/ssh"
	fi
	[ -f "$d/sshd.pid" ] && owned "$(cat "$d/sshd.pid")" "$d/sshd_config" && return 0
	mkdir -p /run/sshd
	nsenter --net="/var/run/netns/$ns" /usr/sbin/sshd -f "$d/sshd_config" -E "$d/sshd.log"
	for _ in $(seq 1 20); do
		timeout 1 bash -c "</dev/tcp/$engine_ip/22" 2>/dev/null && break
		sleep 0.5
	done
	echo "remote engine: ssh://root@$engine_ip (ssh: $d/bin/ssh)"
}

# owned says pid is alive and its command line names what (a pidfile
# alone is never reason to signal a process).
owned() {
	[ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "$2"
}

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
		[ -f "$tls/client/cert.pem" ] || certs
		# The config file must not repeat what the command line says
		# (data-root): dockerd refuses the conflict.
		echo '{"storage-driver": "fuse-overlayfs", "mtu": 1400}' >"$run/daemon.json"
		nsenter --net="/var/run/netns/$ns" dockerd --config-file "$run/daemon.json" -H "$engine" -H "$sock" \
			--tlsverify --tlscacert "$tls/ca.pem" --tlscert "$tls/server-cert.pem" --tlskey "$tls/server-key.pem" \
			--data-root "$data" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" \
			--bip 172.31.250.1/24 >"$run/dockerd.log" 2>&1 &
		for _ in $(seq 1 120); do
			answers && break
			sleep 0.5
		done
		answers || { echo "remote engine: dockerd did not answer on $engine within 60 s:" >&2; tail -5 "$run/dockerd.log" >&2; exit 1; }
	fi
	for img in "$@"; do
		docker -H "$sock" image inspect "$img" >/dev/null 2>&1 && continue
		echo "remote engine: loading $img"
		docker save "$img" | docker -H "$sock" load -q >/dev/null
	done
	sshd_up
	echo "remote engine: $engine (TLS client files: $tls/client)"
}

down() {
	local pid
	if [ -f "$run/ssh/sshd.pid" ]; then
		pid=$(cat "$run/ssh/sshd.pid")
		owned "$pid" "$run/ssh/sshd_config" && kill "$pid" || true
	fi
	if [ -f "$run/dockerd.pid" ]; then
		pid=$(cat "$run/dockerd.pid")
		if owned "$pid" "$run/dockerd.pid"; then
			kill "$pid"
			for _ in $(seq 1 60); do
				owned "$pid" "$run/dockerd.pid" || break
				sleep 0.5
			done
			owned "$pid" "$run/dockerd.pid" && kill -9 "$pid" || true
		fi
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
