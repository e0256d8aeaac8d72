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
	# The whole tree, as the official image does: a datadir an older
	# build made under another uid becomes the server's.
	find "$datadir" /run/mysqld \! -user mysql -exec chown mysql:mysql '{}' +
	exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

root_password=${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}
database=${MARIADB_DATABASE:-${MYSQL_DATABASE:-}}
# Init scripts read them as the official image's do, whichever was given.
export MARIADB_ROOT_PASSWORD="$root_password" MARIADB_DATABASE="$database"

init_files() { # the init directory's files, as root on the temporary server
	for f in /docker-entrypoint-initdb.d/*; do
		[ -e "$f" ] || continue
		case "$f" in
		*.sh)
			echo "entrypoint: running $f"
			if [ -x "$f" ]; then "$f"; else . "$f"; fi
			;;
		*.sql) echo "entrypoint: running $f"; client ${database:+--database="$database"} <"$f" ;;
		*.sql.gz) echo "entrypoint: running $f"; gzip -dc "$f" | client ${database:+--database="$database"} ;;
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
	# The temporary server on the clients' default socket, as the official
	# image runs it, so an init script's own `mariadb -uroot -p...` reaches it.
	sock=/run/mysqld/mysqld.sock
	export MYSQL_UNIX_PORT="$sock"
	"$@" --skip-networking --socket="$sock" &
	pid=$!
	i=0
	until mariadb --protocol=socket -uroot -e 'SELECT 1' >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 120 ]; then echo "entrypoint: temporary server did not start" >&2; exit 1; fi
		sleep 0.5
	done
	esc=$(printf '%s' "$root_password" | sed "s/\\\\/\\\\\\\\/g; s/'/\\\\'/g")
	# printf, not echo: dash's echo would read a backslash of the password.
	{
		printf '%s\n' "SET sql_log_bin=0;" \
			"DELETE FROM mysql.global_priv WHERE User='';" \
			"ALTER USER 'root'@'localhost' IDENTIFIED BY '$esc';" \
			"CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '$esc';" \
			"GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
		# install-db's passwordless root@127.0.0.1/::1/hostname would shadow
		# root@'%' for clients on the host network: keep localhost and '%' only.
		printf '%s\n' "DELETE FROM mysql.global_priv WHERE User='root' AND Host NOT IN ('localhost', '%');"
		if [ -n "$database" ]; then printf '%s\n' "CREATE DATABASE IF NOT EXISTS \`$database\`;"; fi
		printf '%s\n' "FLUSH PRIVILEGES;"
	} | mariadb --protocol=socket -uroot
	# Root has its password now (the init files run after it, as the
	# official image's): this entrypoint's own client reads it from a file
	# only the server's user can read, never from its command line.
	cnf=$(mktemp /run/mysqld/init-client.XXXXXX)
	printf '[client]\nuser=root\npassword="%s"\n' "$(printf '%s' "$root_password" | sed 's/\\/\\\\/g; s/"/\\"/g')" >"$cnf"
	client() { mariadb --defaults-extra-file="$cnf" --protocol=socket "$@"; }
	init_files
	rm -f "$cnf"
	kill "$pid"
	wait "$pid" || true
	echo "entrypoint: initialised"
fi

exec "$@"
