# Sourced by the image builds: what the official mariadb and postgres
# images do that Debian's packages do not, applied to a chroot.

# official_user ROOT NAME: NAME's uid and gid become 999, as the official
# images create their server user first (so a datadir made by one image
# is owned alike by another); files owned by the old ids follow.
official_user() {
	local root=$1 name=$2 uid gid
	uid=$(chroot "$root" id -u "$name")
	gid=$(chroot "$root" id -g "$name")
	if [ "$uid" != 999 ]; then
		chroot "$root" usermod -u 999 "$name"
		find "$root" -xdev -uid "$uid" -exec chown -h 999 {} +
	fi
	if [ "$gid" != 999 ]; then
		chroot "$root" groupmod -g 999 "$name"
		find "$root" -xdev -gid "$gid" -exec chgrp -h 999 {} +
	fi
}

# mariadb_names_only ROOT: MariaDB 11's official images have no mysqld,
# mysql or other mysql* names (only mariadbd, mariadb, ...): Debian's
# compatibility links go.
mariadb_names_only() {
	local root=$1 f
	for f in "$root"/usr/bin/mysql* "$root"/usr/sbin/mysql*; do
		[ -L "$f" ] || continue
		case "$(readlink "$f")" in *mariadb*) rm -f "$f" ;; esac
	done
}

# init_dir ROOT: the directory whose scripts the entrypoint runs on first
# start, as the official images have it.
init_dir() {
	install -d -m 0755 "$1/docker-entrypoint-initdb.d"
}
