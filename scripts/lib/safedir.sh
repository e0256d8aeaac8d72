# Sourced: safe_dir PATH makes PATH (0700) where it is missing and checks
# every directory from / down to it: none a symlink, each owned by root or
# by the user running the script and writable by no one else. A cache or
# state directory another account could change would have this script (as
# root) run its programs or write through its links. Prints why and
# returns 1 when it is not safe.
safe_dir() {
	local d=/ part me owner mode last
	local -a parts
	case $1 in
	/*) ;;
	*)
		echo "$1 is not an absolute path: refusing it" >&2
		return 1
		;;
	esac
	if [[ $1 == *$'\n'* ]]; then
		echo "a path with a newline: refusing it" >&2
		return 1
	fi
	me=$(id -u)
	IFS=/ read -ra parts <<<"${1#/}"
	last=$((${#parts[@]} - 1))
	for i in "${!parts[@]}"; do
		part=${parts[$i]}
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
		owner=$(stat -c '%u' "$d") mode=$(stat -c '0%a' "$d")
		# A /tmp-like directory on the way (sticky, root's) is passed
		# through: what root or the caller made in it cannot be replaced
		# by another account. The directory itself never is: anyone could
		# plant a program in it.
		if [ "$i" != "$last" ] && [ "$owner" = 0 ] && [ $((mode & 01000)) != 0 ]; then continue; fi
		if { [ "$owner" != 0 ] && [ "$owner" != "$me" ]; } || [ $((mode & 022)) != 0 ]; then
			echo "$d is changeable by another account: refusing $1" >&2
			return 1
		fi
	done
}
