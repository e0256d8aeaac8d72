#!/usr/bin/env bash
# The TUI's own cost, from side-by-side runs (TUI vs --no-tui, both in a tmux
# pane so the terminal is the same, A B A B):
#  1. at a fixed --rate (same work in both), the extra CPU-seconds per second
#     of run that the TUI costs (goal: <= 0.02), two ways: over the steady
#     state (the process's /proc CPU from 3 s after its start to 2 s before
#     the run's end: what the live screen costs while the load runs) and
#     over the whole process (start-up, the summary screen and exit included);
#  2. closed loop, the throughput ratio TUI / --no-tui with its spread.
# Usage: [PHASES="rate closed"] scripts/bench-tui.sh [pairs] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
secs=${2:-10}
bin=$(mktemp -d)/dbduel
go build -o "$bin" .
. scripts/lib/tempserver.sh
on_exit='tmux kill-session -t benchtui 2>/dev/null || true; rm -rf "$(dirname "$bin")"'
start_temp_server benchtui
"$bin" prepare oltp_read_only --target "n=$url" --tables 2 --table-size 10000 >/dev/null 2>&1

# steady BIN: the CPU-seconds per second the newest "BIN run" process uses
# from 3 s after it starts to 2 s before its run ends (from /proc).
steady() {
	python3 - "$1" "$secs" <<'PY'
import os, sys, time
bin, secs = sys.argv[1], float(sys.argv[2])
def find():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if argv[0].decode() == bin and len(argv) > 1 and argv[1] == b"run":
                return pid
for _ in range(300):
    pid = find()
    if pid:
        break
    time.sleep(0.01)
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"), time.monotonic()
time.sleep(3)
c0, t0 = cpu()
time.sleep(max(secs - 5, 1))
c1, t1 = cpu()
print(f"{(c1 - c0) / (t1 - t0):.4f}")
PY
}

# run MODE EXTRA...: prints "cpu_seconds tps steady_cpu_per_s" of one run
run() {
	local mode=$1; shift
	local out="$dir/out.json"
	local st
	rm -f "$out"
	if [ "$mode" = tui ]; then
		tmux kill-session -t benchtui 2>/dev/null || true
		tmux new-session -d -s benchtui -x 120 -y 40 \
			"/usr/bin/time -o $dir/time -f '%U %S' $bin run oltp_read_only --target n=$url --tables 2 --table-size 10000 --threads 4 --time $secs -o $out $*; sleep 600"
		st=$(steady "$bin")
		for _ in $(seq 1 $((secs * 10 + 300))); do
			tmux capture-pane -t benchtui -p | grep -q "q quit • e export" && break
			sleep 0.1
		done
		tmux capture-pane -t benchtui -p | grep -q "q quit • e export" || { tmux capture-pane -t benchtui -p >&2; exit 1; }
		tmux send-keys -t benchtui q
		for _ in $(seq 1 100); do [ -s "$dir/time" ] && break; sleep 0.1; done
		tmux kill-session -t benchtui 2>/dev/null || true
	else
		# The same terminal (a tmux pane) as the TUI run, so only the UI differs.
		tmux kill-session -t benchtui 2>/dev/null || true
		tmux new-session -d -s benchtui -x 120 -y 40 \
			"/usr/bin/time -o $dir/time -f '%U %S' $bin run oltp_read_only --target n=$url --tables 2 --table-size 10000 --threads 4 --time $secs --no-tui -o $out $*; sleep 600"
		st=$(steady "$bin")
		for _ in $(seq 1 $((secs * 10 + 300))); do [ -s "$dir/time" ] && break; sleep 0.1; done
		tmux kill-session -t benchtui 2>/dev/null || true
	fi
	python3 - "$dir/time" "$out" "$st" <<'PY'
import json, sys
u, s = map(float, open(sys.argv[1]).read().split()[-2:])
r = json.load(open(sys.argv[2]))
print(f"{u + s:.3f} {r['runs'][0]['summary']['tps']:.2f} {sys.argv[3]}")
PY
	rm -f "$dir/time"
}

for phase in ${PHASES:-rate closed}; do
	extra=()
	[ "$phase" = rate ] && extra=(--rate 200)
	echo "== $phase loop${extra[*]:+ (${extra[*]})}: $pairs pairs of ${secs}s runs"
	rows=()
	for i in $(seq 1 "$pairs"); do
		read -r tc tt ts < <(run tui "${extra[@]}")
		read -r nc nt ns < <(run plain "${extra[@]}")
		echo "pair $i: tui cpu ${tc}s (steady ${ts}/s) tps $tt | no-tui cpu ${nc}s (steady ${ns}/s) tps $nt"
		rows+=("$tc $tt $nc $nt $ts $ns")
	done
	printf '%s\n' "${rows[@]}" | python3 -c '
import sys, statistics as st
secs = float(sys.argv[1])
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
extra = [(r[0] - r[2]) / secs for r in rows]
steady = [r[4] - r[5] for r in rows]
ratio = [r[1] / r[3] for r in rows]
print(f"TUI extra CPU, steady state: median {st.median(steady):.4f} CPU-s per s of run (min {min(steady):.4f}, max {max(steady):.4f})")
print(f"TUI extra CPU, whole process: median {st.median(extra):.4f} CPU-s per s of run (min {min(extra):.4f}, max {max(extra):.4f})")
print(f"throughput TUI/no-TUI: median {st.median(ratio):.3f} (min {min(ratio):.3f}, max {max(ratio):.3f})")
' "$secs"
done
