#!/usr/bin/env bash
# pow.sh: the proof of work's figures, as BENCHMARKS.md and
# RELIABILITY.md quote them. In one run, against one fresh server with the
# binary's defaults (CHALLENGE_DEFAULT auto, the per-address enter limit)
# that trusts loopback as a proxy, on loopback and bounded in time:
#   0. the load tools' solver and the ALTCHA library's, hashes/s on one core;
#   1. wrload natcrowd: POW_N (5,000) buyers behind one address within 10 s;
#   2. wrload powbot: a bot with all the CPU, POW_D (60 s) per room, challenge
#      off then auto, from one address and then from one IPv6 /64;
#   3. wrload drawshare: a crowd from many /24 networks and the bot through a
#      POW_PREQUEUE (30 s) pre-queue, challenge off then auto.
# The phone-equivalent times assume POW_PHONE_HPS (20,000) hashes/s. Redis:
# DB 7 of the local server, or POW_REDIS_URL. Keep the machine quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
REDIS=${POW_REDIS_URL:-redis://127.0.0.1:6379/7}
N=${POW_N:-5000}
D=${POW_D:-60s}
PREQUEUE=${POW_PREQUEUE:-30s}
PHONE=${POW_PHONE_HPS:-20000}
ADDR=127.0.0.1:18380
METRICS_ADDR=127.0.0.1:18383
ADMIN=pow-bench-admin-token-0123456789abcdef
build_binaries
failed=()
echo "== pow.sh: $(date -u +%FT%TZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load average $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3), commit $(git rev-parse --short HEAD)"
echo "   command: POW_N=$N POW_D=$D POW_PREQUEUE=$PREQUEUE POW_PHONE_HPS=$PHONE bash k6/pow.sh"
echo "   server: CHALLENGE_DEFAULT=auto, TRUSTED_PROXIES=127.0.0.1/32,::1/128, every other setting its default; phone assumed at $PHONE hashes/s"

echo "-- 0. solvers, one core (go test -bench Solve ./k6)"
go test ./k6 -run '^$' -bench 'Solve$' -benchtime 20x -cpu 1 | grep -E '^Benchmark' || failed+=("solver benchmark")

REDIS_URL="$REDIS" LISTEN_ADDR=$ADDR METRICS_ADDR=$METRICS_ADDR ADMIN_TOKEN=$ADMIN \
  TRUSTED_PROXIES=127.0.0.1/32,::1/128 CHALLENGE_DEFAULT=auto bin/waitingroom serve 2>/tmp/waitingroom-pow.log &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_for "http://$ADDR/healthz"
URL=http://$ADDR

echo "-- 1. natcrowd: $N buyers behind one address within 10 s (room challenge auto)"
bin/wrload natcrowd -url $URL -admin-token $ADMIN -n "$N" -window 10s -timeout 5m -phone-hps "$PHONE" || failed+=("natcrowd")

for src in one v6-64; do
  echo "-- 2. powbot, source $src: $D per room, challenge off then auto"
  bin/wrload powbot -url $URL -admin-token $ADMIN -source $src -duration "$D" || failed+=("powbot $src")
done

echo "-- 3. drawshare: a $PREQUEUE pre-queue per room, challenge off then auto"
bin/wrload drawshare -url $URL -admin-token $ADMIN -prequeue "$PREQUEUE" || failed+=("drawshare")

kill $pid; wait $pid 2>/dev/null || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
