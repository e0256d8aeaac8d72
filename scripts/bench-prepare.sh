#!/usr/bin/env bash
# Prepare speed: sysbench 1.0.20's and dbduel's prepare of the same tables
# on the same server, alternating (the order flips every pair), each pair
# from empty tables; prints both times, rows/s and the ratio
# dbduel/sysbench of the time (below 1: dbduel is faster), with the paired
# ratios' geometric mean and 95% CI (scripts/pairedci).
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
go build -o "$pairedci" ./scripts/pairedci
on_exit='rm -rf "$(dirname "$bin")"'

. scripts/lib/tempserver.sh
start_temp_server bench-prepare --max-connections=1000 --innodb-buffer-pool-size=512M --local-infile=1
conn=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=bench --mysql-password=bench)
echo "server: MariaDB $(mariadbd --version | awk '{print $3}'), $tables×$rows rows, $threads threads, $pairs pairs"

seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'; }
clean() { sysbench "$workload" "${conn[@]}" --tables="$tables" cleanup >/dev/null 2>&1; }
sb() { seconds sysbench "$workload" "${conn[@]}" --tables="$tables" --table-size="$rows" --threads="$threads" prepare; }
dd() { seconds "$bin" prepare "$workload" --target "b=$url" --tables "$tables" --table-size "$rows" --threads "$threads"; }

printf '%-5s %-7s %10s %10s %7s\n' pair order sb_s dd_s ratio
cols=$(mktemp)
for i in $(seq 1 "$pairs"); do
	clean
	if [ $((i % 2)) -eq 1 ]; then order=sb,dd; s=$(sb); clean; d=$(dd); else order=dd,sb; d=$(dd); clean; s=$(sb); fi
	printf '%-5s %-7s %10.2f %10.2f %7.3f\n' "$i" "$order" "$s" "$d" "$(awk -v d="$d" -v s="$s" 'BEGIN { print d / s }')"
	echo "$s $d" >> "$cols"
done
clean
total=$((tables * rows))
awk -v n="$total" '{ s += $1; d += $2 } END { printf "mean: sysbench %.2f s (%.0f rows/s), dbduel %.2f s (%.0f rows/s)\n", s/NR, n/(s/NR), d/NR, n/(d/NR) }' "$cols"

"$pairedci" -names time < "$cols"
rm -f "$cols"
