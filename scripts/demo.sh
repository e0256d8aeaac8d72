#!/usr/bin/env bash
# Zero-config demo on a fresh machine: installs what is missing (Debian
# packages), then runs `dbduel demo`: a managed native MariaDB against the
# same MariaDB in a container, the official image of its version when a
# registry serves it (Docker Hub, or --registry HOST:PORT), else a local
# build of the very same version (scripts/build-test-image.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

missing=()
for p in mariadb-server mariadb-client debootstrap; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "demo: missing packages ${missing[*]}: run as root, or: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	echo "demo: installing ${missing[*]}" >&2
	apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v go >/dev/null 2>&1; then
	echo "demo: Go is needed to build dbduel (https://go.dev/dl, or apt-get install golang)" >&2
	exit 1
fi
if ! docker version >/dev/null 2>&1; then
	echo "demo: no Docker engine reachable: start it (systemctl start docker) or set DOCKER_HOST" >&2
	exit 1
fi
CGO_ENABLED=0 go build -o ./dbduel . # static: it also runs as the agent in any image
img=$(./dbduel demo --show-image "$@")
case $img in
dbduel-test/*) bash scripts/build-test-image.sh >&2 ;;
esac
exec ./dbduel demo --image "$img" "$@"
