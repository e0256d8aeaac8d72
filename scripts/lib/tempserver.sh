# Sourced by the bench scripts: one throwaway mariadbd on a free 127.0.0.1
# port with a temp datadir and a user bench with a random password,
# removed on exit.
# Usage: start_temp_server NAME [server flags...]; sets dir, port, url,
# sock and bench_pw.
#
# The server runs as root on a machine others use, and listens on loopback
# from its start: its root account authenticates by the socket only
# (unix_socket: the OS user root, through a socket in a root-only
# directory), so no one reaches it over TCP before or after the bench user
# exists. The bench user's password is random (it shows in the clients'
# command lines) and it has the bench databases only: no FILE privilege,
# so a local user who reads it from ps can write no file as root; and
# root's own statements never read what the bench user made (a view of
# its making would run with root's rights): the scripts read those tables
# as the bench user.
start_temp_server() {
	local name=$1; shift
	dir=$(mktemp -d "/tmp/dbduel-$name.XXXXXX")
	temp_server_pid=
	trap 'stop_temp_server' EXIT # from here on: a failed start removes what it made
	sock="$dir/sock"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=socket --skip-test-db --user=root >/dev/null
	mkdir -m 700 "$dir/nofiles" # secure_file_priv: the only place the server's file statements reach
	mariadbd --no-defaults --datadir="$dir/data" --port="$port" --bind-address=127.0.0.1 --socket="$sock" \
		--user=root --skip-name-resolve --secure-file-priv="$dir/nofiles" "$@" >"$dir/log" 2>&1 &
	temp_server_pid=$!
	for _ in $(seq 1 100); do mariadb --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
	bench_pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	mariadb --socket="$sock" -uroot -e "CREATE USER 'bench'@'%' IDENTIFIED BY '$bench_pw'; GRANT ALL ON sbtest.* TO 'bench'@'%'; GRANT ALL ON gotpc.* TO 'bench'@'%'; CREATE DATABASE sbtest;"
	url="mysql://bench:$bench_pw@127.0.0.1:$port/sbtest"
}

# stop_temp_server also runs a caller's extra clean-up, set in on_exit.
# (Every step may fail, an already dead server included: the rest still
# runs.)
stop_temp_server() {
	if [ -n "${on_exit:-}" ]; then eval "$on_exit" || true; fi
	if [ -n "$temp_server_pid" ]; then
		kill "$temp_server_pid" 2>/dev/null || true
		wait "$temp_server_pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
