#!/usr/bin/env bash
# dbduel's tpcc vs go-tpc (github.com/pingcap/go-tpc v1.0.7, installed here
# with go install into a cache, not a project dependency) on the same
# server and the same number of warehouses, each client in its own
# database, alternating (the order flips every pair). Prints:
#   - each loader's time for the same warehouses;
#   - per run, over each client's steady state (3 s after its start to 2 s
#     before its end), the server's own figures for both clients alike:
#     NOPM (sum(d_next_o_id) delta per minute in the client's database) and
#     TPM (Com_commit + Com_rollback per minute), the tpmC each client
#     printed, each client's CPU (user+system from /proc) per
#     transaction, the statements it sent a transaction (the server's
#     Questions: statements inside a procedure are not counted) and its CPU
#     per statement sent;
#   - the paired ratios dbduel/go-tpc with a 95% CI (internal/tools/pairedci),
#     for each of dbduel's modes: procedures (one CALL a transaction, as
#     HammerDB) and statements (the profile's statements from the client);
#     each round runs go-tpc and both modes, in an order that rotates.
# MySQL and MariaDB only: go-tpc v1.0.7 has no PostgreSQL driver (its -d
# takes mysql), so PostgreSQL's TPC-C is compared across targets by dbduel
# itself (docs/tpcc.md).
# Usage: scripts/tpcc-vs-go-tpc.sh [pairs] [seconds] [threads] [warehouses]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-3}
secs=${2:-30}
threads=${3:-4}
wh=${4:-1}

command -v mariadb-install-db >/dev/null || { echo "bench: mariadb-install-db is missing (apt-get install mariadb-server)" >&2; exit 1; }
tools=${DBDUEL_TOOLS:-$HOME/.cache/dbduel/tools}
. scripts/lib/safedir.sh
safe_dir "$tools" || exit 1 # root runs what it holds
gotpc=$tools/go-tpc
if [ ! -x "$gotpc" ]; then
	echo "installing go-tpc v1.0.7 into $tools (about a minute)"
	GOBIN=$tools go install github.com/pingcap/go-tpc/cmd/go-tpc@v1.0.7
fi

bin=$(mktemp -d)/dbduel
CGO_ENABLED=0 go build -o "$bin" .
pairedci=$(dirname "$bin")/pairedci
go build -o "$pairedci" ./internal/tools/pairedci
on_exit='rm -rf "$(dirname "$bin")"'

. scripts/lib/tempserver.sh
# The bars' kind of server: a 1 GB buffer pool, LOCAL INFILE allowed.
start_temp_server tpcc --max-connections=1000 --innodb-buffer-pool-size=1G --local-infile=1
mariadb --socket="$sock" -uroot -e "CREATE DATABASE gotpc"
export BENCH_PW=$bench_pw BENCH_PORT=$port # measure's reads as the bench user
gt_conn=(-H 127.0.0.1 -P "$port" -U bench -p "$bench_pw" -D gotpc)

echo "server: MariaDB $(mariadbd --version | awk '{print $3}'), $wh warehouse(s), $threads threads, ${secs}s per run, $pairs pairs"
t0=$(date +%s.%N)
"$bin" prepare tpcc --warehouses "$wh" --threads "$threads" --target "b=$url" 2>/dev/null
t1=$(date +%s.%N)
"$gotpc" tpcc --warehouses "$wh" prepare -T "$threads" "${gt_conn[@]}" >/dev/null 2>&1
t2=$(date +%s.%N)
python3 -c "d=$t1-$t0; g=$t2-$t1; print(f'prepare: dbduel {d:.1f} s, go-tpc {g:.1f} s (with its own consistency checks); dbduel/go-tpc {d/g:.3f}')"

