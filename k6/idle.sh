#!/usr/bin/env bash
# idle.sh: the idle demo. It builds the server and wrload, starts the
# server as `make run` does (embedded Redis and SQL), creates 20 rooms
# through the admin API, and holds it with no visitors for IDLE_DURATION
# (default 2h; IDLE_DURATION=10m for the smoke), sampling the process's CPU
# (utime+stime deltas from /proc) and RSS every minute. It prints a table,
# writes the samples to IDLE_OUT/idle.csv, and ends with FLAT or NOT FLAT
# (exit 1): the last 30 minutes' mean CPU against the first 30 after a
# 2-minute warm-up (halves of what follows the warm-up on a shorter run).
# WR_BIN, when set, is the server binary to run instead of bin/waitingroom
# (an older build, for a before/after). Never part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
source k6/common.sh
OUT=${IDLE_OUT:-/tmp/waitingroom-idle}
mkdir -p "$OUT"
build_binaries
bin/wrload idle -bin "${WR_BIN:-bin/waitingroom}" -rooms "${IDLE_ROOMS:-20}" -duration "${IDLE_DURATION:-2h}" \
  -addr "${IDLE_ADDR:-127.0.0.1:18600}" -csv "$OUT/idle.csv" -log "$OUT/server.log"
