#!/usr/bin/env bash
# What each client asks of the kernel per statement, counted rather than
# timed: dbduel against its peer (sysbench 1.0.20 on MariaDB, pgbench
# -S -M prepared -j 2 on PostgreSQL) on one server, at each thread count.
# Per statement, over a window of each client's steady state (perf stat
# from once perf has attached to both, 2 s or more after its start, for the given seconds):
#   - the client's system calls (all, and by kind), context switches and
#     CPU migrations;
#   - the server's system calls and context switches (how often its threads
#     or backends sleep and are woken for the next statement);
#   - the machine's rescheduling interrupts (a wake-up for the other CPU;
#     machine-wide: on a busy machine they include other work's).
# A statement is one reply of the server (one send per statement, on both
# servers); the line's "writes" are the client's socket writes per
# statement (1.00 when each statement is one write, as for both clients)
# and, on MariaDB, "replies/Q" checks the replies against the server's
# Questions counted in the same window. Counts do not swing with the machine's load as CPU times
# do, so two rounds show the structure; CPU is not reported (perf's
# system-call tracepoints slow every call they count).
# Usage: scripts/bench-syscalls.sh mysql|postgres [seconds] [rounds]
# (seconds: the window counted, 8 by default)
# THREADS="8 16 64 128" by default; WORKLOAD=oltp_point_select.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-mysql}
window=${2:-8}
rounds=${3:-2}
threads_list=${THREADS:-"8 16 64 128"}
# Each client runs longer than it is counted (perf attaches to hundreds of
# threads slowly) and is stopped once its window is counted.
run_secs=$((window + 30))
workload=${WORKLOAD:-oltp_point_select}
tables=4
rows=20000

command -v perf >/dev/null || { echo "bench: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
work=$(mktemp -d /tmp/dbduel-syscalls.XXXXXX)
client_pid= perf_pid_client= perf_pid_server=
# stop_counting ends whatever count() left running (an error, Ctrl-C:
# background jobs of a script ignore SIGINT, so they are ended here).
stop_counting() {
	local pid
	for pid in $client_pid $perf_pid_client $perf_pid_server; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in $client_pid $perf_pid_client $perf_pid_server; do wait "$pid" 2>/dev/null || true; done
}
trap 'stop_counting; rm -rf "$work"' EXIT # until a server's own trap takes over
# Ctrl-C ends the script even inside a read of perf's answer (without a
# trap bash would wait that read out); the EXIT trap then cleans up.
trap 'exit 130' INT
trap 'exit 143' TERM
bin=$work/dbduel
go build -o "$bin" .
maxconn=$(( $(tr ' ' '\n' <<<"$threads_list" | sort -n | tail -1) * 2 + 20 ))

case $kind in
mysql)
	command -v sysbench >/dev/null || { echo "bench: sysbench is missing (apt-get install sysbench)" >&2; exit 1; }
	. scripts/lib/tempserver.sh
	on_exit='stop_counting; rm -rf "$work"'
	start_temp_server syscalls --max-connections="$maxconn" --innodb-buffer-pool-size=512M
	server_pid=$temp_server_pid
	conn=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=bench --mysql-password="$bench_pw")
	sysbench oltp_read_only "${conn[@]}" --tables=$tables --table-size=$rows --threads=$tables prepare >/dev/null
	peer=sysbench
	peer_run() { exec sysbench "$workload" "${conn[@]}" --tables=$tables --table-size=$rows --threads="$1" --time="$run_secs" --db-ps-mode=auto --report-interval=0 run; }
	# The server's statements so far (read by root over the socket).
	# (At a real-time priority, as perf: see perf_start.)
	statements() { chrt -f 1 mariadb --socket="$sock" -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'; }
	server_pids() { echo "$server_pid"; }
	;;
postgres)
	command -v pgbench >/dev/null || { echo "bench: pgbench is missing (apt-get install postgresql-client)" >&2; exit 1; }
	. scripts/lib/temppg.sh
	on_exit='stop_counting'
	start_temp_pg "$work" "$maxconn"
	pgbench -h "$pg" -p "$port" -U bench -i -q -s 1 pgb >/dev/null 2>&1
	"$bin" prepare "$workload" --target "b=$url" --tables $tables --table-size $rows >/dev/null 2>&1
	peer=pgbench
	peer_run() { PGPASSWORD=$bench_pw exec pgbench -h 127.0.0.1 -p "$port" -U bench -S -M prepared -c "$1" -j 2 -T "$run_secs" pgb; }
	statements() { echo 0; } # pg_stat_database lags up to a second: the replies alone count here
	# The postmaster and its backends (each connection is a process).
	server_pids() { { echo "$server_pid"; pgrep -P "$server_pid"; } | paste -sd,; }
	;;
*)
	echo "usage: scripts/bench-syscalls.sh mysql|postgres [window seconds] [rounds]" >&2
	exit 2
	;;
esac
# The runners exec their client: count() measures the pid it starts.
dd_run() { exec "$bin" run "$workload" --target "b=$url" --tables $tables --table-size $rows --threads "$1" --time "$run_secs" --report-interval 0 --format sysbench; }

