#!/usr/bin/env bash
# adaptive.sh: adaptive admission's figures, as BENCHMARKS.md quotes them.
# The real server in gate reverse-proxy mode (PROXY_ADDR in front of
# ORIGIN_URL) admits buyers to a stand-in shop with a knee (wrload's knee
# shop: capacity × work workers, orders past them wait their turn) whose
# capacity changes while the sale runs. On loopback, bounded in time:
#   1. wrload adaptive -mode react: one adaptive room, a line kept long,
#      capacity C, C/2, C: converge, react, recover; the per-second series
#      and the plot docs/adaptive.png;
#   2. wrload adaptive -mode compare: calibrate's step table on the knee
#      shop picks the best fixed rate; then a burst of buyers per room,
#      the adaptive room on one server beside the fixed room on another
#      (each process holds its own crowd's streams), the same schedule:
#      time to serve everyone, shop p95, failures.
# Redis: DB 9 of the local server (ADAPTIVE_REDIS_URL), namespace
# wr:adaptive-bench-<server> (one each: the two rooms protect the same
# path, which one namespace would share). ADAPTIVE_N buyers per room in
# the compare (6000, entering within ADAPTIVE_WITHIN, 60s): 10,000 per
# room within 10 s, or within 60 s, timed out the enter script on this
# shared 2-core machine under a load average of 30-50 from other work.
# The compare's adaptive room starts at calibrate's fixed rate
# (ADAPTIVE_START_RATE: a rate, or min for minRate). ADAPTIVE_ONLY=compare
# skips the react run.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
REDIS=${ADAPTIVE_REDIS_URL:-redis://127.0.0.1:6379/9}
N=${ADAPTIVE_N:-6000}
WITHIN=${ADAPTIVE_WITHIN:-60s}
REACT_SCHEDULE=${ADAPTIVE_REACT_SCHEDULE:-60/60s,30/40s,60/80s}
COMPARE_SCHEDULE=${ADAPTIVE_COMPARE_SCHEDULE:-60/40s,30/30s,60/110s}
ADMIN=adaptive-bench-admin-token-0123456789abcdef
OUT=${ADAPTIVE_OUT:-/tmp}
START=${ADAPTIVE_START_RATE:-0}
MIN=10
[ "$START" = min ] && START=$MIN
build_binaries
echo "== adaptive.sh: $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done' EXIT
# serve N: a server on 1838N/1839N... with its proxy in front of its shop.
serve() {
  local base=$((18380 + 10 * $1))
  REDIS_URL="$REDIS" REDIS_NAMESPACE=wr:adaptive-bench-$1 LISTEN_ADDR=127.0.0.1:$base METRICS_ADDR=127.0.0.1:$((base + 3)) \
    ADMIN_TOKEN=$ADMIN PROXY_ADDR=127.0.0.1:$((base + 4)) ORIGIN_URL=http://127.0.0.1:$((base + 5)) \
    CHALLENGE_DEFAULT=off ENTER_RATE_PER_IP=100000 IDLE_CONNS_PER_IP=100000 SSE_MAX_PER_IP=100000 \
    bin/waitingroom serve 2>>"$OUT/waitingroom-adaptive-$1.log" &
  pids+=($!)
  wait_for "http://127.0.0.1:$base/healthz"
}
serve 0
serve 1
A=http://127.0.0.1:18380 PA=http://127.0.0.1:18384 MA=http://127.0.0.1:18383/metrics SA=127.0.0.1:18385
B=http://127.0.0.1:18390 PB=http://127.0.0.1:18394 MB=http://127.0.0.1:18393/metrics SB=127.0.0.1:18395
# Rooms an interrupted run left go first: their lines are not this run's.
for base in $A $B; do
  for room in adaptive adaptive-adaptive adaptive-fixed; do
    curl -fs -X DELETE -H "Authorization: Bearer $ADMIN" "$base/api/admin/rooms/$room" >/dev/null || true
  done
done
common=(-admin-token "$ADMIN" -work 1s -max-wait 5s -min-rate "$MIN" -max-rate 200 -target 1500ms)

if [ "${ADAPTIVE_ONLY:-}" != compare ]; then
  echo "-- react: schedule $REACT_SCHEDULE"
  start=$(date +%s)
  bin/wrload adaptive -mode react -url $A -proxy $PA -metrics-url $MA -shop $SA "${common[@]}" -schedule "$REACT_SCHEDULE" -line 400 \
    -json "$OUT/adaptive-react.json" -plot docs/adaptive.png
  echo "(react took $(( $(date +%s) - start )) s)"
fi
echo "-- compare: $N buyers per room, schedule $COMPARE_SCHEDULE"
start=$(date +%s)
bin/wrload adaptive -mode compare -url $A -proxy $PA -metrics-url $MA -shop $SA -url2 $B -proxy2 $PB -metrics-url2 $MB -shop2 $SB "${common[@]}" \
  -schedule "$COMPARE_SCHEDULE" -n "$N" -within "$WITHIN" -start-rate "$START" -json "$OUT/adaptive-compare.json" -plot docs/adaptive-compare.png
echo "(compare took $(( $(date +%s) - start )) s)"
