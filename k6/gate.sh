#!/usr/bin/env bash
# gate.sh: what gate mode costs per request, as BENCHMARKS.md quotes it. In
# one run, against one fresh server (PROXY_ADDR in front of a stand-in shop)
# and nginx with docs/nginx-gate.conf, on loopback and bounded in time:
#   1. wrload gatecheck: GET /gate/check with a live session, directly; nginx
#      serving the shop unguarded beside the same page behind auth_request;
#      and the reverse proxy's unguarded and guarded paths;
#   2. wrload gatecheck -direct: GET /gate/check alone (no nginx) beside a
#      hello-world server, same client and workers, 3 alternating rounds,
#      at 16 and 64 workers;
#   3. wrload proxy: the same GET straight to a hello-world origin and
#      through PROXY_ADDR, in alternating rounds.
# 1 and 3 at 1 and at 16 concurrent workers. Redis: DB 7 of the local
# server, or GATE_REDIS_URL.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
export PATH=$PATH:/usr/sbin
REDIS=${GATE_REDIS_URL:-redis://127.0.0.1:6379/7}
D=${GATE_D:-10s}
ADDR=127.0.0.1:18280
METRICS_ADDR=127.0.0.1:18283
PROXY=127.0.0.1:18284
SHOP=127.0.0.1:18285
HELLO=127.0.0.1:18286
ADMIN=gate-bench-admin-token-0123456789abcdef
build_binaries
failed=()
echo "== gate.sh: $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

REDIS_URL="$REDIS" LISTEN_ADDR=$ADDR METRICS_ADDR=$METRICS_ADDR ADMIN_TOKEN=$ADMIN PROXY_ADDR=$PROXY ORIGIN_URL=http://$SHOP \
  CHALLENGE_DEFAULT=off ENTER_RATE_PER_IP=100000 IDLE_CONNS_PER_IP=100000 bin/waitingroom serve 2>/tmp/waitingroom-gate.log &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_for "http://$ADDR/healthz"
for c in 1 16; do
  echo "-- gatecheck, $c worker(s), $D each"
  bin/wrload gatecheck -url "http://$ADDR" -admin-token "$ADMIN" -shop $SHOP -proxy "http://$PROXY" -c $c -d "$D" || failed+=("gatecheck -c $c")
done
bin/wrload loadtest -serve-hello $HELLO &
hello=$!
trap 'kill $pid $hello 2>/dev/null || true' EXIT
wait_for "http://$HELLO/"
for c in 16 64; do
  echo "-- gatecheck -direct, $c workers, 3 rounds of 5 s legs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  bin/wrload gatecheck -direct -url "http://$ADDR" -admin-token "$ADMIN" -hello "http://$HELLO" -c $c -d 5s -rounds 3 || failed+=("gatecheck -direct -c $c")
done
kill $pid $hello; wait $pid $hello 2>/dev/null || true

# wrload proxy serves its own hello-world origin at -origin: a fresh server
# whose ORIGIN_URL points there.
ORIGIN=127.0.0.1:18291
REDIS_URL="$REDIS" LISTEN_ADDR=$ADDR METRICS_ADDR=$METRICS_ADDR ADMIN_TOKEN=$ADMIN PROXY_ADDR=$PROXY ORIGIN_URL=http://$ORIGIN \
  CHALLENGE_DEFAULT=off ENTER_RATE_PER_IP=100000 IDLE_CONNS_PER_IP=100000 bin/waitingroom serve 2>>/tmp/waitingroom-gate.log &
pid=$!
wait_for "http://$ADDR/healthz"
for c in 1 16; do
  echo "-- proxy, $c worker(s)"
  bin/wrload proxy -proxy "http://$PROXY" -origin $ORIGIN -url "http://$ADDR" -admin-token "$ADMIN" -c $c -d 5s -rounds 3 || failed+=("proxy -c $c")
done
kill $pid; wait $pid 2>/dev/null || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
