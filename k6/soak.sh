#!/usr/bin/env bash
# soak.sh: the push-cost measurements, as BENCHMARKS.md quotes
# them. It starts one server on loopback against the local Redis (database
# 13, flushed), then holds N waiting visitors:
#   1. over SSE (the product), and
#   2. by polling the position API as the seed's clients did,
#   3. against r3labs/sse with its defaults (wrload sse-reference), the
#      reference for memory and broadcast latency,
# and prints server RSS per connection, broadcast latency (overall, and
# by priority class: ready, front, back, all), Redis commands per second
# (sent by the server, and Redis-side with scripts' inner commands), SSE
# writes per tick, and server CPU per waiting visitor. Every load is on
# loopback and bounded in time. A soak in which more than 1% of the
# visitors never connect (or, polling, of the polls fail) is reported as
# FAILED, and the script exits 1 after the other runs. For many server
# processes (100,000 streams), see soak-many.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
N=${SOAK_N:-15000}
HOLD=${SOAK_HOLD:-30s}
RATE=${SOAK_RATE:-5}
DB=${SOAK_REDIS_DB:-13}
ADDR=127.0.0.1:18400
METRICS_ADDR=127.0.0.1:18401
DEBUG_ADDR=127.0.0.1:18402
ADMIN=soak-admin-token-0123456789abcdef0123
need_files $((N + 1000))
build_binaries
failed=()

run_mode() {
  local mode=$1; shift
  redis-cli -n "$DB" FLUSHDB >/dev/null
  soak_serve $ADDR $METRICS_ADDR $DEBUG_ADDR "redis://127.0.0.1:6379/$DB" $ADMIN $((N + 500)) /tmp/waitingroom-soak.log
  local pid=$!
  wait_for "http://$ADDR/healthz"
  admin_put "http://$ADDR" "$ADMIN" soak "$(soak_room "$RATE" "$SPREAD")"
  echo "== $mode: N=$N, hold $HOLD, room rate $RATE/s, readySpreadMs ${SPREAD:-default}, $(date -u +%FT%TZ), $(nproc) cores"
  bin/wrload soak -url "http://$ADDR" -metrics-url "$(metrics_url "http://$ADDR" $METRICS_ADDR)" -room soak -n "$N" -ramp 3000 \
    -hold "$HOLD" -redis-url "redis://127.0.0.1:6379/$DB" -gc-url "$(gc_url $DEBUG_ADDR)" "$@" || failed+=("$mode")
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
trap 'kill $(jobs -p) 2>/dev/null || true; redis-cli -n "$DB" FLUSHDB >/dev/null 2>&1 || true' EXIT
SPREAD=${SOAK_READY_SPREAD_MS:-}
# SOAK_BASELINE names another server binary (an older build, for a
# before/after in one run): it is soaked first, the same way.
if [ -n "${SOAK_BASELINE:-}" ]; then
  WR_BIN=$SOAK_BASELINE run_mode "baseline: $SOAK_BASELINE"
fi
run_mode "push (SSE, lean client)"
# The turn's own delay without the ready spread.
SPREAD=0 run_mode "push, readySpreadMs 0"
run_mode "seed polling pattern" -poll
echo "== reference: r3labs/sse defaults, one event per second to every subscriber, N=$N, hold $HOLD"
bin/wrload sse-reference -listen 127.0.0.1:18450 >/dev/null &
ref=$!
wait_for http://127.0.0.1:18450/metrics
# Its events carry no priority class: everything is "all" (-classes=false).
bin/wrload soak -url http://127.0.0.1:18450 -metrics-url http://127.0.0.1:18450/metrics -room soak -n "$N" -ramp 3000 -hold "$HOLD" \
  -classes=false || failed+=("r3labs/sse reference")
kill "$ref"; wait "$ref" 2>/dev/null || true
if [ ${#failed[@]} -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
