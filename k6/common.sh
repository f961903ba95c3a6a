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
