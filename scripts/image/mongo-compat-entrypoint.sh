#!/bin/sh
# Entrypoint of dbduel-test/mongo-compat: FerretDB (internal/tools/mongo-test-server)
# over PostgreSQL, following the official mongo image's conventions so that
# dbduel treats both the same way:
#   - MONGO_INITDB_ROOT_USERNAME/_PASSWORD create the account clients must
#     use (a PostgreSQL role: FerretDB v1 passes PLAIN credentials through);
#     without them, clients need none;
#   - data lives in /data/db (PostgreSQL's cluster in /data/db/pg);
#   - arguments starting with '-' are mongod's: --port, --bind_ip and
#     --dbpath are honoured, others are reported and ignored.
set -eu

if [ $# -gt 0 ] && [ "$1" = mongod ]; then shift; fi
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then exec "$@"; fi

port=27017 bind=0.0.0.0 dbpath=/data/db
while [ $# -gt 0 ]; do
	case "$1" in
	--port) port=$2; shift 2 ;;
	--bind_ip) bind=$2; shift 2 ;;
	--dbpath) dbpath=$2; shift 2 ;;
	--config) echo "entrypoint: ignoring mongod's --config $2 (this is FerretDB, not mongod)" >&2; shift 2 ;;
	*) echo "entrypoint: ignoring mongod argument $1" >&2; shift ;;
	esac
done

bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
export PATH="$bindir:$PATH"
PGDATA=$dbpath/pg
export PGDATA
user=${MONGO_INITDB_ROOT_USERNAME:-}
pass=${MONGO_INITDB_ROOT_PASSWORD:-}
sock=/var/run/postgresql
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$dbpath" "$sock"
chown postgres:postgres "$dbpath" "$sock"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	echo "entrypoint: initialising $PGDATA"
	as_postgres initdb -D "$PGDATA" -U postgres --auth-local=trust --encoding=UTF8 --locale=C >/dev/null
	as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k $sock" -w start >/dev/null
	as_postgres psql -h "$sock" -U postgres -d postgres -v ON_ERROR_STOP=1 -q -c 'CREATE DATABASE ferretdb' >/dev/null
	if [ -n "$user" ]; then
		# Clients must now authenticate (PLAIN, passed through to this role).
		# psql quotes the variables (-c would not interpolate them).
		echo "CREATE ROLE :\"u\" LOGIN SUPERUSER PASSWORD :'p';" |
			as_postgres psql -h "$sock" -U postgres -d postgres -v ON_ERROR_STOP=1 -q -v u="$user" -v p="$pass" >/dev/null
		echo "local all all scram-sha-256" >"$PGDATA/pg_hba.conf"
	fi
	as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	echo "entrypoint: ready"
fi

# PostgreSQL on its Unix socket only: nothing else in the container listens
# but the MongoDB port (so network=host collides with nothing).
as_postgres postgres -D "$PGDATA" -c listen_addresses='' -c unix_socket_directories="$sock" -c max_connections=300 &
pg=$!
for _ in $(seq 1 300); do pg_isready -q -h "$sock" && break; sleep 0.1; done

url="postgres:///ferretdb?host=$sock&pool_max_conns=250"
if [ -z "$user" ]; then url="postgres://postgres@/ferretdb?host=$sock&pool_max_conns=250"; fi
as_postgres /usr/local/bin/mongo-test-server --listen "$bind:$port" --postgresql-url "$url" &
srv=$!
trap 'kill -TERM $srv 2>/dev/null; wait $srv; kill -INT $pg 2>/dev/null; wait $pg; exit 0' TERM INT
wait $srv
kill -INT $pg 2>/dev/null
wait $pg
