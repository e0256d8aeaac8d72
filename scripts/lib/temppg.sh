# Sourced by the bench scripts: one throwaway PostgreSQL server on a free
# 127.0.0.1 port, run as postgres in a directory of the caller's own, with
# a role bench (random password) owning the databases pgb and sbtest,
# stopped and removed on exit.
# Usage: start_temp_pg WORK MAX_CONNECTIONS; WORK is a root-only directory
# the caller made (its programs stay there); sets bindir, pg, port,
# server_pid, bench_pw and url, and defines psql (as the superuser, over
# the socket). on_exit, when set, runs first on exit (the caller's own
# clean-up).
#
# It listens on loopback, where any local user can connect: only the socket
# (in a 0700 directory) trusts, TCP asks for a password, the superuser has
# none, and the bench role (its password shows in the clients' command
# lines) owns the bench databases and nothing else, so it cannot run a
# program or write a file as the server's OS user. The server's files and
# socket go in a directory of postgres's own under WORK: its account must
# not be able to swap a program root runs.
start_temp_pg() {
	local work=$1 maxconn=$2
	temp_pg_work=$work pg=$work/pg
	trap 'stop_temp_pg' EXIT # from here on: a failed start removes what it made
	bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -n "$bindir" ] && [ -x "$bindir/initdb" ] || { echo "bench: PostgreSQL's server is missing (apt-get install postgresql)" >&2; return 1; }
	chmod 711 "$work"
	mkdir -m 700 "$pg"
	chown postgres: "$pg"
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	as_pg "$bindir/initdb" -D "$pg/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C >/dev/null
	as_pg "$bindir/pg_ctl" -D "$pg/data" -l "$pg/log" -w \
		-o "-p $port -k $pg -c listen_addresses=127.0.0.1 -c max_connections=$maxconn -c shared_buffers=512MB" start >/dev/null
	server_pid=$(head -1 "$pg/data/postmaster.pid")
	# The file is postgres's: root takes its pid only when it is this server.
	if [ "$(stat -c %U "/proc/$server_pid" 2>/dev/null)" != postgres ] || [ "$(readlink "/proc/$server_pid/exe")" != "$bindir/postgres" ]; then
		echo "bench: postmaster.pid names pid $server_pid, which is not this server" >&2
		return 1
	fi
	bench_pw=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	# (On stdin: root's command line would show the password.)
	psql -d postgres <<<"CREATE ROLE bench LOGIN PASSWORD '$bench_pw'; CREATE DATABASE pgb OWNER bench; CREATE DATABASE sbtest OWNER bench;"
	url="postgres://bench:$bench_pw@127.0.0.1:$port/sbtest"
}

as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
psql() { command psql -h "$pg" -p "$port" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }

# stop_temp_pg also runs a caller's extra clean-up, set in on_exit. (Every
# step may fail, a server never started included: the rest still runs.)
stop_temp_pg() {
	if [ -n "${on_exit:-}" ]; then eval "$on_exit" || true; fi
	if [ -f "$pg/data/postmaster.pid" ]; then
		as_pg "$bindir/pg_ctl" -D "$pg/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$temp_pg_work"
}
