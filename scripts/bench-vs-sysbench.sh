#!/usr/bin/env bash
# dbduel vs sysbench 1.0.20 on the same server, alternating (A B, B A, ...:
# the order flips every pair so a drift in the machine's background load
# favours neither): QPS of each from the server's own Questions counter, the
# ratio dbduel/sysbench, client CPU per query (user+system from /proc) and
# the server's CPU per query, all over each client's steady state; per
# workload the medians and the paired ratios' geometric mean with a 95% CI
# (internal/tools/pairedci: dbduel's own paired comparison), so noise shows as width.
# Usage: scripts/bench-vs-sysbench.sh [pairs] [seconds] [threads]
# THREADS="8 16 64 128" measures a list of thread counts instead: each pair
# runs at every count in turn (the order rotating pair by pair), so every
# count sees the same machine, and each count gets its own summary lines,
# prefixed "threads N:". DBDUEL_BIN=PATH measures that build of dbduel
# instead of the tree's (a change's before and after). BASE_ENV="VAR=value
# ..." makes the peer dbduel itself run with those variables instead of
# sysbench (an A/B of one of dbduel's settings, e.g. BASE_ENV=DBDUEL_NET=go);
# the "sb" columns are then that peer's. BASE_BIN=PATH makes the peer that
# build of dbduel (with BASE_ENV's variables, if any): a change's before and
# after, interleaved pair by pair like any peer.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
secs=${2:-20}
threads_list=${THREADS:-${3:-8}}
tables=${TABLES:-4}
rows=${ROWS:-100000}
psmode=${PSMODE:-auto}
peer=sysbench
[ -z "${BASE_ENV:-}${BASE_BIN:-}" ] || peer="dbduel[$(basename "${BASE_BIN:-tree}")${BASE_ENV:+ $BASE_ENV}]"
workloads=${WORKLOADS:-"oltp_point_select oltp_read_only"}

for p in sysbench mariadb-install-db; do
	command -v "$p" >/dev/null || { echo "bench: $p is missing (apt-get install sysbench mariadb-server)" >&2; exit 1; }
done

bin=$(mktemp -d)/dbduel
if [ -n "${DBDUEL_BIN:-}" ]; then
	cp "$DBDUEL_BIN" "$bin" # another build of dbduel (before/after a change)
else
	go build -o "$bin" .
fi
pairedci=$(dirname "$bin")/pairedci
go build -o "$pairedci" ./internal/tools/pairedci
on_exit='rm -rf "$(dirname "$bin")"' # run by stop_temp_server

# One server for both clients, on a free port with a temp datadir.
. scripts/lib/tempserver.sh
start_temp_server bench --max-connections=1000 --innodb-buffer-pool-size=512M
conn=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=bench --mysql-password="$bench_pw")

sysbench oltp_read_only "${conn[@]}" --tables="$tables" --table-size="$rows" --threads="$tables" prepare >/dev/null
echo "server: MariaDB $(mariadbd --version | awk '{print $3}'), $tables×$rows rows, threads $threads_list, ${secs}s per run, $pairs pairs, --db-ps-mode=$psmode"

# measure CMD...: runs the client and prints "qps client_us_per_query
# server_us_per_query" over its steady state: from 3 s after its start to 2 s
# before its end, the server's Questions counter for QPS (the same counter for
# both clients) and user+system time from /proc for CPU per query. Start-up
# work (dbduel's table check, connecting, preparing statements) is left out
# for both.
measure() {
	python3 - "$dir/sock" "$secs" "$temp_server_pid" "$@" <<'PY'
import os, subprocess, sys, time
sock, secs, server, cmd = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def questions():
    out = subprocess.run(["mariadb", "--socket=" + sock, "-uroot", "-N", "-e", "SHOW GLOBAL STATUS LIKE 'Questions'"],
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[1])
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(3)
q0, c0, s0, t0 = questions(), cpu(p.pid), cpu(server), time.monotonic()
time.sleep(max(secs - 5, 1))
q1, c1, s1, t1 = questions(), cpu(p.pid), cpu(server), time.monotonic()
p.wait()
n = max(q1 - q0 - 1, 1)  # the second reading counts itself
print(f"{n / (t1 - t0):.1f} {(c1 - c0) * 1e6 / n:.2f} {(s1 - s0) * 1e6 / n:.2f}")
PY
}