# measure DB CMD...: prints "nopm tpm client_tpmc cpu_ms_per_txn
# stmts_per_txn cpu_us_per_stmt" over the client's steady state; the
# client's printed tpmC is over its whole run.
measure() {
	python3 - "$sock" "$secs" "$@" <<'PY'
import os, re, subprocess, sys, time
sock, secs, db, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
def q(sql):
    return subprocess.run(["mariadb", "--socket=" + sock, "-uroot", "-N", "-e", sql],
                          capture_output=True, text=True, check=True).stdout.split()
def as_bench(sql):
    # The bench user owns these tables (its password shows in ps): root
    # reading them could run a view or function of its making with root's
    # rights, so they are read with the bench user's own.
    env = dict(os.environ, MYSQL_PWD=os.environ["BENCH_PW"])
    return subprocess.run(["mariadb", "-h127.0.0.1", "-P" + os.environ["BENCH_PORT"], "-ubench", "-N", "-e", sql],
                          capture_output=True, text=True, check=True, env=env).stdout.split()
def counters():
    nopm = int(as_bench(f"SELECT SUM(d_next_o_id) FROM {db}.district")[0])
    st = dict(zip(*[iter(q("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback', 'Questions')"))] * 2))
    return nopm, int(st["Com_commit"]) + int(st["Com_rollback"]), int(st["Questions"])
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
out = []
import threading
reader = threading.Thread(target=lambda: out.extend(p.stdout))
reader.start()
time.sleep(3)
(n0, x0, s0), c0, t0 = counters(), cpu(p.pid), time.monotonic()
time.sleep(max(secs - 5, 1))
(n1, x1, s1), c1, t1 = counters(), cpu(p.pid), time.monotonic()
p.wait()
reader.join()
text = "".join(out)
# go-tpc: "tpmC: 12886.5, ..."; dbduel: "client tpmC 12886".
m = re.findall(r"tpmC:? ([0-9.]+)", text)
client = float(m[-1]) if m else float("nan")
mins = (t1 - t0) / 60
# The window's own reads (one SHOW and one SELECT, made between the
# readings) are the few statements not the client's.
txns, stmts = max(x1 - x0, 1), max(s1 - s0 - 2, 1)
print(f"{(n1 - n0) / mins:.1f} {(x1 - x0) / mins:.1f} {client:.1f} {(c1 - c0) * 1e3 / txns:.3f} {stmts / txns:.2f} {(c1 - c0) * 1e6 / stmts:.2f}")
PY
}
gt_run() { measure gotpc "$gotpc" tpcc --warehouses "$wh" run -T "$threads" --time "${secs}s" --interval "${secs}s" "${gt_conn[@]}"; }
dd_run() { measure sbtest "$bin" run tpcc --tpcc-mode "$1" --warehouses "$wh" --threads "$threads" --time "$secs" --report-interval 0 --no-tui --target "b=$url"; }

# One unmeasured run of each warms the buffer pool.
gt_run >/dev/null
dd_run procedures >/dev/null
dd_run statements >/dev/null
printf "%-5s %-10s %10s %10s %10s %10s %11s %11s %10s %10s %9s %9s %10s %10s\n" round mode gt_nopm dd_nopm gt_tpm dd_tpm gt_tpmC_own dd_tpmC_own gt_cpu_ms dd_cpu_ms gt_st/tx dd_st/tx gt_cpu_us/st dd_cpu_us/st
declare -A results
for i in $(seq 1 "$pairs"); do
	declare -A got=()
	# The order rotates: go-tpc first, then each mode first.
	case $((i % 3)) in
	1) order=(gt procedures statements) ;;
	2) order=(procedures statements gt) ;;
	0) order=(statements gt procedures) ;;
	esac
	for who in "${order[@]}"; do
		if [ "$who" = gt ]; then got[gt]=$(gt_run); else got[$who]=$(dd_run "$who"); fi
	done
	read -r gn gx gc gu gs gp <<<"${got[gt]}"
	for mode in procedures statements; do
		read -r dn dx dc du ds dp <<<"${got[$mode]}"
		printf "%-5s %-10s %10s %10s %10s %10s %11s %11s %10s %10s %9s %9s %10s %10s\n" "$i" "$mode" "$gn" "$dn" "$gx" "$dx" "$gc" "$dc" "$gu" "$du" "$gs" "$ds" "$gp" "$dp"
		results[$mode]+="$gn $dn $gx $dx $gu $du $gp $dp"$'\n'
	done
done
for mode in procedures statements; do
	echo "dbduel --tpcc-mode $mode / go-tpc:"
	printf '%s' "${results[$mode]}" | "$pairedci" -peer go-tpc -names "NOPM,TPM,client CPU/txn,client CPU/statement sent"
done
