#!/bin/sh
# Entrypoint of dbduel's test image. It follows the official mariadb
# image's conventions (MariaDB 11's), so the tests exercise what an
# official image does:
#   - arguments starting with '-' are passed to the server (so dbduel's
#     --defaults-file=... arrives as the server's first argument);
#   - MariaDB's names only: the server is mariadbd, the client mariadb
#     (the image has no mysqld or mysql, as MariaDB 11's images have none);
#   - started as root, it prepares the datadir and steps down to the
#     mysql user (uid 999, as the official image's) before anything runs;
#     started as another user (USER 999 in a derived image, or
#     `docker run --user`), it runs as that user and changes no owner;
#   - MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD set root's password
#     (root@'%' is created so a published port works), or
#     MARIADB_ALLOW_EMPTY_ROOT_PASSWORD leaves it empty;
#   - MARIADB_DATABASE / MYSQL_DATABASE create a database;
#   - on first start, /docker-entrypoint-initdb.d's *.sh, *.sql and
#     *.sql.gz run in name order (SQL in MARIADB_DATABASE when set);
#   - an empty datadir is initialised on first start, a filled one is reused.
set -eu

if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then
	set -- mariadbd "$@"
fi
if [ "$1" != mariadbd ]; then
	exec "$@"
fi

# The defaults file must stay the server's first argument.
server_args() {
	shift
	first=""
	if [ $# -gt 0 ] && [ "${1#--defaults-file=}" != "$1" ]; then
		first="$1"
	fi
}
server_args "$@"
datadir=$("$@" --verbose --help 2>/dev/null | awk '$1 == "datadir" { print $2; exit }')
datadir=${datadir:-/var/lib/mysql/}

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$datadir" /run/mysqld
	chown mysql:mysql "$datadir" /run/mysqld
	exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

root_password=${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}
database=${MARIADB_DATABASE:-${MYSQL_DATABASE:-}}

init_files() { # SOCKET: the init directory's files, as root over the socket
	for f in /docker-entrypoint-initdb.d/*; do
		[ -e "$f" ] || continue
		case "$f" in
		*.sh) echo "entrypoint: running $f"; . "$f" ;;
		*.sql) echo "entrypoint: running $f"; mariadb --protocol=socket --socket="$1" -uroot ${database:+"$database"} <"$f" ;;
		*.sql.gz) echo "entrypoint: running $f"; gzip -dc "$f" | mariadb --protocol=socket --socket="$1" -uroot ${database:+"$database"} ;;
		*) echo "entrypoint: ignoring $f" ;;
		esac
	done
}

if [ ! -d "$datadir/mysql" ]; then
	if [ -z "$root_password" ] && [ -z "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}" ]; then
		echo "entrypoint: database is uninitialized and MARIADB_ROOT_PASSWORD is not set" >&2
		exit 1
	fi
	echo "entrypoint: initialising $datadir as $(id -un 2>/dev/null || id -u)"
	mariadb-install-db ${first:+"$first"} --datadir="$datadir" \
		--skip-test-db --auth-root-authentication-method=normal >/dev/null
	sock=/run/mysqld/init.sock
	"$@" --skip-networking --socket="$sock" &
	pid=$!
	i=0
	until mariadb --protocol=socket --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 120 ]; then echo "entrypoint: temporary server did not start" >&2; exit 1; fi
		sleep 0.5
	done
	if [ -n "$database" ]; then
		echo "CREATE DATABASE IF NOT EXISTS \`$database\`;" | mariadb --protocol=socket --socket="$sock" -uroot
	fi
	# The init files run while root has no password yet, so none is
	# passed on a command line; the password is set last.
	init_files "$sock"
	esc=$(printf '%s' "$root_password" | sed "s/\\\\/\\\\\\\\/g; s/'/\\\\'/g")
	{
		echo "SET sql_log_bin=0;"
		echo "DELETE FROM mysql.global_priv WHERE User='';"
		echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$esc';"
		echo "CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$esc';"
		echo "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
		# install-db's passwordless root@127.0.0.1/::1/hostname would shadow
		# root@'%' for clients on the host network: keep localhost and '%' only.
		echo "DELETE FROM mysql.global_priv WHERE User='root' AND Host NOT IN ('localhost', '%');"
		echo "FLUSH PRIVILEGES;"
	} | mariadb --protocol=socket --socket="$sock" -uroot
	kill "$pid"
	wait "$pid" || true
	echo "entrypoint: initialised"
fi

exec "$@"
