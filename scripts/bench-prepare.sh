#!/usr/bin/env bash
# Prepare speed: sysbench 1.0.20's and dbduel's prepare of the same tables
# on the same server, alternating (the order flips every pair), each pair
# from empty tables; prints both times, rows/s and the ratio
# dbduel/sysbench of the time (below 1: dbduel is faster), with the paired
# ratios' geometric mean and 95% CI (internal/tools/pairedci). Each tool's CPU is
# shown too, the server's (mariadbd's) and the client's: on a machine whose
# cores are all busy, the time ratio cannot go below dbduel's server CPU
# over sysbench's whole CPU, the floor printed last.
# Usage: scripts/bench-prepare.sh [pairs] [tables] [rows] [threads]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-4}
tables=${2:-4}
rows=${3:-250000}
threads=${4:-4}
workload=oltp_read_write

for p in sysbench mariadb-install-db; do
	command -v "$p" >/dev/null || { echo "bench: $p is missing (apt-get install sysbench mariadb-server)" >&2; exit 1; }
done
bin=$(mktemp -d)/dbduel
go build -o "$bin" .
pairedci=$(dirname "$bin")/pairedci
go build -o "$pairedci" ./internal/tools/pairedci
on_exit='rm -rf "$(dirname "$bin")"'

. scripts/lib/tempserver.sh
start_temp_server bench-prepare --max-connections=1000 --innodb-buffer-pool-size=512M --local-infile=1
conn=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=bench --mysql-password="$bench_pw")
echo "server: MariaDB $(mariadbd --version | awk '{print $3}'), $tables×$rows rows, $threads threads, $pairs pairs"

# run CMD...: prints "wall server_cpu client_cpu" in seconds.
server_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$temp_server_pid/stat"; }
run() {
	local s0 s1 t
	s0=$(server_cpu)
	t=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>&1 )
	s1=$(server_cpu)
	awk -v t="$t" -v a="$s0" -v b="$s1" 'BEGIN { split(t, f, " "); print f[1], b - a, f[2] + f[3] }'
}
clean() { sysbench "$workload" "${conn[@]}" --tables="$tables" cleanup >/dev/null 2>&1; }
sb() { run sysbench "$workload" "${conn[@]}" --tables="$tables" --table-size="$rows" --threads="$threads" prepare; }
dd() { run "$bin" prepare "$workload" --target "b=$url" --tables "$tables" --table-size "$rows" --threads "$threads"; }

printf '%-5s %-7s %8s %8s %7s   %s\n' pair order sb_s dd_s ratio 'cpu s: sb server+client, dd server+client'
cols=$(mktemp)
cpu=$(mktemp)
for i in $(seq 1 "$pairs"); do
	clean
	if [ $((i % 2)) -eq 1 ]; then order=sb,dd; s=($(sb)); clean; d=($(dd)); else order=dd,sb; d=($(dd)); clean; s=($(sb)); fi
	printf '%-5s %-7s %8.2f %8.2f %7.3f   %.2f+%.2f %.2f+%.2f\n' "$i" "$order" "${s[0]}" "${d[0]}" \
		"$(awk -v d="${d[0]}" -v s="${s[0]}" 'BEGIN { print d / s }')" "${s[1]}" "${s[2]}" "${d[1]}" "${d[2]}"
	echo "${s[0]} ${d[0]}" >> "$cols"
	echo "${s[1]} ${s[2]} ${d[1]} ${d[2]}" >> "$cpu"
done
clean
total=$((tables * rows))
awk -v n="$total" '{ s += $1; d += $2 } END { printf "mean: sysbench %.2f s (%.0f rows/s), dbduel %.2f s (%.0f rows/s)\n", s/NR, n/(s/NR), d/NR, n/(d/NR) }' "$cols"
awk '{ ss += $1; sc += $2; ds += $3; dc += $4 } END {
	printf "mean cpu: sysbench server %.2f s + client %.2f s, dbduel server %.2f s + client %.2f s\n", ss/NR, sc/NR, ds/NR, dc/NR
	printf "floor (cores all busy): dbduel server cpu / sysbench cpu = %.3f; with its client, %.3f\n", ds/(ss+sc), (ds+dc)/(ss+sc) }' "$cpu"
rm -f "$cpu"

"$pairedci" -names time < "$cols"
rm -f "$cols"
