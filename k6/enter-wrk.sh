#!/usr/bin/env bash
# enter-wrk.sh: the enter path's throughput against a hello-world Go HTTP
# server, both measured with wrk in one run on loopback.
#   1. wrk GET  against the hello-world ceiling (wrload loadtest -serve-hello,
#      the server bench.sh compares with);
#   2. wrk POST /api/rooms/bench/queue on the real server, every request a
#      new visitor (no cookie: each one makes a ticket).
# Both loads use the same wrk settings: ENTER_WRK_THREADS (2: one event
# loop per core of this 2-core machine), ENTER_WRK_CONNS (64: as bench.sh's
# 64 workers, enough to keep both servers busy) and ENTER_WRK_DURATION
# (10s). wrk is used because it is light: the Go load generator spends
# more of the shared cores on itself and so flatters the ratio. The pair
# of loads runs ENTER_WRK_ROUNDS times (3), one load at a time, and the
# median round's ratio is the figure.
# It prints req/s for both, the ratio, the non-2xx and socket-error counts
# (a load with more than 1% fails the script), each server's CPU per
# request and Redis's per enter from /proc/<pid>/stat, and where the
# machine's CPU went during each load (on a shared machine, other work
# takes its part). Redis database 14 is used and flushed (no test or other
# script uses it: a test that flushes the database mid-run turns the rest
# of the run into 404s); set ENTER_WRK_REDIS_DB to change it.
# WR_BIN names another server binary to measure (an older build, for a
# before/after).
# ENTER_WRK_PROFILE=FILE also takes a CPU profile of the server during the
# enter load (DEBUG_ADDR) into FILE; the profiler's own cost then lowers
# that run's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
DB=${ENTER_WRK_REDIS_DB:-14}
THREADS=${ENTER_WRK_THREADS:-2}
CONNS=${ENTER_WRK_CONNS:-64}
DUR=${ENTER_WRK_DURATION:-10s}
ROUNDS=${ENTER_WRK_ROUNDS:-3}
PROFILE=${ENTER_WRK_PROFILE:-}
WR_ADDR=127.0.0.1:18211
HELLO_ADDR=127.0.0.1:18212
METRICS_ADDR=127.0.0.1:18213
DEBUG_ADDR=127.0.0.1:18214
ADMIN=enter-wrk-admin-token-0123456789abcdef
ROUTE='POST /api/rooms/{room}/queue'

command -v wrk >/dev/null || { echo "FAILED: wrk is not installed (apt-get install -y wrk)" >&2; exit 1; }
TCK=$(getconf CLK_TCK)
# Redis's own CPU per enter comes from its /proc/<pid>/stat too.
REDIS_PID=$(redis-cli -h 127.0.0.1 -p 6379 info server | tr -d '\r' | awk -F: '$1 == "process_id" {print $2}')
[ -r "/proc/$REDIS_PID/stat" ] || { echo "FAILED: cannot read Redis's CPU (/proc/$REDIS_PID/stat)" >&2; exit 1; }
echo "== $(date -u +%FT%TZ) on $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' (uncommitted changes)'); wrk -t$THREADS -c$CONNS -d$DUR"

build_binaries
redis-cli -h 127.0.0.1 -p 6379 -n "$DB" FLUSHDB >/dev/null
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; redis-cli -n "$DB" FLUSHDB >/dev/null 2>&1 || true; }
trap cleanup EXIT
# As in bench.sh: the whole load comes from 127.0.0.1, so the per-IP enter
# limit and the idle-connection cap are raised to their ceiling here, and
# only here, and the proof of work is off: this measures the line itself.
REDIS_URL="redis://127.0.0.1:6379/$DB" LISTEN_ADDR=$WR_ADDR METRICS_ADDR=$METRICS_ADDR DEBUG_ADDR=$DEBUG_ADDR ADMIN_TOKEN=$ADMIN \
  CHALLENGE_DEFAULT=off SECRET_KEY=enter-wrk-secret-key-0123456789 ENTER_RATE_PER_IP=1000000 IDLE_CONNS_PER_IP=100000 \
  "${WR_BIN:-bin/waitingroom}" serve 2>/tmp/waitingroom-enter-wrk.log &
WR_PID=$!
pids+=($WR_PID)
bin/wrload loadtest -serve-hello $HELLO_ADDR &
HELLO_PID=$!
pids+=($HELLO_PID)
wait_for "http://$WR_ADDR/healthz"
wait_for "http://$HELLO_ADDR/"
# A slow room, so that the line grows through the run as in a flash sale.
admin_put "http://$WR_ADDR" "$ADMIN" bench '{"title":"bench","rate":50}'
# One enter by hand: the load must measure 200s, not refusals.
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://$WR_ADDR/api/rooms/bench/queue")
[ "$code" = 200 ] || { echo "FAILED: a single enter answered $code" >&2; exit 1; }

# cpu PID: the process's user+system CPU so far, in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# answered CODE: the server's count of enter answers with status CODE.
answered() {
  curl -fs "http://$METRICS_ADDR/metrics" |
    awk -v r="$ROUTE" -v c="$2" 'index($0, "waitingroom_http_responses_total{") == 1 && index($0, "code=\"" c "\"") && index($0, "route=\"" r "\"") {print $NF; f=1} END {if (!f) print 0}'
}

# machine: the machine's busy and total CPU so far, in clock ticks of all cores.
machine() { awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }

