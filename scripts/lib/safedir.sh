# Sourced: safe_dir PATH makes PATH (0700) where it is missing and checks
# every directory from / down to it: none a symlink, each owned by root or
# by the user running the script and writable by no one else. A cache or
# state directory another account could change would have this script (as
# root) run its programs or write through its links. Prints why and
# returns 1 when it is not safe.
safe_dir() {
	local d=/ part me
	me=$(id -u)
	IFS=/ read -ra parts <<<"${1#/}"
	for part in "${parts[@]}"; do
		[ -n "$part" ] || continue
		d=${d%/}/$part
		if [ ! -e "$d" ] && [ ! -L "$d" ]; then
			mkdir -m 0700 "$d" || return 1
			continue
		fi
		if [ -L "$d" ]; then
			echo "$d is a symlink: refusing $1" >&2
			return 1
		fi
		local owner mode
		owner=$(stat -c '%u' "$d") mode=$(stat -c '0%a' "$d")
		# /tmp-like directories (sticky, world-writable, root's) are passed
		# through: nothing in them can be replaced by another account.
		if [ "$owner" = 0 ] && [ $((mode & 01000)) != 0 ]; then continue; fi
		if { [ "$owner" != 0 ] && [ "$owner" != "$me" ]; } || [ $((mode & 022)) != 0 ]; then
			echo "$d is changeable by another account: refusing $1" >&2
			return 1
		fi
	done
}