# The machine's rescheduling interrupts so far (a wake-up sent to the other
# CPU; in a VM each is an exit to the host), machine-wide.
ipis() { awk '$1 == "RES:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts; }

calls="read write recvfrom sendto poll ppoll select pselect6 epoll_wait epoll_pwait futex nanosleep sched_yield"
events=raw_syscalls:sys_enter,context-switches,cpu-migrations
for c in $calls; do events+=",syscalls:sys_enter_$c"; done

# perf_start NAME PIDS: a perf stat of PIDS with its events off, on fifos
# of its own (opened read-write: an open never waits on a perf that died),
# so that client and server are counted over one window. perf reads its
# fifo only once it has attached to every thread (hundreds of sysbench
# threads take a while): perf_ready waits for that before either is
# switched on, then lifts perf to a real-time priority, as the counter
# reads are: among hundreds of busy client threads it would otherwise see
# its commands late and count past the window.
perf_start() {
	mkfifo -m 600 "$work/$1.ctl" "$work/$1.ack"
	perf stat -x, -o "$work/$1" -e "$events" -D -1 --control "fifo:$work/$1.ctl,$work/$1.ack" -p "$2" 2>"$work/$1.log" &
	eval "perf_pid_$1=\$!"
	exec {ctl}<>"$work/$1.ctl" {ack}<>"$work/$1.ack"
	eval "perf_ctl_$1=\$ctl perf_ack_$1=\$ack"
}
perf_ready() { # NAME: a no-op command answered means perf is attached
	local pid
	perf_send "$1" disable
	eval "pid=\$perf_pid_$1"
	chrt -f -p 1 "$pid" >/dev/null
}
perf_send() { # NAME enable|disable
	local ctl ack reply
	eval "ctl=\$perf_ctl_$1 ack=\$perf_ack_$1"
	echo "$2" >&"$ctl"
	read -r -t 120 -u "$ack" reply || { echo "bench: perf did not $2 its counters: $(cat "$work/$1.log")" >&2; exit 1; }
}
perf_stop() { # NAME: ends the perf, which writes its counts
	local pid ctl ack
	eval "pid=\$perf_pid_$1 ctl=\$perf_ctl_$1 ack=\$perf_ack_$1"
	exec {ctl}>&- {ack}<&-
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" || true
	eval "perf_pid_$1="
	rm -f "$work/$1.ctl" "$work/$1.ack"
}

# count NAME THREADS CMD...: one client's line.
count() {
	local name=$1 t=$2; shift 2
	"$@" >/dev/null 2>&1 &
	local p=$!
	client_pid=$p
	sleep 2
	perf_start client "$p"
	perf_start server "$(server_pids)"
	perf_ready client
	perf_ready server
	perf_send client enable
	perf_send server enable
	local q0 i0 q1 i1
	q0=$(statements) && i0=$(ipis) || { echo "bench: reading the counters failed ($name, $t threads)" >&2; exit 1; }
	sleep "$window"
	q1=$(statements) && i1=$(ipis) || { echo "bench: reading the counters failed ($name, $t threads)" >&2; exit 1; }
	kill -0 "$p" 2>/dev/null || { echo "bench: $name ended before its window did" >&2; exit 1; }
	perf_send client disable
	perf_send server disable
	perf_stop client
	perf_stop server
	kill -TERM "$p"
	wait "$p" || true
	client_pid=
	python3 - "$name" "$t" "$work/client" "$work/server" $((q1 - q0)) $((i1 - i0)) <<'PY'
import sys
name, t, cf, sf, q, res = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
def read(path):
    out = {}
    for line in open(path):
        f = line.strip().split(",")
        if len(f) < 3 or not f[0].replace(".", "").isdigit():
            continue
        ev = f[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "syscalls")
        out[ev] = float(f[0])
    return out
c, s = read(cf), read(sf)
n = s.get("sendto", 0)  # the server's replies: one send per statement
if n == 0:
    sys.exit(f"bench: the server sent no replies while {name} ran at {t} threads")
writes = c.get("write", 0) + c.get("sendto", 0)
kinds = " ".join(f"{k} {v / n:.2f}" for k, v in c.items()
                 if k not in ("syscalls", "context-switches", "cpu-migrations") and v / n >= 0.005)
check = f", replies/Q {n / q:.2f}" if q > 0 else ""
print(f"threads {t:>3} {name:8}: {n:.0f} statements, writes {writes / n:.2f}{check} | client syscalls {c['syscalls'] / n:.2f} ({kinds}), "
      f"switches {c['context-switches'] / n:.2f}, migrations {c['cpu-migrations'] / n:.3f} | "
      f"server syscalls {s['syscalls'] / n:.2f}, switches {s['context-switches'] / n:.2f}, "
      f"poll {s.get('poll', 0) / n:.2f}, epoll_wait {s.get('epoll_wait', 0) / n:.2f}, futex {s.get('futex', 0) / n:.2f} | "
      f"machine's resched IPIs {res / n:.3f}")
PY
}

echo "server: $kind, $tables×$rows rows, $workload, threads $threads_list, each counted for ${window}s in its steady state, $rounds rounds (per statement)"
(run_secs=10; peer_run 8) >/dev/null 2>&1 || true # warms the server's cache
for r in $(seq 1 "$rounds"); do
	for t in $threads_list; do
		if [ $((r % 2)) -eq 1 ]; then
			count "$peer" "$t" peer_run "$t"
			count dbduel "$t" dd_run "$t"
		else
			count dbduel "$t" dd_run "$t"
			count "$peer" "$t" peer_run "$t"
		fi
	done
done
