# common.sh: what the benchmark scripts share; source it, do not run it.
# Every load is on loopback and bounded in time.

# build_binaries builds the server and the load tools into bin/.
build_binaries() {
  mkdir -p bin
  go build -o bin/waitingroom . && go build -o bin/wrload ./k6/cmd/wrload
}

# wait_for URL: wait up to 10 s for URL to answer 2xx, or fail the script.
wait_for() {
  for _ in $(seq 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAILED: $1 never answered (the server's log says why)" >&2
  exit 1
}

# metrics_url BASE METRICS_ADDR: the server's /metrics, on its own private
# listener (METRICS_ADDR); the public port BASE never serves it.
metrics_url() {
  echo "http://$2/metrics"
}

# admin_put BASE TOKEN ROOM JSON: create or update a room, or fail the script.
admin_put() {
  curl -fsS -X PUT -H "Authorization: Bearer $2" -H "Content-Type: application/json" -d "$4" "$1/api/admin/rooms/$3" >/dev/null ||
    { echo "FAILED: PUT room $3 on $1" >&2; exit 1; }
}

# need_files N: make this shell's open-file limit (which the servers and
# load tools it starts inherit) at least N, raising the soft limit if the
# hard one allows, or fail the script saying so.
need_files() {
  local cur
  cur=$(ulimit -n)
  if [ "$cur" != unlimited ] && [ "$cur" -lt "$1" ]; then
    ulimit -n "$1" 2>/dev/null || true
    cur=$(ulimit -n)
  fi
  if [ "$cur" != unlimited ] && [ "$cur" -lt "$1" ]; then
    echo "FAILED: the open-file limit is $cur (hard $(ulimit -Hn)), below the $1 this run needs; raise it (ulimit -n $1, or limits.conf) or hold fewer streams per process" >&2
    exit 1
  fi
}

# process_files PID: the soft open-file limit of a running process.
process_files() {
  awk '/^Max open files/ {print $4}' "/proc/$1/limits"
}

# soak_serve ADDR METRICS_ADDR DEBUG_ADDR REDIS_URL ADMIN_TOKEN STREAMS LOG:
# start one server for a soak in the background ($! is its pid), its log
# to LOG, its pprof on DEBUG_ADDR (for soak -gc-url: a fresh server holds
# some 30 MiB of start-up garbage until its first collection, which the
# soak's connections would reuse unseen by the RSS). All visitors come
# from a few loopback addresses: the per-IP caps are raised so that the
# soak measures the push, not the caps; it takes up to STREAMS buyer
# streams (SSE_MAX_STREAMS: its default, from the open-file limit, leaves
# room for only about 11,500 of 20,000 files). Every server of a run
# shares one SECRET_KEY: a visitor's cookie verifies on any of them.
# WR_BIN, when set, is the server binary to run instead of bin/waitingroom.
soak_serve() {
  LISTEN_ADDR=$1 METRICS_ADDR=$2 DEBUG_ADDR=$3 REDIS_URL=$4 ADMIN_TOKEN=$5 SSE_MAX_STREAMS=$6 \
    SECRET_KEY=soak-secret-key-0123456789abcdef CHALLENGE_DEFAULT=off \
    SSE_MAX_PER_IP=100000 ENTER_RATE_PER_IP=100000 IDLE_CONNS_PER_IP=100000 "${WR_BIN:-bin/waitingroom}" serve 2>"$7" &
}

# soak_room RATE [READY_SPREAD_MS]: the soak room's settings JSON; without a
# spread the room follows the server's default (80% of TICK).
soak_room() {
  if [ -n "${2:-}" ]; then
    echo "{\"title\":\"soak\",\"rate\":$1,\"readySpreadMs\":$2}"
  else
    echo "{\"title\":\"soak\",\"rate\":$1}"
  fi
}

# gc_url DEBUG_ADDR: the pprof URL that runs a garbage collection.
gc_url() {
  echo "http://$1/debug/pprof/heap?gc=1"
}
