#!/bin/sh
# Entrypoint of dbduel's PostgreSQL test image. It follows the official
# postgres image's conventions, so the tests exercise what it does:
#   - arguments starting with '-' go to postgres ("postgres -c ..." too);
#   - started as root, it prepares PGDATA and steps down to the postgres
#     user (uid 999, as the official image's); started as another user
#     (USER 999 in a derived image, or `docker run --user`), it runs as
#     that user and changes no owner;
#   - POSTGRES_PASSWORD sets the password of POSTGRES_USER (default
#     postgres), POSTGRES_DB (default: the user's name) is created,
#     POSTGRES_INITDB_ARGS are added to initdb's arguments;
#   - PGDATA (default /var/lib/postgresql/data) is initialised when empty
#     and reused when filled; remote clients authenticate with scram-sha-256;
#   - on first start, /docker-entrypoint-initdb.d's *.sh, *.sql and
#     *.sql.gz run in name order, in POSTGRES_DB as POSTGRES_USER.
set -eu

if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then
	set -- postgres "$@"
fi
if [ "$1" != postgres ]; then
	exec "$@"
fi

bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
export PATH="$bindir:$PATH"
PGDATA=${PGDATA:-/var/lib/postgresql/data}
export PGDATA

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	# The whole tree, as the official image does: a PGDATA an older build
	# made under another uid becomes the server's.
	find "$PGDATA" /var/run/postgresql \! -user postgres -exec chown postgres:postgres '{}' +
	chmod 700 "$PGDATA"
	exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
shift

user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
# Init scripts read them as the official image's do (psql --username
# "$POSTGRES_USER" --dbname "$POSTGRES_DB"), given or not.
export POSTGRES_USER="$user" POSTGRES_DB="$db"

init_files() {
	for f in /docker-entrypoint-initdb.d/*; do
		[ -e "$f" ] || continue
		case "$f" in
		*.sh)
			echo "entrypoint: running $f"
			if [ -x "$f" ]; then "$f"; else . "$f"; fi
			;;
		*.sql) echo "entrypoint: running $f"; psql -h /var/run/postgresql -U "$user" -d "$db" -v ON_ERROR_STOP=1 -q -f "$f" ;;
		*.sql.gz) echo "entrypoint: running $f"; gzip -dc "$f" | psql -h /var/run/postgresql -U "$user" -d "$db" -v ON_ERROR_STOP=1 -q ;;
		*) echo "entrypoint: ignoring $f" ;;
		esac
	done
}

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ]; then
		echo "entrypoint: database is uninitialized and POSTGRES_PASSWORD is not set" >&2
		exit 1
	fi
	echo "entrypoint: initialising $PGDATA as $(id -un 2>/dev/null || id -u)"
	pwfile=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
	# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a word list, as the official image reads it
	initdb -D "$PGDATA" -U "$user" --auth-local=trust --auth-host=scram-sha-256 \
		--pwfile="$pwfile" --encoding=UTF8 --locale=C ${POSTGRES_INITDB_ARGS:-} >/dev/null
	rm -f "$pwfile"
	echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
	echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
	pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
	if [ "$db" != postgres ]; then
		psql -h /var/run/postgresql -U "$user" -d postgres -v ON_ERROR_STOP=1 \
			-c "CREATE DATABASE \"$db\"" >/dev/null
	fi
	init_files
	pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	echo "entrypoint: ready"
fi

exec postgres -D "$PGDATA" "$@"
