#!/usr/bin/env bash
# bench.sh: the admission core's benchmarks, as `make bench` runs them.
#   1. Go benchmarks of enter and admit against the real Redis;
#   2. this machine's redis-benchmark EVAL ceiling;
#   3. HTTP enters/s against a real server on loopback, beside a hello-world
#      Go HTTP ceiling measured the same way in the same run.
# Every load is on loopback and bounded in time. Redis database 15 is used
# and flushed; set BENCH_REDIS_DB to change it. A load whose answers are
# more than 1% other than 200 fails the script (wrload loadtest exits 1 and
# says so): its req/s would measure something else.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
DB=${BENCH_REDIS_DB:-15}
DUR=${BENCH_DURATION:-10s}
CONC=${BENCH_CONCURRENCY:-64}
WR_ADDR=127.0.0.1:18181
HELLO_ADDR=127.0.0.1:18182
METRICS_ADDR=127.0.0.1:18183
ADMIN=bench-admin-token-0123456789abcdef0123

echo "== $(date -u +%FT%TZ) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "== go benchmarks (real Redis at 127.0.0.1:6379)"
go test -run '^$' -bench . -benchtime 3s ./server/queue/

echo "== redis-benchmark EVAL ceiling (50 clients, one INCR per script)"
redis-benchmark -h 127.0.0.1 -p 6379 -n 200000 -c 50 -q \
  EVAL "return redis.call('INCR', KEYS[1])" 1 "wr:{bench}:ceiling" | tr '\r' '\n' | grep -v '^$' | tail -1
redis-cli -h 127.0.0.1 -p 6379 DEL "wr:{bench}:ceiling" >/dev/null

build_binaries
redis-cli -h 127.0.0.1 -p 6379 -n "$DB" FLUSHDB >/dev/null
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; redis-cli -n "$DB" FLUSHDB >/dev/null 2>&1 || true; }
trap cleanup EXIT
# Every enter of the load comes from 127.0.0.1, so the per-IP enter limit
# (ENTER_RATE_PER_IP, 200/s by default) would answer most of them 429
# and the run would measure the limiter. The benchmark measures the enter
# path itself: the limit is raised to its ceiling here, and only here, and
# the proof of work is off (CHALLENGE_DEFAULT=off: it measures the line).
REDIS_URL="redis://127.0.0.1:6379/$DB" LISTEN_ADDR=$WR_ADDR METRICS_ADDR=$METRICS_ADDR ADMIN_TOKEN=$ADMIN \
  CHALLENGE_DEFAULT=off SECRET_KEY=bench-secret-key-0123456789 ENTER_RATE_PER_IP=1000000 IDLE_CONNS_PER_IP=100000 \
  bin/waitingroom serve 2>/tmp/waitingroom-bench.log &
pids+=($!)
bin/wrload loadtest -serve-hello $HELLO_ADDR &
pids+=($!)
wait_for "http://$WR_ADDR/healthz"
# A slow room, so that the line grows through the run as in a flash sale.
admin_put "http://$WR_ADDR" "$ADMIN" bench '{"title":"bench","rate":50}'

echo "== HTTP ($CONC workers, $DUR each; every request a new visitor)"
bin/wrload loadtest -label "hello-world ceiling  GET /" -method GET -c "$CONC" -d "$DUR" -url "http://$HELLO_ADDR/"
bin/wrload loadtest -label "enter  POST /api/rooms/bench/queue" -method POST -c "$CONC" -d "$DUR" -url "http://$WR_ADDR/api/rooms/bench/queue"
curl -fs -H "Authorization: Bearer $ADMIN" "http://$WR_ADDR/api/admin/rooms/bench"; echo
