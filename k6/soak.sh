#!/usr/bin/env bash
# soak.sh: the push-cost measurements of BRIEF §5, as BENCHMARKS.md quotes
# them. It starts one server on loopback against the local Redis (database
# 13, flushed), then holds N waiting visitors:
#   1. over SSE (the product), and
#   2. by polling the position API as the seed's clients did,
#   3. against r3labs/sse with its defaults (wrload sse-reference), the
#      BRIEF's reference for memory and broadcast latency,
# and prints server RSS per connection, broadcast latency, and Redis
# commands per second (sent by the server, and Redis-side with scripts'
# inner commands). Every load is on loopback and bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${SOAK_N:-15000}
HOLD=${SOAK_HOLD:-30s}
RATE=${SOAK_RATE:-5}
DB=${SOAK_REDIS_DB:-13}
ADDR=127.0.0.1:18400
ADMIN=soak-admin-token
mkdir -p bin
go build -o bin/waitingroom . && go build -o bin/wrload ./k6/cmd/wrload

run_mode() {
  local mode=$1; shift
  redis-cli -n "$DB" FLUSHDB >/dev/null
  REDIS_URL="redis://127.0.0.1:6379/$DB" LISTEN_ADDR=$ADDR ADMIN_TOKEN=$ADMIN \
    SSE_MAX_PER_IP=100000 ENTER_RATE_PER_IP=100000 bin/waitingroom serve 2>/tmp/waitingroom-soak.log &
  local pid=$!
  for _ in $(seq 100); do curl -fs "http://$ADDR/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fs -X PUT -H "Authorization: Bearer $ADMIN" -d "{\"title\":\"soak\",\"rate\":$RATE}" "http://$ADDR/api/admin/rooms/soak" >/dev/null
  echo "== $mode: N=$N, hold $HOLD, room rate $RATE/s, $(date -u +%FT%TZ), $(nproc) cores"
  bin/wrload soak -url "http://$ADDR" -room soak -n "$N" -ramp 3000 -hold "$HOLD" \
    -redis-url "redis://127.0.0.1:6379/$DB" "$@" || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
trap 'kill $(jobs -p) 2>/dev/null || true; redis-cli -n "$DB" FLUSHDB >/dev/null 2>&1 || true' EXIT
run_mode "push (SSE, lean client)"
run_mode "seed polling pattern" -poll
echo "== reference: r3labs/sse defaults, one event per second to every subscriber, N=$N, hold $HOLD"
bin/wrload sse-reference -listen 127.0.0.1:18450 >/dev/null &
ref=$!
sleep 1
bin/wrload soak -url http://127.0.0.1:18450 -room soak -n "$N" -ramp 3000 -hold "$HOLD" || true
kill "$ref"; wait "$ref" 2>/dev/null || true
