#!/usr/bin/env bash
# sale.sh: the order-path measurements, as BENCHMARKS.md quotes
# them. Against the local Redis (database 12, or SALE_REDIS_DB) and
# PostgreSQL (schema wrbench of database test, recreated), with a downstream
# whose knee is the seed's 50 TPS (ORDER_WORK=800ms on a 40-connection pool):
#   1. calibrate: 20→80 orders/s by 10, 30 s each; applies the rate to "sale";
#   2. a 20,000-buyer burst (enters within 30 s) on two instances (one holds
#      at most ~19,000 streams under the 20,000-file cap) with the room, then
#      the same crowd in passthrough (no room), and the plot of both;
#   3. admitted/s with 3 instances on one Redis at rate 50.
# Every load is on loopback and bounded in time. Outputs land in
# ${OUT:-artifacts/sale}. A burst in which more than 1% of the buyers do not
# get a 201 fails the script (wrload burst exits 1 and says so); so does a
# calibration whose buyers cannot all enter.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
OUT=${OUT:-artifacts/sale}
N=${SALE_N:-20000}
RDB=${SALE_REDIS_DB:-12}
mkdir -p "$OUT"
build_binaries
DB="postgres://postgres@127.0.0.1:5432/test?sslmode=disable&search_path=wrbench"
ADMIN=sale-admin-token-0123456789abcdef0123
psql -h 127.0.0.1 -U postgres -d test -qc "DROP SCHEMA IF EXISTS wrbench CASCADE" 2>/dev/null
psql -h 127.0.0.1 -U postgres -d test -qc "CREATE SCHEMA wrbench"
redis-cli -n "$RDB" FLUSHDB >/dev/null
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true' EXIT

start() { # start PORT [extra env...]; its metrics listen on PORT+100
  local port=$1; shift
  # The crowd comes from a few loopback addresses: the per-IP caps are
  # raised so that the sale measures the order path, not the caps.
  env REDIS_URL=redis://127.0.0.1:6379/$RDB DATABASE_URL="$DB" DB_MAX_CONNS=40 ORDER_WORK=${ORDER_WORK:-800ms} \
    LISTEN_ADDR=127.0.0.1:$port METRICS_ADDR=127.0.0.1:$((port + 100)) ADMIN_TOKEN=$ADMIN SECRET_KEY=sale-secret-key-0123456789 \
    CHALLENGE_DEFAULT=off SSE_MAX_PER_IP=100000 ENTER_RATE_PER_IP=100000 IDLE_CONNS_PER_IP=100000 "$@" bin/waitingroom serve 2>>"$OUT/server-$port.log" &
  pids+=($!)
  wait_for "http://127.0.0.1:$port/healthz"
}

# metrics PORT...: the -metrics-url list of the instances on these ports.
metrics() {
  local list=()
  for p in "$@"; do list+=("$(metrics_url "http://127.0.0.1:$p" "127.0.0.1:$((p + 100))")"); done
  (IFS=,; echo "${list[*]}")
}

echo "== $(date -u +%FT%TZ), $(nproc) cores, downstream knee: 40 connections x ${ORDER_WORK:-800ms} per order"
start 18600
sleep 2 # migrations
RATE=${SALE_RATE:-}
if [ -z "${SKIP_CALIBRATE:-}" ]; then
  echo "== calibrate"
  bin/wrload calibrate -url http://127.0.0.1:18600 -admin-token $ADMIN -database-url "$DB" -room sale -apply | tee "$OUT/calibrate.txt"
  RATE=$(sed -n 's/^recommended rate: \([0-9]*\).*/\1/p' "$OUT/calibrate.txt")
fi
RATE=${RATE:-40}
start 18604 # the second instance: ~19,000 streams per instance at most
URLS=http://127.0.0.1:18600,http://127.0.0.1:18604
METRICS=$(metrics 18600 18604)

echo "== burst with the room at $RATE/s: $N buyers within 30 s"
bin/wrload burst -url $URLS -metrics-url "$METRICS" -room sale -n "$N" -within 30s -procs 2 -timeout 25m -rate "$RATE" \
  -admin-token $ADMIN -database-url "$DB" -idle 20 -json "$OUT/burst-room.json" | tee "$OUT/burst-room.txt"
echo "== the same crowd in passthrough (no room)"
# The no-room baseline: most of its orders fail by design (that collapse is
# what the room is compared with), so its status mix is reported, not
# checked (-max-unexpected 1).
bin/wrload burst -url $URLS -metrics-url "$METRICS" -room sale -n "$N" -within 30s -procs 2 -timeout 25m -passthrough \
  -admin-token $ADMIN -database-url "$DB" -idle 20 -max-unexpected 1 -json "$OUT/burst-passthrough.json" | tee "$OUT/burst-passthrough.txt"
bin/wrload plot -in "$OUT/burst-room.json,$OUT/burst-passthrough.json" -out "$OUT/burst.png"

echo "== 3 instances, rate 50/s"
kill "${pids[@]}"; wait 2>/dev/null || true; pids=()
ORDER_WORK=0 start 18601; ORDER_WORK=0 start 18602; ORDER_WORK=0 start 18603
bin/wrload burst -url http://127.0.0.1:18601,http://127.0.0.1:18602,http://127.0.0.1:18603 -metrics-url "$(metrics 18601 18602 18603)" \
  -room three -n 4000 -within 5s -rate 50 -admin-token $ADMIN -database-url "$DB" -idle 0 -timeout 5m -json "$OUT/three.json" | tee "$OUT/three.txt"
