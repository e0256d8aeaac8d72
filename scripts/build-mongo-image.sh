#!/usr/bin/env bash
# Builds dbduel-test/mongo-compat:<FerretDB version>: dbduel's PostgreSQL
# test image plus internal/tools/mongo-test-server (FerretDB embedded, counting its
# operations as mongod's opcounters), with an entrypoint that follows the
# official mongo image's conventions. No registry: the base is the local
# dbduel-test/postgres image. Reuses a current image unless --force.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
force=${1:-}
. "$here/lib/mongo-test-server-bin.sh"

ferret=$(sed -n 's/^\tgithub.com\/FerretDB\/FerretDB \(v[0-9.]*\).*/\1/p' "$here/../internal/tools/mongo-test-server/go.mod")
tag="dbduel-test/mongo-compat:${ferret#v}"
mongo_test_server_bin
bash "$here/build-postgres-image.sh"
base=$(docker images --format '{{.Repository}}:{{.Tag}}' 'dbduel-test/postgres' | sort -V | tail -1)
[ -n "$base" ] || { echo "no dbduel-test/postgres image to build on" >&2; exit 1; }
# The stamp covers the base's build too: a rebuilt PostgreSQL image (its
# conventions changed) rebuilds this one.
base_stamp=$(docker image inspect --format '{{index .Config.Labels "dbduel.entrypoint"}}' "$base")
stamp=$({ cat "$here/image/mongo-compat-entrypoint.sh" "$mongo_test_server"; echo "$base_stamp"; } | sha256sum | cut -c1-16)
if [ "$(docker image inspect --format '{{index .Config.Labels "dbduel.build"}}' "$tag" 2>/dev/null)" = "$stamp" ] && [ "$force" != --force ]; then
	echo "image $tag present; reusing it"
	exit 0
fi
cid=$(docker create --label dbduel.test-image-build=1 "$base")
trap 'docker rm -f "$cid" >/dev/null 2>&1 || true' EXIT
docker cp "$mongo_test_server" "$cid:/usr/local/bin/mongo-test-server" >/dev/null
docker cp "$here/image/mongo-compat-entrypoint.sh" "$cid:/usr/local/bin/docker-entrypoint.sh" >/dev/null
previous=$(docker image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
# export | import: a fresh image with only these settings (the base's
# VOLUME would otherwise leave an anonymous volume per container).
docker export "$cid" | docker import \
	-c 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
	-c 'CMD ["mongod"]' \
	-c 'EXPOSE 27017' \
	-c 'VOLUME /data/db' \
	-c 'LABEL dbduel.test-image=1' \
	-c "LABEL dbduel.build=$stamp" \
	-c "LABEL dbduel.ferretdb=$ferret" \
	- "$tag" >/dev/null
echo "built $tag (FerretDB $ferret over $base)"
if [ -n "$previous" ] && [ "$previous" != "$(docker image inspect --format '{{.Id}}' "$tag")" ]; then
	docker rmi "$previous" >/dev/null 2>&1 || true
fi
