#!/usr/bin/env bash
# dbduel vs pgbench on the same PostgreSQL server, alternating (the order
# flips every pair so a drift in the machine's load favours neither): one
# primary-key SELECT per statement on both sides, prepared, autocommit
# (pgbench -S -M prepared: its select-only script; dbduel's
# oltp_point_select with --db-ps-mode auto). Per run, over each client's
# steady state (3 s after its start to 2 s before its end):
#   - statements per second from the server's own counter, the same for
#     both (pg_stat_database.xact_commit of the client's database: every
#     autocommit statement is a transaction);
#   - the client's CPU (user+system from /proc) per statement.
# Then the paired ratios dbduel/pgbench with a 95% CI
# (internal/tools/pairedci), as scripts/bench-vs-sysbench.sh prints them.
# Usage: scripts/bench-vs-pgbench.sh [pairs] [seconds] [threads] [jobs]
# BASE_ENV="VAR=value ..." makes the peer dbduel itself run with those
# variables instead of pgbench (an A/B of one of dbduel's settings, e.g.
# BASE_ENV=DBDUEL_NET=go: Go's own socket calls), measured the same way.
# BASE_BIN=PATH makes the peer that build of dbduel (with BASE_ENV's
# variables, if any): a change's before and after, interleaved pair by pair.
# RATE=N holds both clients to N statements a second in all (pgbench -R,
# dbduel --rate; Poisson arrivals on both), so each client's CPU per
# statement is compared at the same load on the server.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
secs=${2:-15}
threads=${3:-64}
jobs=${4:-2}
rows=${ROWS:-100000}
tables=${TABLES:-4}
peer=pgbench
[ -z "${BASE_ENV:-}${BASE_BIN:-}" ] || peer="dbduel[$(basename "${BASE_BIN:-tree}")${BASE_ENV:+ $BASE_ENV}]"

command -v pgbench >/dev/null || { echo "bench: pgbench is missing (apt-get install postgresql-client)" >&2; exit 1; }

work=$(mktemp -d /tmp/dbduel-pgbench.XXXXXX)
trap 'rm -rf "$work"' EXIT # until the server's own trap takes over
bin=$work/dbduel
go build -o "$bin" .
pairedci=$work/pairedci
go build -o "$pairedci" ./internal/tools/pairedci

# One server, run as postgres, in $work (scripts/lib/temppg.sh says how
# it is kept from local users).
. scripts/lib/temppg.sh
start_temp_pg "$work" $((threads * 2 + 20))
# pgbench's accounts at the size of dbduel's tables in all.
scale=$(((tables * rows + 99999) / 100000))
pgbench -h "$pg" -p "$port" -U bench -i -q -s "$scale" pgb >/dev/null 2>&1
"$bin" prepare oltp_point_select --target "b=$url" --tables "$tables" --table-size "$rows" >/dev/null 2>&1
echo "server: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}'), pgbench scale $scale vs dbduel $tables×$rows rows, $threads clients, pgbench -j $jobs, ${secs}s per run, $pairs pairs; peer: $peer${RATE:+; both held to $RATE statements/s}"

# measure DB CMD...: "statements/s client_us_per_statement" over the steady state.
measure() {
	python3 - "$pg" "$port" "$secs" "$@" <<'PY'
import os, subprocess, sys, time
sock, port, secs, db, cmd = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]
def commits():
    # pg_stat_database is flushed by each backend at most once a second:
    # both clients' counts lag alike, and the window is many seconds long.
    out = subprocess.run(["psql", "-h", sock, "-p", port, "-U", "postgres", "-d", "postgres", "-qAtc",
                          f"SELECT pg_stat_clear_snapshot(); SELECT xact_commit FROM pg_stat_database WHERE datname = '{db}'"],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[-1])
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(3)
q0, c0, t0 = commits(), cpu(p.pid), time.monotonic()
time.sleep(max(secs - 5, 1))
q1, c1, t1 = commits(), cpu(p.pid), time.monotonic()
p.wait()
n = max(q1 - q0, 1)
print(f"{n / (t1 - t0):.1f} {(c1 - c0) * 1e6 / n:.2f}")
PY
}
dd_args=(run oltp_point_select --target "b=$url" --tables "$tables" --table-size "$rows" --threads "$threads" --time "$secs" --report-interval 0 --format sysbench)
pb_rate=()
if [ -n "${RATE:-}" ]; then
	dd_args+=(--rate "$RATE")
	pb_rate=(-R "$RATE")
fi
if [ -n "${BASE_ENV:-}${BASE_BIN:-}" ]; then
	base_bin=$bin
	if [ -n "${BASE_BIN:-}" ]; then
		base_bin=$work/dbduel-base
		cp "$BASE_BIN" "$base_bin"
	fi
	read -r -a base_env <<<"${BASE_ENV:-}"
	pb_run() { measure sbtest env "${base_env[@]}" "$base_bin" "${dd_args[@]}"; }
else
	pb_run() { PGPASSWORD=$bench_pw measure pgb pgbench -h 127.0.0.1 -p "$port" -U bench -S -M prepared -c "$threads" -j "$jobs" -T "$secs" "${pb_rate[@]}" pgb; }
fi
dd_run() { measure sbtest "$bin" "${dd_args[@]}"; }

# One unmeasured run of each warms the server's cache.
pb_run >/dev/null
dd_run >/dev/null
printf "%-5s %6s %12s %12s %7s %14s %14s\n" pair order peer_stmt/s dd_stmt/s ratio peer_cli_us/st dd_cli_us/st
rows_out=""
for i in $(seq 1 "$pairs"); do
	if [ $((i % 2)) -eq 1 ]; then
		order="pb,dd"
		read -r pq pc < <(pb_run)
		read -r dq dc < <(dd_run)
	else
		order="dd,pb"
		read -r dq dc < <(dd_run)
		read -r pq pc < <(pb_run)
	fi
	printf "%-5s %6s %12s %12s %7s %14s %14s\n" "$i" "$order" "$pq" "$dq" "$(python3 -c "print(f'{$dq/$pq:.3f}')")" "$pc" "$dc"
	rows_out+="$pq $dq $pc $dc"$'\n'
done
printf '%s' "$rows_out" | "$pairedci" -names "statements/s,client CPU/statement" -peer "$peer"
