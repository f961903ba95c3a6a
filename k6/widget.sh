#!/usr/bin/env bash
# widget.sh: what embedded-widget viewers cost, beside waiting visitors, as
# BENCHMARKS.md quotes it. In one run, on a fresh server each (so that one
# soak's freed memory does not hide the next one's), against the local
# Redis server of its own (port 16411, no persistence, stopped at the end:
# the shared Redis of this machine serves other work, whose commands would
# count in INFO commandstats), it holds:
#   1. N widget viewers (/r/{room}/widget/events: no ticket, no cookie), and
#   2. N waiting visitors on the room page's stream (/r/{room}/events),
# and prints server RSS and Go heap per connection (a garbage collection is
# forced through DEBUG_ADDR before each reading, so that the ramp's garbage
# is not counted) and Redis commands per second (sent
# by the server, and Redis-side from INFO commandstats, scripts' inner
# commands included). Loopback only, bounded in time. One server holds at
# most about 19,000 connections (20,000 open files), so N stays at 10,000.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
N=${WIDGET_N:-10000}
HOLD=${WIDGET_HOLD:-30s}
RATE=${WIDGET_RATE:-5}
REDIS_PORT=${WIDGET_REDIS_PORT:-16411}
REDIS="redis://127.0.0.1:$REDIS_PORT/0"
ADDR=127.0.0.1:18410
METRICS_ADDR=127.0.0.1:18411
DEBUG_ADDR=127.0.0.1:18412
ADMIN=widget-admin-token-0123456789abcdef012
build_binaries
failed=()

# redis_calls: every command call the run's Redis server has counted.
redis_calls() {
  redis-cli -p "$REDIS_PORT" INFO commandstats | awk -F'calls=' '/^cmdstat_/ {split($2, a, ","); s += a[1]} END {print s}'
}

run_mode() {
  local mode=$1; shift
  redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
  # All clients come from 16 loopback addresses: the per-IP caps are raised
  # so that the run measures the push, not the caps.
  REDIS_URL="$REDIS" LISTEN_ADDR=$ADDR METRICS_ADDR=$METRICS_ADDR DEBUG_ADDR=$DEBUG_ADDR ADMIN_TOKEN=$ADMIN \
    CHALLENGE_DEFAULT=off SSE_MAX_PER_IP=100000 ENTER_RATE_PER_IP=100000 IDLE_CONNS_PER_IP=100000 WIDGET_MAX_STREAMS=$((N + 100)) bin/waitingroom serve 2>/tmp/waitingroom-widget.log &
  local pid=$!
  wait_for "http://$ADDR/healthz"
  admin_put "http://$ADDR" "$ADMIN" drop "{\"title\":\"drop\",\"rate\":$RATE}"
  # The baseline: the same server and room with nobody connected.
  local c0 c1
  local c0 c1 s0 s1
  s0=$(server_commands); c0=$(redis_calls); sleep 10; c1=$(redis_calls); s1=$(server_commands)
  echo "baseline, nobody connected, over 10 s: Redis commands sent by the server $(( (s1 - s0) / 10 ))/s; Redis-side calls $(( (c1 - c0) / 10 ))/s"
  echo "== $mode: N=$N, hold $HOLD, room rate $RATE/s, $(date -u +%FT%TZ), $(nproc) cores"
  bin/wrload soak -url "http://$ADDR" -metrics-url "$(metrics_url "http://$ADDR" $METRICS_ADDR)" -room drop -n "$N" -ramp "${WIDGET_RAMP:-1000}" \
    -hold "$HOLD" -redis-url "$REDIS" -gc-url "http://$DEBUG_ADDR/debug/pprof/heap?gc=1" "$@" || failed+=("$mode")
  local issued
  issued=$(curl -fsS -H "Authorization: Bearer $ADMIN" "http://$ADDR/api/admin/rooms/drop" | grep -o '"issued":[0-9]*' || true)
  echo "tickets issued by the room: ${issued#*:}"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
# server_commands: the Redis commands the server has sent (its own counter).
server_commands() {
  curl -fsS "$(metrics_url "http://$ADDR" $METRICS_ADDR)" | awk '/^waitingroom_redis_commands_total/ {s += $2} END {printf "%d", s}'
}
trap 'kill $(jobs -p) 2>/dev/null || true; redis-cli -p "$REDIS_PORT" SHUTDOWN NOSAVE >/dev/null 2>&1 || true' EXIT
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --maxclients 1000 >/tmp/widget-redis.log 2>&1 &
for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done
run_mode "widget viewers (/r/drop/widget/events)" -widget
run_mode "room page streams (/r/drop/events, waiting visitors)"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
