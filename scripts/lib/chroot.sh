# Sourced by the image builds: Debian's mirrors as this machine has them,
# and the upgrade of a debootstrapped chroot from bookworm-updates and
# bookworm-security (so its packages match the host's).
mirror=http://deb.debian.org/debian
security=http://deb.debian.org/debian-security
if [ -r /etc/apt/sources.list.d/debian.sources ]; then
	m=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
	s=$(awk '/^URIs:/ && $2 ~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
	mirror=${m:-$mirror}
	security=${s:-$security}
fi

# upgrade_chroot ROOT: the updates and security pockets, no service started.
upgrade_chroot() {
	local root=$1
	cat > "$root/etc/apt/sources.list" <<SRC
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
SRC
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
	chmod +x "$root/usr/sbin/policy-rc.d"
	chroot "$root" apt-get update -qq
	chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -y -qq -o Dpkg::Options::=--force-confold upgrade >/dev/null
	chroot "$root" apt-get clean
	rm -f "$root/usr/sbin/policy-rc.d"
}
