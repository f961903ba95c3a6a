#!/usr/bin/env bash
# soak-many.sh: the push at scale, 100,000 waiting visitors held
# over several server processes on this machine. A script of its own, not
# a mode of soak.sh: soak.sh runs three modes on one server each (push,
# polling, the r3labs reference), while this run is one mode whose servers
# share a room and a Redis, whose client must be spread over processes
# and source addresses, and which one process could not hold (a process
# may open 20,000 files here).
#
# It starts SOAK_SERVERS (default 6) servers on loopback, sharing one
# Redis database (SOAK_REDIS_DB, default 13, flushed), one ADMIN_TOKEN and
# one SECRET_KEY, creates the room once through the first one's admin API,
# then holds SOAK_N (default 100,000) waiting visitors with `wrload soak`:
# visitor i on server i mod SOAK_SERVERS, the client spread over child
# processes of at most SOAK_PER_PROC (default 16,000) streams, each child
# on its own range of 8 source addresses. It prints the merged report:
# delay by priority class, SSE writes per tick, server CPU per waiting
# visitor, memory per stream (RSS, and Go heap in use with each server's
# garbage collected before and after), and Redis commands/s summed and per
# server.
# More than 1% of the visitors never connecting is FAILED (exit 1).
#
#   SOAK_N=2000 SOAK_SERVERS=3 SOAK_HOLD=10s bash k6/soak-many.sh   # a smoke
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
N=${SOAK_N:-100000}
SERVERS=${SOAK_SERVERS:-6}
HOLD=${SOAK_HOLD:-30s}
RATE=${SOAK_RATE:-5}
RAMP=${SOAK_RAMP:-2000}
DB=${SOAK_REDIS_DB:-13}
PER_PROC=${SOAK_PER_PROC:-16000}
PORT=${SOAK_BASE_PORT:-18500}
REDIS="redis://127.0.0.1:6379/$DB"
ADMIN=soak-admin-token-0123456789abcdef0123
FILES=20000

per_server=$(( (N + SERVERS - 1) / SERVERS ))
procs=$(( (N + PER_PROC - 1) / PER_PROC ))
# Each server holds its streams, Redis and listener sockets, logs: 1,000
# files to spare.
if [ $((per_server + 1000)) -gt $FILES ]; then
  echo "FAILED: $N visitors over $SERVERS servers is $per_server streams per server, more than $FILES open files allow; raise SOAK_SERVERS" >&2
  exit 1
fi
need_files $FILES
build_binaries

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; redis-cli -n "$DB" FLUSHDB >/dev/null 2>&1 || true' EXIT
redis-cli -n "$DB" FLUSHDB >/dev/null
urls=() metrics=() gcs=()
for i in $(seq 0 $((SERVERS - 1))); do
  addr=127.0.0.1:$((PORT + 3 * i)) maddr=127.0.0.1:$((PORT + 3 * i + 1)) daddr=127.0.0.1:$((PORT + 3 * i + 2))
  soak_serve "$addr" "$maddr" "$daddr" "$REDIS" $ADMIN $((per_server + 500)) "/tmp/waitingroom-soak-many-$i.log"
  pids+=($!)
  urls+=("http://$addr") metrics+=("$(metrics_url "http://$addr" "$maddr")") gcs+=("$(gc_url "$daddr")")
done
for i in "${!urls[@]}"; do
  wait_for "${urls[$i]}/healthz"
  files=$(process_files "${pids[$i]}")
  if [ "$files" != unlimited ] && [ "$files" -lt $FILES ]; then
    echo "FAILED: server $i (pid ${pids[$i]}) may open $files files, below $FILES; raise the limit (ulimit -n $FILES)" >&2
    exit 1
  fi
done
admin_put "${urls[0]}" "$ADMIN" soak "$(soak_room "$RATE" "${SOAK_READY_SPREAD_MS:-}")"
# Every server knows the room (from Redis) before the first visitor comes.
for u in "${urls[@]}"; do wait_for "$u/r/soak/status"; done

join() { local IFS=,; echo "$*"; }
echo "== push over $SERVERS servers: N=$N ($per_server per server), $procs client processes, hold $HOLD, ramp $RAMP/s," \
  "room rate $RATE/s, $(date -u +%FT%TZ), $(nproc) cores"
bin/wrload soak -url "$(join "${urls[@]}")" -metrics-url "$(join "${metrics[@]}")" -gc-url "$(join "${gcs[@]}")" -room soak -n "$N" -ramp "$RAMP" \
  -hold "$HOLD" -procs "$procs" -source-ips $((procs * 8)) -redis-url "$REDIS" || { echo "FAILED: push over $SERVERS servers" >&2; exit 1; }
