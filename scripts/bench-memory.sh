#!/usr/bin/env bash
# Memory stays flat: a long many-thread run's RSS, sampled every 10 s from
# /proc, must not grow after the first minute. The Go heap left live after
# each garbage collection (GODEBUG=gctrace=1) is reported beside it: RSS
# swings with the GC cycle, a leak shows as a live heap that keeps rising.
# Usage: scripts/bench-memory.sh [seconds] [threads]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
threads=${2:-64}
bin=$(mktemp -d)/dbduel
go build -o "$bin" .
. scripts/lib/tempserver.sh
on_exit='rm -rf "$(dirname "$bin")"' # run by stop_temp_server
start_temp_server benchmem --max-connections=500
GODEBUG=gctrace=1 "$bin" run oltp_read_only --target "n=$url" --tables 4 --table-size 10000 \
	--threads "$threads" --time "$secs" --format text >"$dir/out" 2>"$dir/gc" &
pid=$!
echo "t_s rss_kib"
samples=()
for t in $(seq 10 10 "$secs"); do
	sleep 10
	rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
	echo "$t $rss"
	samples+=("$t $rss")
done
wait $pid
printf '%s\n' "${samples[@]}" | python3 -c '
import sys
rows = [tuple(map(int, l.split())) for l in sys.stdin if l.strip()]
first = [r for t, r in rows if t <= 60]
later = [r for t, r in rows if t > 60 and r > 0]
if not first or not later:
    sys.exit("run too short to judge (needs more than 60 s)")
print(f"RSS at 60 s: {first[-1]} KiB; after: min {min(later)} KiB, max {max(later)} KiB, last {later[-1]} KiB; growth after the first minute {max(later) - first[-1]:+d} KiB ({(max(later) - first[-1]) / first[-1] * 100:+.1f}%)")
'''
# gctrace lines: "gc N @T s ...: ..., A->B->C MB, ..." where C is the live heap.
python3 - "$dir/gc" <<'PY'
import re, sys
pts = [(float(m.group(1)), int(m.group(2))) for m in
       (re.search(r"@([0-9.]+)s .* \d+->\d+->(\d+) MB", l) for l in open(sys.argv[1])) if m]
first = [c for t, c in pts if t <= 60]
later = [c for t, c in pts if t > 60]
if first and later:
    print(f"live heap after GC: {first[-1]} MB at 60 s; after: min {min(later)} MB, max {max(later)} MB, last {later[-1]} MB ({len(pts)} collections)")
PY
grep -E "run 1:" "$dir/out" || true
