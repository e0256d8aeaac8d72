#!/bin/sh
# Entrypoint of dbduel's PostgreSQL test image. It follows the official
# postgres image's conventions, so dbduel treats both the same way:
#   - arguments starting with '-' go to postgres ("postgres -c ..." too);
#   - POSTGRES_PASSWORD sets the password of POSTGRES_USER (default
#     postgres), POSTGRES_DB (default: the user's name) is created;
#   - PGDATA (default /var/lib/postgresql/data) is initialised when empty
#     and reused when filled; remote clients authenticate with scram-sha-256.
set -eu

if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then
	set -- postgres "$@"
fi
if [ "$1" != postgres ]; then
	exec "$@"
fi
shift

bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
export PATH="$bindir:$PATH"
PGDATA=${PGDATA:-/var/lib/postgresql/data}
export PGDATA
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ]; then
		echo "entrypoint: database is uninitialized and POSTGRES_PASSWORD is not set" >&2
		exit 1
	fi
	echo "entrypoint: initialising $PGDATA"
	pwfile=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
	chown postgres "$pwfile"
	as_postgres initdb -D "$PGDATA" -U "$user" --auth-local=trust --auth-host=scram-sha-256 \
		--pwfile="$pwfile" --encoding=UTF8 --locale=C >/dev/null
	rm -f "$pwfile"
	echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
	echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
	as_postgres pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
	if [ "$db" != postgres ]; then
		as_postgres psql -h /var/run/postgresql -U "$user" -d postgres -v ON_ERROR_STOP=1 \
			-c "CREATE DATABASE \"$db\"" >/dev/null
	fi
	as_postgres pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	echo "entrypoint: ready"
fi

exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" "$@"
