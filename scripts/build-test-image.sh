#!/usr/bin/env bash
# Builds dbduel's test images from Debian's packages, without any registry:
#   dbduel-test/mariadb:<host version>   upgraded from bookworm-updates/-security
#   dbduel-test/mariadb:<older version>  what plain bookworm ships (version-mismatch tests)
#   dbduel-test/postgres:<host version>  PostgreSQL, upgraded likewise to match the host
#   dbduel-test/mongo-compat:<FerretDB version>  the MongoDB-protocol test server over that PostgreSQL
# With no arguments it builds whichever image is missing; --force rebuilds all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
force=${1:-}

export DEBIAN_FRONTEND=noninteractive
need() { command -v "$1" >/dev/null 2>&1; }
if ! need debootstrap; then
	apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
fi

. "$here/lib/chroot.sh"
. "$here/lib/conventions.sh"

# network_as_official ROOT: Debian's server config binds MariaDB to
# 127.0.0.1; the official image comments that out, so a published port or
# a pod IP reaches the server, and turns off client host name lookups (a
# pod's resolver may not answer: every handshake would wait on it).
# dbduel's own targets pass --defaults-file, which these files don't touch.
network_as_official() {
	sed -Ei 's/^(bind-address)/#&/' "$1/etc/mysql/mariadb.conf.d/50-server.cnf"
	printf '[mariadb]\nhost-cache-size=0\nskip-name-resolve\n' >"$1/etc/mysql/conf.d/docker.cnf"
}

have_image() { docker image inspect "$1" >/dev/null 2>&1; }
# Images record the entrypoint they were built with; a changed entrypoint rebuilds them.
# The stamp covers the entrypoint and the image layout (rev 2: a root
# directory of mode 0755, which rootless Podman needs: mktemp makes it 0700).
# Rev 3: the official image's conventions (mysql is uid/gid 999, MariaDB's
# names only, an init directory). Rev 4: the server listens on every
# address, as the official image's does (a pod IP reached it not).
entry_sha=$({ cat "$here/image/docker-entrypoint.sh" "$here/lib/conventions.sh"; declare -f network_as_official; echo layout-rev-4; } | sha256sum | cut -c1-16)
current() { [ "$(docker image inspect --format '{{index .Config.Labels "dbduel.entrypoint"}}' "$1" 2>/dev/null)" = "$entry_sha" ]; }

# The host's version decides the main tag, so native and container match.
host_version=$(dpkg-query -W -f='${Version}' mariadb-server 2>/dev/null | sed -E 's/^[0-9]+://; s/-.*//' || true)
if [ -n "$host_version" ] && current "dbduel-test/mariadb:$host_version" && [ "$force" != --force ]; then
	echo "image dbduel-test/mariadb:$host_version present; reusing it"
	bash "$here/build-postgres-image.sh" "$force"
	exec bash "$here/build-mongo-image.sh" "$force"
fi

root=$(mktemp -d /var/tmp/dbduel-image.XXXXXX)
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT
echo "debootstrap bookworm into $root (mirror $mirror)"
debootstrap --variant=minbase --include=mariadb-server,mariadb-client bookworm "$root" "$mirror" >/dev/null

import() { # import TAG: snapshot of the chroot, datadir emptied; replaces an older build of TAG
	local previous
	previous=$(docker image inspect --format '{{.Id}}' "$1" 2>/dev/null || true)
	rm -rf "$root/var/lib/mysql/"* "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*_Packages
	# After every package change: an upgrade brings the mysql names back.
	official_user "$root" mysql
	mariadb_names_only "$root"
	init_dir "$root"
	network_as_official "$root"
	chroot "$root" install -d -o mysql -g mysql -m 0755 /run/mysqld # in the chroot: never through a link to the host
	install -m 0755 "$here/image/docker-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
	tar -C "$root" -c . | docker import \
		-c 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
		-c 'CMD ["mariadbd"]' \
		-c 'EXPOSE 3306' \
		-c 'VOLUME /var/lib/mysql' \
		-c 'LABEL dbduel.test-image=1' \
		-c "LABEL dbduel.entrypoint=$entry_sha" \
		- "$1" >/dev/null
	echo "built $1"
	if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect --format '{{.Id}}' "$1")" ]; then
		docker rmi "$previous" >/dev/null 2>&1 || true
	fi
}
version_in_root() { chroot "$root" dpkg-query -W -f='${Version}' mariadb-server | sed -E 's/^[0-9]+://; s/-.*//'; }

old=$(version_in_root)
import "dbduel-test/mariadb:$old"

upgrade_chroot "$root"
new=$(version_in_root)
import "dbduel-test/mariadb:$new"
if [ -n "$host_version" ] && [ "$new" != "$host_version" ]; then
	echo "warning: image has MariaDB $new, host has $host_version" >&2
fi
bash "$here/build-postgres-image.sh" "$force"
exec bash "$here/build-mongo-image.sh" "$force"