# run LABEL PID WRK-ARGS...: one wrk load; sets REQS, RPS, CPU_TICKS,
# REDIS_TICKS and BAD. It also says where the machine's CPU went meanwhile:
# the server, wrk, Redis, and everything else (other work on a shared
# machine; it lowers the run's req/s).
run() {
  local label=$1 pid=$2 out c0 c1 r0 m0 m1 wrk_cpu non2xx sockerr
  shift 2
  c0=$(cpu "$pid") r0=$(cpu "$REDIS_PID") m0=$(machine)
  wrk_cpu=$( { TIMEFORMAT='%U %S'; time wrk -t"$THREADS" -c"$CONNS" -d"$DUR" "$@" >/tmp/enter-wrk.out; } 2>&1 | awk '{print $1 + $2}')
  c1=$(cpu "$pid") REDIS_TICKS=$(( $(cpu "$REDIS_PID") - r0 )) m1=$(machine)
  out=$(cat /tmp/enter-wrk.out)
  CPU_TICKS=$((c1 - c0))
  REQS=$(awk '/requests in/ {print $1}' <<<"$out")
  RPS=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' <<<"$out")
  sockerr=$(awk -F'[ ,]+' '/Socket errors:/ {print $4 + $6 + $8 + $10}' <<<"$out")
  BAD=$(( ${non2xx:-0} + ${sockerr:-0} ))
  printf '%s: %s requests, %s req/s, latency %s, non-2xx %s, socket errors %s, server CPU %.2f s = %.1f us/request\n' \
    "$label" "$REQS" "$RPS" "$(awk '/^ +Latency/ {print "avg " $2 " max " $4}' <<<"$out")" "${non2xx:-0}" "${sockerr:-0}" \
    "$(bc -l <<<"$CPU_TICKS / $TCK")" "$(bc -l <<<"$CPU_TICKS / $TCK * 1000000 / $REQS")"
  read -r busy0 total0 <<<"$m0"
  read -r busy1 total1 <<<"$m1"
  awk -v t=$((total1 - total0)) -v b=$((busy1 - busy0)) -v s="$CPU_TICKS" -v r="$REDIS_TICKS" -v w="$wrk_cpu" -v tck="$TCK" -v n="$(nproc)" \
    'BEGIN {w *= tck; printf "  CPU of %d cores meanwhile: server %.0f%%, wrk %.0f%%, Redis %.0f%%, everything else %.0f%%, idle %.0f%%\n",
      n, 100 * s / t, 100 * w / t, 100 * r / t, 100 * (b - s - w - r) / t, 100 * (t - b) / t}'
  if (( BAD * 100 > REQS )); then
    echo "FAILED: $label: $BAD of $REQS answers were not 2xx; its req/s would measure something else" >&2
    echo "$out" >&2
    exit 1
  fi
}

echo "== wrk, same settings for both; every enter a new visitor; $ROUNDS rounds of hello-world then enter"
ratios=()
for round in $(seq "$ROUNDS"); do
  echo "-- round $round"
  run "hello-world  GET /" "$HELLO_PID" "http://$HELLO_ADDR/"
  HELLO_RPS=$RPS HELLO_REQS=$REQS HELLO_CPU=$CPU_TICKS
  ok0=$(answered "$ROUTE" 200)
  if [ -n "$PROFILE" ] && [ "$round" = 1 ]; then
    curl -fsS -o "$PROFILE" "http://$DEBUG_ADDR/debug/pprof/profile?seconds=$(( ${DUR%s} - 2 ))" &
    prof=$!
  fi
  run "enter  POST /api/rooms/bench/queue" "$WR_PID" -s k6/enter-wrk.lua "http://$WR_ADDR/api/rooms/bench/queue"
  if [ -n "$PROFILE" ] && [ "$round" = 1 ]; then
    wait "$prof"
    echo "profile: $PROFILE (go tool pprof -top bin/waitingroom $PROFILE)"
  fi
  ok=$(( $(answered "$ROUTE" 200) - ok0 ))
  # The server's own count: every request wrk counted must be a 200 there
  # too (wrk counts answers; a few may still be in flight when it stops).
  echo "server counted $ok enters answered 200 during the load (wrk counted $REQS answers)"
  if (( (REQS - ok) * 100 > REQS )); then
    echo "FAILED: the server answered 200 to $ok of wrk's $REQS requests" >&2
    exit 1
  fi
  ratio=$(bc -l <<<"$RPS / $HELLO_RPS * 100")
  ratios+=("$ratio")
  cpu_ratio=$(bc -l <<<"($CPU_TICKS / $REQS) / ($HELLO_CPU / $HELLO_REQS)")
  printf 'round %d: enter/hello-world %.1f%% of the req/s; an enter costs %.2fx the server CPU of a hello-world answer, plus %.1f us of Redis CPU\n' \
    "$round" "$ratio" "$cpu_ratio" "$(bc -l <<<"$REDIS_TICKS / $TCK * 1000000 / $REQS")"
done
# The median round: one round on a shared machine can be lifted or sunk by
# other work landing on one of its two loads.
printf '%s\n' "${ratios[@]}" | sort -n | awk '{r[NR] = $1} END {
  m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
  printf "enter/hello-world over %d rounds: median %.1f%% (lowest %.1f%%, highest %.1f%%)\n", NR, m, r[1], r[NR]}'
curl -fs -H "Authorization: Bearer $ADMIN" "http://$WR_ADDR/api/admin/rooms/bench" | head -c 300; echo
