#!/usr/bin/env bash
# A MongoDB-protocol test server for this machine (Debian has no MongoDB):
# FerretDB v1 embedded in scripts/mongo-test-server, over a throwaway
# PostgreSQL cluster, both on free 127.0.0.1 ports.
#   scripts/mongo-test-server.sh start   prints its mongodb:// URI on a line of its own
#   scripts/mongo-test-server.sh stop    stops both and removes their files
#   scripts/mongo-test-server.sh uri     prints the running server's URI
# One server per state directory ($DBDUEL_MONGO_TEST_DIR, default
# /tmp/dbduel-mongo-test-server). It counts what it serves as mongod's
# serverStatus.opcounters; results against it are FerretDB's, not MongoDB's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
state=${DBDUEL_MONGO_TEST_DIR:-/tmp/dbduel-mongo-test-server}
. "$here/lib/mongo-test-server-bin.sh"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
as_postgres() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups "$@"; else "$@"; fi; }

# own_state says $state is this script's own, as start made it: a
# directory (not a link) of the caller's with mode 711, its pg
# subdirectory 0700 and postgres's (when run as root). Anything else at
# that path (another user's plant) is neither stopped nor removed.
own_state() {
	[ -d "$state" ] && [ ! -L "$state" ] || return 1
	[ "$(stat -c '%u %a' "$state")" = "$(id -u) 711" ] || return 1
	if [ -e "$state/pg" ] || [ -L "$state/pg" ]; then
		[ ! -L "$state/pg" ] && [ "$(stat -c '%a' "$state/pg")" = 700 ] || return 1
		if [ "$(id -u)" = 0 ]; then [ "$(stat -c '%U' "$state/pg")" = postgres ] || return 1; fi
	fi
}

stop() {
	[ -e "$state" ] || [ -L "$state" ] || return 0
	if ! own_state; then
		echo "mongo-test-server: $state was not made by this script (its owner, mode or a link): not touching it" >&2
		return 1
	fi
	if [ -f "$state/server.pid" ]; then
		pid=$(cat "$state/server.pid")
		# Only our own process: its program is a mongo-test-server build.
		if [[ $(readlink /proc/"$pid"/exe 2>/dev/null) == */mongo-test-server-* ]]; then
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		fi
	fi
	if [ -f "$state/pg/data/postmaster.pid" ]; then
		as_postgres "$(pgbin)/pg_ctl" -D "$state/pg/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$state"
}

start() {
	if { [ -e "$state" ] || [ -L "$state" ]; } && ! own_state; then
		echo "mongo-test-server: $state exists and was not made by this script: refusing it" >&2
		exit 1
	fi
	if [ -f "$state/uri" ]; then
		echo "mongo-test-server: already running (stop it first)" >&2
		cat "$state/uri"
		return 0
	fi
	bin=$(pgbin)
	[ -n "$bin" ] || { echo "mongo-test-server: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
	mongo_test_server_bin
	# As root on a machine others use: the state directory is made here,
	# not found (an existing one, a link included, is refused), and root's
	# files stay out of the part the postgres account owns. PostgreSQL
	# listens on no TCP port: FerretDB reaches it through the socket in
	# that 0700 directory, so no local user can log in to its superuser.
	if ! mkdir -m 711 "$state"; then
		echo "mongo-test-server: $state exists (a server not stopped?): stop it or remove it first" >&2
		exit 1
	fi
	trap 'stop' ERR
	mkdir -m 700 "$state/pg"
	chown postgres: "$state/pg" 2>/dev/null || true
	pgport=$(free_port)
	as_postgres "$bin/initdb" -D "$state/pg/data" -U postgres --auth-local=trust --auth-host=reject --encoding=UTF8 --locale=C >/dev/null
	as_postgres "$bin/pg_ctl" -D "$state/pg/data" -l "$state/pg/log" -w \
		-o "-c listen_addresses= -c port=$pgport -c unix_socket_directories=$state/pg -c max_connections=300 -c fsync=on" start >/dev/null
	as_postgres "$bin/psql" -h "$state/pg" -p "$pgport" -U postgres -d postgres -q -c 'CREATE DATABASE ferretdb' >/dev/null
	"$mongo_test_server" --postgresql-url "postgres://postgres@/ferretdb?host=$state/pg&port=$pgport&pool_max_conns=250" \
		--listen 127.0.0.1:0 >"$state/uri.out" 2>"$state/server.log" &
	echo $! >"$state/server.pid"
	for _ in $(seq 1 600); do
		grep -q '^mongodb://' "$state/uri.out" 2>/dev/null && break
		kill -0 "$(cat "$state/server.pid")" 2>/dev/null || { cat "$state/server.log" >&2; stop; exit 1; }
		sleep 0.1
	done
	grep '^mongodb://' "$state/uri.out" >"$state/uri" || { echo "mongo-test-server: no URI within 60 s" >&2; stop; exit 1; }
	cat "$state/uri"
}

case "${1:-}" in
start) start ;;
stop) stop ;;
uri) cat "$state/uri" ;;
*) echo "usage: $0 start|stop|uri" >&2; exit 2 ;;
esac
