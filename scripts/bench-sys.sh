#!/usr/bin/env bash
# System micro-benchmarks, dbduel against sysbench 1.0.20 on this host with
# the same options: cpu (events/s), memory (MiB/s) and fileio (read and
# written MiB/s), alternating the two tools (the order flips every pair).
# Prints each pair and the ratio dbduel/sysbench with the paired ratios'
# geometric mean and 95% CI (internal/tools/pairedci): near 1 means dbduel
# measures what sysbench measures.
# Usage: scripts/bench-sys.sh [pairs] [seconds] [threads] [tests: cpu,memory,fileio]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
secs=${2:-5}
threads=${3:-1}
tests=${4:-cpu,memory,fileio}
command -v sysbench >/dev/null || { echo "bench: sysbench is missing (apt-get install sysbench)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=$work/dbduel
go build -o "$bin" .
go build -o "$work/pairedci" ./internal/tools/pairedci
files=$work/files
mkdir "$files"

# figure PATTERN: the number in sysbench's report line matching PATTERN.
sbfig() { sed -n "s|.*$1[^0-9]*\([0-9.]*\).*|\1|p" | head -1; }
ddfig() { python3 -c "import json,sys; s=json.load(sys.stdin)['runs'][0]['summary']; print($1)"; }

bench() { # name sysbench-figure dbduel-expression options...
	local name=$1 pat=$2 expr=$3; shift 3
	local cols=$work/$name.cols s d
	: > "$cols"
	printf '%s (%s)\n%-5s %12s %12s %7s\n' "$name" "$*" pair sysbench dbduel ratio
	for i in $(seq 1 "$pairs"); do
		run_sb() { (cd "$files" && sysbench "$@" --threads="$threads" --time="$secs" run) | sbfig "$pat"; }
		run_dd() { "$bin" run "$@" --threads "$threads" --time "$secs" --target h=host --file-dir "$files" --keep --no-tui -o "$work/r.json" >/dev/null 2>&1; ddfig "$expr" < "$work/r.json"; }
		if [ $((i % 2)) -eq 1 ]; then s=$(run_sb "$@"); d=$(run_dd "$@"); else d=$(run_dd "$@"); s=$(run_sb "$@"); fi
		printf '%-5s %12.2f %12.2f %7.3f\n' "$i" "$s" "$d" "$(awk -v d="$d" -v s="$s" 'BEGIN { print d / s }')"
		echo "$s $d" >> "$cols"
	done
	"$work/pairedci" -names "$name" < "$cols"
	echo
}

case ",$tests," in *,cpu,*)
	bench cpu "events per second" "s['tps']" cpu --cpu-max-prime=10000 ;;
esac
case ",$tests," in *,memory,*)
	bench memory "MiB transferred (" "s['written_mib_per_s']" memory --memory-block-size=8K --memory-total-size=8G ;;
esac
case ",$tests," in *,fileio,*)
	(cd "$files" && sysbench fileio --file-num=16 --file-total-size=256M prepare >/dev/null)
	bench fileio "read, MiB/s:" "s['read_mib_per_s']" fileio --file-num=16 --file-total-size=256M --file-test-mode=rndrw
	(cd "$files" && sysbench fileio --file-num=16 --file-total-size=256M cleanup >/dev/null) ;;
esac