# sb_run/dd_run WORKLOAD THREADS
dd_args() { echo run "$1" --target "b=$url" --tables "$tables" --table-size "$rows" --threads "$2" --time "$secs" --db-ps-mode "$psmode" --report-interval 0 --format sysbench; }
if [ -n "${BASE_ENV:-}${BASE_BIN:-}" ]; then
	base_bin=$bin
	if [ -n "${BASE_BIN:-}" ]; then
		base_bin=$(dirname "$bin")/dbduel-base
		cp "$BASE_BIN" "$base_bin"
	fi
	read -r -a base_env <<<"${BASE_ENV:-}"
	# shellcheck disable=SC2046 # dd_args' words are plain (no spaces)
	sb_run() { measure env "${base_env[@]}" "$base_bin" $(dd_args "$1" "$2"); }
	echo "peer: $peer (the sb columns)"
else
	sb_run() { measure sysbench "$1" "${conn[@]}" --tables="$tables" --table-size="$rows" --threads="$2" --time="$secs" --db-ps-mode="$psmode" --report-interval=0 run; }
fi
# shellcheck disable=SC2046
dd_run() { measure "$bin" $(dd_args "$1" "$2"); }

read -r -a counts <<<"$threads_list"
for w in $workloads; do
	echo "== $w"
	# One unmeasured run of each warms the buffer pool and the CPU caches, so
	# the first measured run is not the only one on a cold server.
	sb_run "$w" "${counts[0]}" >/dev/null
	dd_run "$w" "${counts[0]}" >/dev/null
	printf "%-5s %7s %5s %12s %12s %7s %12s %12s %12s %12s\n" pair threads order sb_qps dd_qps ratio sb_cli_us/q dd_cli_us/q sb_srv_us/q dd_srv_us/q
	declare -A results=()
	for i in $(seq 1 "$pairs"); do
		n=${#counts[@]}
		for k in $(seq 0 $((n - 1))); do
			j=$(((k + i - 1) % n))
			t=${counts[$j]}
			# The order flips pair by pair for every count (and alternates
			# along a pair): an order tied to a count would bias its ratio.
			if [ $(((i + j) % 2)) -eq 1 ]; then
				order="sb,dd"
				read -r sq sc ss < <(sb_run "$w" "$t")
				read -r dq dc ds < <(dd_run "$w" "$t")
			else
				order="dd,sb"
				read -r dq dc ds < <(dd_run "$w" "$t")
				read -r sq sc ss < <(sb_run "$w" "$t")
			fi
			ratio=$(python3 -c "print(f'{$dq/$sq:.3f}')")
			printf "%-5s %7s %5s %12s %12s %7s %12s %12s %12s %12s\n" "$i" "$t" "$order" "$sq" "$dq" "$ratio" "$sc" "$dc" "$ss" "$ds"
			results[$t]+="$sq $dq $sc $dc $ss $ds"$'\n'
		done
	done
	for t in "${counts[@]}"; do
		printf '%s' "${results[$t]}" | python3 -c '
import sys, statistics as st
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
peer = sys.argv[1]
sq, dq, sc, dc, ss, ds = (st.median(c) for c in zip(*rows))
ratios = [r[1] / r[0] for r in rows]
cpu = [r[3] / r[2] for r in rows]
srv = [r[5] / r[4] for r in rows]
print(f"median QPS {peer} {sq:.0f}, dbduel {dq:.0f}; ratio dbduel/{peer} {st.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")
print(f"median client CPU per query: {peer} {sc:.1f} us, dbduel {dc:.1f} us; ratio {st.median(cpu):.2f}")
print(f"median server CPU per query: under {peer} {ss:.1f} us, under dbduel {ds:.1f} us; ratio {st.median(srv):.2f}")
' "$peer" | sed "s/^/threads $t: /"
		printf '%s' "${results[$t]}" | "$pairedci" -peer "$peer" | sed "s/^/threads $t: /"
	done
	unset results
done
