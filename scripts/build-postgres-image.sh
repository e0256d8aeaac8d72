#!/usr/bin/env bash
# Builds dbduel-test/postgres:<host version> from Debian's packages, without
# any registry: debootstrap, then the security and updates pockets so the
# version matches the host's postgresql (native and container compare the
# same server). Reuses an existing, current image unless --force.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
force=${1:-}
export DEBIAN_FRONTEND=noninteractive

. "$here/lib/chroot.sh"
. "$here/lib/conventions.sh"

# The stamp covers the entrypoint and the image layout (rev 2: a root
# directory of mode 0755, which rootless Podman needs: mktemp makes it 0700).
# Rev 3: the official image's conventions (postgres is uid/gid 999, an
# init directory).
entry_sha=$({ cat "$here/image/postgres-entrypoint.sh" "$here/lib/conventions.sh"; echo layout-rev-3; } | sha256sum | cut -c1-16)
major=$(dpkg-query -W -f='${Depends}' postgresql 2>/dev/null | grep -o 'postgresql-[0-9]*' | head -1 | cut -d- -f2 || true)
major=${major:-15}
host_version=$(dpkg-query -W -f='${Version}' "postgresql-$major" 2>/dev/null | sed -E 's/^[0-9]+://; s/-.*//' || true)
tag="dbduel-test/postgres:${host_version:-$major}"
if [ "$(docker image inspect --format '{{index .Config.Labels "dbduel.entrypoint"}}' "$tag" 2>/dev/null)" = "$entry_sha" ] && [ "$force" != --force ]; then
	echo "image $tag present; reusing it"
	exit 0
fi

root=$(mktemp -d /var/tmp/dbduel-pgimage.XXXXXX)
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT
echo "debootstrap bookworm with postgresql-$major into $root"
debootstrap --variant=minbase --include="postgresql-$major" bookworm "$root" "$mirror" >/dev/null
upgrade_chroot "$root"
# The package's own cluster is not the container's: PGDATA starts empty.
rm -rf "$root/var/lib/postgresql/$major" "$root/etc/postgresql/$major" "$root/var/lib/apt/lists/"*_Packages
version=$(chroot "$root" dpkg-query -W -f='${Version}' "postgresql-$major" | sed -E 's/^[0-9]+://; s/-.*//')
install -m 0755 "$here/image/postgres-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
official_user "$root" postgres
init_dir "$root"
# Inside the chroot: its var/run is a link to the absolute /run, which
# from here is the host's.
chroot "$root" install -d -o postgres -g postgres -m 3777 /run/postgresql
chroot "$root" install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data
tag="dbduel-test/postgres:$version"
previous=$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
tar -C "$root" -c . | docker import \
	-c 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
	-c 'CMD ["postgres"]' \
	-c 'EXPOSE 5432' \
	-c 'ENV PGDATA=/var/lib/postgresql/data' \
	-c 'VOLUME /var/lib/postgresql/data' \
	-c 'LABEL dbduel.test-image=1' \
	-c "LABEL dbduel.entrypoint=$entry_sha" \
	- "$tag" >/dev/null
echo "built $tag"
if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect --format '{{.Id}}' "$tag")" ]; then
	docker rmi "$previous" >/dev/null 2>&1 || true
fi
if [ -n "$host_version" ] && [ "$version" != "$host_version" ]; then
	echo "warning: image has PostgreSQL $version, host has $host_version" >&2
fi
