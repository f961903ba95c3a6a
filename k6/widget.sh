#!/usr/bin/env bash
# widget.sh: what embedded-widget viewers cost, beside waiting visitors, as
# BENCHMARKS.md quotes it. In one run, on a fresh server each (so that one
# soak's freed memory does not hide the next one's), against the local
# Redis (database 11, flushed), it holds:
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
DB=${WIDGET_REDIS_DB:-11}
ADDR=127.0.0.1:18410
METRICS_ADDR=127.0.0.1:18411
DEBUG_ADDR=127.0.0.1:18412
ADMIN=widget-admin-token-0123456789abcdef012
build_binaries
failed=()

# redis_calls: every command call the Redis server has counted (all
# databases, all clients: other work on this Redis counts too).
redis_calls() {
  redis-cli INFO commandstats | awk -F'calls=' '/^cmdstat_/ {split($2, a, ","); s += a[1]} END {print s}'
}

run_mode() {
  local mode=$1; shift
  redis-cli -n "$DB" FLUSHDB >/dev/null
  # All clients come from 16 loopback addresses: the per-IP caps are raised
  # so that the run measures the push, not the caps.
  REDIS_URL="redis://127.0.0.1:6379/$DB" LISTEN_ADDR=$ADDR METRICS_ADDR=$METRICS_ADDR DEBUG_ADDR=$DEBUG_ADDR ADMIN_TOKEN=$ADMIN \
    SSE_MAX_PER_IP=100000 ENTER_RATE_PER_IP=100000 IDLE_CONNS_PER_IP=100000 bin/waitingroom serve 2>/tmp/waitingroom-widget.log &
  local pid=$!
  wait_for "http://$ADDR/healthz"
  admin_put "http://$ADDR" "$ADMIN" drop "{\"title\":\"drop\",\"rate\":$RATE}"
  # The baseline: the same server and room with nobody connected.
  local c0 c1
  c0=$(redis_calls); sleep 10; c1=$(redis_calls)
  echo "Redis-side calls with nobody connected (the baseline): $(( (c1 - c0) / 10 ))/s over 10 s"
  echo "== $mode: N=$N, hold $HOLD, room rate $RATE/s, $(date -u +%FT%TZ), $(nproc) cores"
  bin/wrload soak -url "http://$ADDR" -metrics-url "$(metrics_url "http://$ADDR" $METRICS_ADDR)" -room drop -n "$N" -ramp 3000 \
    -hold "$HOLD" -redis-url "redis://127.0.0.1:6379/$DB" -gc-url "http://$DEBUG_ADDR/debug/pprof/heap?gc=1" "$@" || failed+=("$mode")
  local issued
  issued=$(curl -fsS -H "Authorization: Bearer $ADMIN" "http://$ADDR/api/admin/rooms/drop" | grep -o '"issued":[0-9]*' || true)
  echo "tickets issued by the room: ${issued#*:}"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
trap 'kill $(jobs -p) 2>/dev/null || true; redis-cli -n "$DB" FLUSHDB >/dev/null 2>&1 || true' EXIT
run_mode "widget viewers (/r/drop/widget/events)" -widget
run_mode "room page streams (/r/drop/events, waiting visitors)"
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
