#!/usr/bin/env bash
# Does dbduel ask the server for the same work as sysbench 1.0.20? Both run
# the same workload on one MariaDB, one after the other, and the server's
# own status counters (SHOW GLOBAL STATUS: statements by kind, handler
# calls, rows read, sent and sorted, bytes in and out, buffer pool reads)
# are compared per statement (per Question) over each client's steady state:
# counters that differ by more than 3% are flagged. Equal handler and row
# counts mean any gap in the server's CPU per query comes from how the
# statements arrive (timing, sleeps), not from what they ask.
# Usage: scripts/bench-server-work.sh [seconds] [rounds]
# THREADS=16 (default), WORKLOAD=oltp_read_only (default); 4 tables of
# ROWS=20000 rows.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-15}
rounds=${2:-1}
threads=${THREADS:-16}
workload=${WORKLOAD:-oltp_read_only}
rows=${ROWS:-20000}
[ "$secs" -ge 10 ] || { echo "bench: seconds must be 10 or more (4 s of start-up and 3 s of stopping are left out)" >&2; exit 1; }
for p in sysbench mariadb-install-db; do
	command -v "$p" >/dev/null || { echo "bench: $p is missing (apt-get install sysbench mariadb-server)" >&2; exit 1; }
done

bin=$(mktemp -d)/dbduel
go build -o "$bin" .
on_exit='rm -rf "$(dirname "$bin")"' # run by stop_temp_server
. scripts/lib/tempserver.sh
start_temp_server srvwork --max-connections=1000 --innodb-buffer-pool-size=512M
conn=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=bench --mysql-password="$bench_pw")
sysbench oltp_read_only "${conn[@]}" --tables=4 --table-size="$rows" --threads=4 prepare >/dev/null
echo "server: MariaDB $(mariadbd --version | awk '{print $3}'), 4×$rows rows, $workload at $threads threads, ${secs}s per run"

# One unmeasured run of each first: the buffer pool warm, and the prepare's
# pages flushed (background writes would show in the first window).
sysbench "$workload" "${conn[@]}" --tables=4 --table-size="$rows" --threads="$threads" --time=5 run >/dev/null
"$bin" run "$workload" --target "b=$url" --tables 4 --table-size "$rows" --threads "$threads" --time 5 >/dev/null 2>&1
snapshot() { mariadb --socket="$sock" -uroot -N -e "SHOW GLOBAL STATUS" >"$1"; }
for round in $(seq 1 "$rounds"); do
	for who in sysbench dbduel; do
		if [ "$who" = sysbench ]; then
			cmd=(sysbench "$workload" "${conn[@]}" --tables=4 --table-size="$rows" --threads="$threads" --time="$secs" --report-interval=0 run)
		else
			cmd=("$bin" run "$workload" --target "b=$url" --tables 4 --table-size "$rows" --threads "$threads" --time "$secs" --report-interval 0 --format sysbench)
		fi
		"${cmd[@]}" >/dev/null 2>&1 &
		client=$!
		sleep 4
		snapshot "$dir/$who.before"
		sleep $((secs - 7))
		snapshot "$dir/$who.after"
		wait "$client"
	done
	echo "== round $round"
	python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
# Gauges and sizes, not work done: left out.
skip = ("Uptime", "Innodb_buffer_pool_pages", "Innodb_buffer_pool_bytes", "Memory_used", "Threads_",
        "Open", "Max_used", "Innodb_page_size", "Innodb_mem", "Innodb_history", "Innodb_checkpoint_age", "Last_query_cost")
def load(f):
    out = {}
    for line in open(f):
        k, _, v = line.rstrip("\n").partition("\t")
        try:
            out[k] = float(v)
        except ValueError:
            pass
    return out
delta = {}
for who in ("sysbench", "dbduel"):
    a, b = load(f"{d}/{who}.before"), load(f"{d}/{who}.after")
    delta[who] = {k: b[k] - a.get(k, 0) for k in b}
q = {who: delta[who]["Questions"] - 1 for who in delta}  # the second reading counts itself
print(f"{'counter per statement':38s} {'sysbench':>11s} {'dbduel':>11s} {'dbduel/sb':>9s}")
for k in sorted(delta["sysbench"]):
    if k.startswith(skip) or k == "Questions":
        continue
    s, x = delta["sysbench"][k] / q["sysbench"], delta["dbduel"].get(k, 0) / q["dbduel"]
    if max(abs(s), abs(x)) < 1e-3:
        continue
    r = x / s if s else float("inf")
    print(f"{k:38s} {s:11.4f} {x:11.4f} {r:9.3f}{'  <- differs' if abs(r - 1) > 0.03 else ''}")
print(f"statements counted: sysbench {q['sysbench']:.0f}, dbduel {q['dbduel']:.0f}")
PY
done
