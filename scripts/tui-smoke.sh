#!/usr/bin/env bash
# Drives the real binary's TUI in tmux against real targets (a managed
# mariadbd and the test image's container): checks the live screen, presses
# q, checks the terminal was restored and nothing of the run is left.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(mariadbd --version | sed -E 's/.*Ver ([0-9.]+)-.*/\1/')
image="dbduel-test/mariadb:$version"
bin=$(mktemp -d)/dbduel
go build -o "$bin" .
session="dbduel-smoke-$$"
out=$(mktemp)
cleanup() { tmux kill-session -t "$session" 2>/dev/null || true; rm -f "$out"; rm -rf "$(dirname "$bin")"; }
trap cleanup EXIT

run_id="smoke-$$-$RANDOM"
tmux new-session -d -s "$session" -x 120 -y 40 -e "DBDUEL_RUN_ID=$run_id" \
	"$bin run oltp_read_only --target native=local:mariadbd --target container=docker:$image --time 8 --threads 2 --table-size 2000; echo DBDUEL_EXIT=\$?; sleep 60"
fail() { echo "tui-smoke: $*" >&2; tmux capture-pane -t "$session" -p >&2 || true; exit 1; }
# wait_screen PATTERN [SECONDS]: until the screen shows PATTERN (grep -E), or
# the time is up (the caller checks).
wait_screen() {
	for _ in $(seq 1 $((${2:-30} * 5))); do
		tmux capture-pane -t "$session" -p | grep -Eq "$1" && return 0
		sleep 0.2
	done
	return 1
}

# Wait for the live screen with figures and a chart axis.
ok=""
for _ in $(seq 1 60); do
	tmux capture-pane -t "$session" -p > "$out"
	if grep -q "native" "$out" && grep -q "container" "$out" && grep -q "TPS" "$out" && grep -q "QPS" "$out" \
		&& grep -q "p95" "$out" && grep -Eq '[0-9] ┤' "$out" && grep -q "running" "$out"; then
		ok=1
		break
	fi
	sleep 0.5
done
[ -n "$ok" ] || fail "live screen never showed both targets, TPS/QPS/p95 and a chart axis"
echo "tui-smoke: live screen OK"
cat "$out"

# Wait for the container's run, then stop: q stops, the summary shows, q quits.
wait_screen "container  running" 30 || true
tmux send-keys -t "$session" q
wait_screen "q quit • e export" 30 || true
tmux capture-pane -t "$session" -p | grep -q "q quit • e export" || fail "no summary screen after q"
# The summary needs only the result: the run's container and server are
# already gone while it waits for the second q.
for _ in $(seq 1 40); do
	[ "$(docker ps -aq --filter "label=dbduel.run=$run_id" | wc -l)" = 0 ] && ! pgrep -f "dbduel-local-$run_id" >/dev/null && break
	sleep 0.5
done
[ "$(docker ps -aq --filter "label=dbduel.run=$run_id" | wc -l)" = 0 ] || fail "a container still runs while the summary screen waits"
pgrep -f "dbduel-local-$run_id" >/dev/null && fail "the managed server still runs while the summary screen waits"
echo "tui-smoke: summary screen holds no container and no server"
tmux send-keys -t "$session" q
wait_screen "DBDUEL_EXIT=" 30 || true
tmux capture-pane -t "$session" -p > "$out"
grep -q "DBDUEL_EXIT=130" "$out" || fail "want exit code 130 after stopping early"
grep -q "stopped by the user (q) during run 1 of 1 of target container" "$out" || fail "the stop must say who stopped it and where"
grep -q "target           run" "$out" || fail "summary table not printed to the scrollback after the alternate screen closed"
grep -q "q quit • e export" "$out" && fail "alternate screen not restored"
[ "$(tmux display -p -t "$session" '#{alternate_on}')" = 0 ] || fail "terminal still in the alternate screen"
left=$(docker ps -aq --filter "label=dbduel.run=$run_id" | wc -l)
[ "$left" = 0 ] || fail "$left dbduel containers left"
if pgrep -f "dbduel-local-$run_id" >/dev/null; then fail "managed mariadbd left running"; fi
echo "tui-smoke: stopped with q, exit 130, terminal restored, nothing left"

# A fault while the TUI runs: the container killed mid-run. The finished
# screen names the cause, q leaves, the terminal is restored, exit 1.
tmux kill-session -t "$session"
run_id="smoke-$$-$RANDOM"
tmux new-session -d -s "$session" -x 120 -y 40 -e "DBDUEL_RUN_ID=$run_id" \
	"$bin run oltp_point_select --target c=docker:$image --time 30 --threads 2 --table-size 300; echo DBDUEL_EXIT=\$?; sleep 60"
wait_screen "c  *running" 60 || true
docker kill $(docker ps -q --filter "label=dbduel.run=$run_id") >/dev/null || fail "no container to kill"
wait_screen "why: target c" 20 || true
tmux capture-pane -t "$session" -p | grep -q "why: target c, run 1 of 1: the container exited with code 137" || fail "the finished screen does not name the killed container"
tmux send-keys -t "$session" q
wait_screen "DBDUEL_EXIT=" 20 || true
tmux capture-pane -t "$session" -p | grep -q "DBDUEL_EXIT=1" || fail "want exit code 1 after the container was killed"
[ "$(tmux display -p -t "$session" '#{alternate_on}')" = 0 ] || fail "terminal still in the alternate screen after the fault"
[ "$(docker ps -aq --filter "label=dbduel.run=$run_id" | wc -l)" = 0 ] || fail "containers left after the fault"
echo "tui-smoke: a killed container is named on the finished screen, exit 1, terminal restored, nothing left"
