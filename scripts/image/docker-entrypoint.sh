#!/bin/sh
# Entrypoint of dbduel's test image. It follows the official mariadb/mysql
# images' conventions so dbduel treats both the same way:
#   - arguments starting with '-' are passed to the server (so dbduel's
#     --defaults-file=... arrives as the server's first argument);
#   - MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD set root's password
#     (root@'%' is created so a published port works);
#   - MARIADB_DATABASE / MYSQL_DATABASE create a database;
#   - an empty datadir is initialised on first start, a filled one is reused.
set -eu

if [ $# -eq 0 ] || [ "${1#-}" != "$1" ]; then
	set -- mariadbd "$@"
fi
if [ "$1" != mariadbd ] && [ "$1" != mysqld ]; then
	exec "$@"
fi
shift

# The defaults file must stay the server's first argument; --user follows it.
first=""
if [ $# -gt 0 ] && [ "${1#--defaults-file=}" != "$1" ]; then
	first="$1"
	shift
fi
set -- ${first:+"$first"} --user=mysql "$@"

datadir=$(mariadbd "$@" --verbose --help 2>/dev/null | awk '$1 == "datadir" { print $2; exit }')
datadir=${datadir:-/var/lib/mysql/}
mkdir -p "$datadir" /run/mysqld
chown mysql:mysql "$datadir" /run/mysqld

root_password=${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}
database=${MARIADB_DATABASE:-${MYSQL_DATABASE:-}}

if [ ! -d "$datadir/mysql" ]; then
	if [ -z "$root_password" ] && [ -z "${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-}" ]; then
		echo "entrypoint: database is uninitialized and MARIADB_ROOT_PASSWORD is not set" >&2
		exit 1
	fi
	echo "entrypoint: initialising $datadir"
	mariadb-install-db ${first:+"$first"} --user=mysql --datadir="$datadir" \
		--skip-test-db --auth-root-authentication-method=normal >/dev/null
	sock=/run/mysqld/init.sock
	mariadbd "$@" --skip-networking --socket="$sock" &
	pid=$!
	i=0
	until mariadb --protocol=socket --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 120 ]; then echo "entrypoint: temporary server did not start" >&2; exit 1; fi
		sleep 0.5
	done
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
		if [ -n "$database" ]; then echo "CREATE DATABASE IF NOT EXISTS \`$database\`;"; fi
		echo "FLUSH PRIVILEGES;"
	} | mariadb --protocol=socket --socket="$sock" -uroot
	kill "$pid"
	wait "$pid" || true
	echo "entrypoint: initialised"
fi

exec mariadbd "$@"
