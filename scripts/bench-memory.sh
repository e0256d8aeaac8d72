#!/usr/bin/env bash
# Memory stays flat: a long many-thread run's RSS, sampled every 10 s from
# /proc, must not grow after the first minute. The Go heap left live after
# each garbage collection (GODEBUG=gctrace=1) is reported beside it: RSS
# swings with the GC cycle, a leak shows as a live heap that keeps rising.
# The result file (-o, rewritten after every run) is sampled too: its size
# must grow in proportion to the runs, and is given per run and per hour.
# Usage: scripts/bench-memory.sh [seconds] [threads]
# TARGETS=4 runs four targets (all on the one server, each its own name and
# series) in runs of RUN_TIME seconds (default 60), as a long plan does;
# reports at INTERVAL-second intervals (default 1).
# DBDUEL_ARGS adds flags to dbduel's command line, split at spaces (e.g. "--memprofile FILE":
# a heap profile after every run, to compare with pprof -base).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
threads=${2:-64}
ntargets=${TARGETS:-1}
run_time=${RUN_TIME:-60}
interval=${INTERVAL:-1}
bin=$(mktemp -d)/dbduel
go build -o "$bin" .
. scripts/lib/tempserver.sh
on_exit='rm -rf "$(dirname "$bin")"' # run by stop_temp_server
start_temp_server benchmem --max-connections=$((ntargets * (threads + 16) + 100))
targets=()
for i in $(seq 1 "$ntargets"); do targets+=(--target "t$i=$url"); done
if [ "$ntargets" -gt 1 ]; then
	runs=$(( (secs + ntargets * run_time - 1) / (ntargets * run_time) ))
	plan=(--runs "$runs" --time "$run_time")
	secs=$((runs * ntargets * run_time))
else
	plan=(--time "$secs")
fi
res=$dir/result.json
echo "$ntargets target(s), $threads threads, ${plan[*]}, --report-interval $interval, about ${secs}s"
GODEBUG=gctrace=1 "$bin" run oltp_read_only "${targets[@]}" --tables 4 --table-size 10000 \
	--threads "$threads" "${plan[@]}" --report-interval "$interval" --format text -o "$res" ${DBDUEL_ARGS:-} >"$dir/out" 2>"$dir/gc" &
pid=$!
# RSS is split as the kernel counts it: anonymous memory (the Go heap, stacks,
# the runtime's own) and file pages (the binary's code and data as they are
# first run: a later step of the plan, the first result written, maps in
# code the first minute never ran; clean pages the kernel can drop).
echo "t_s rss_kib anon_kib file_kib result_bytes runs"
samples=()
start=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
	sleep 10
	t=$((SECONDS - start)) # the time since the start: a loaded machine stretches the samples
	read -r rss anon file < <(awk '/^VmRSS/ {r=$2} /^RssAnon/ {a=$2} /^RssFile/ {f=$2} END {print r+0, a+0, f+0}' /proc/$pid/status 2>/dev/null || echo 0 0 0)
	size=$(stat -c %s "$res" 2>/dev/null || echo 0)
	nruns=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("runs") or []))' "$res" 2>/dev/null || echo 0)
	echo "$t $rss $anon $file $size $nruns"
	[ "$rss" -gt 0 ] && samples+=("$t $rss $anon $file")
done
if ! wait "$pid"; then
	echo "bench: dbduel failed; its last words:" >&2
	grep -v '^gc \|^# ' "$dir/gc" | tail -5 >&2
	tail -5 "$dir/out" >&2
	exit 1
fi
printf '%s\n' "${samples[@]}" >"$dir/samples"
python3 - "$dir/samples" <<'PY'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
for col, name in ((1, "RSS"), (2, "anonymous RSS"), (3, "file RSS")):
    first = [r[col] for r in rows if r[0] <= 60]
    later = [r[col] for r in rows if r[0] > 60 and r[1] > 0]
    if not first or not later:
        sys.exit("run too short to judge (needs more than 60 s)")
    base = first[-1]
    # The level apart from the GC cycle's peaks: the mean of each fifth.
    k = max(len(later) // 5, 1)
    means = [sum(later[i:i + k]) // len(later[i:i + k]) for i in range(0, len(later), k)][:5]
    print(f"{name} at 60 s: {base} KiB; after: max {max(later)} KiB, last {later[-1]} KiB; "
          f"mean per fifth of the rest: " + ", ".join(f"{m} KiB ({(m - base) / base * 100:+.1f}%)" for m in means))
PY
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
size=$(stat -c %s "$res" 2>/dev/null || echo 0)
nruns=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("runs") or []))' "$res" 2>/dev/null || echo 0)
if [ "$nruns" -gt 0 ]; then
	python3 -c "
size, runs, secs = $size, $nruns, $secs
print(f'result file: {size} bytes for {runs} runs: {size / runs / 1024:.0f} KiB per run of ${run_time}s at ${interval}-s intervals; {size / secs * 3600 / 2**20:.1f} MiB per hour of runs')"
fi
grep -E "run 1:" "$dir/out" || true
