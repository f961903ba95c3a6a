// enter-sse.js: the push scenario, for users who have k6 with the xk6-sse
// extension (k6 cannot be installed on the project's machines, so the Go
// tool `wrload soak` is the reference; see BENCHMARKS.md).
//
// Inputs (environment):
//   BASE_URL   server, default http://127.0.0.1:8080
//   ROOM       room, default demo
//   VUS        concurrent visitors, default 1000
//   HOLD       how long each visitor holds its stream, default 60s
//
// Each VU enters (POST, which sets wr_vid), then opens the room's SSE
// stream and counts position and ready events until HOLD passes.
import http from "k6/http";
import sse from "k6/x/sse";
import { check } from "k6";
import { Counter, Trend } from "k6/metrics";

const BASE = __ENV.BASE_URL || "http://127.0.0.1:8080";
const ROOM = __ENV.ROOM || "demo";
const positions = new Counter("wr_position_events");
const readies = new Counter("wr_ready_events");
const lag = new Trend("wr_broadcast_lag_ms", true);

export const options = {
  scenarios: {
    push: {
      executor: "per-vu-iterations",
      vus: Number(__ENV.VUS || 1000),
      iterations: 1,
      maxDuration: "30m",
    },
  },
  // Fail the run (k6 exits non-zero) when more than 1% of the answers are
  // not the expected 200: a run of 429s measures the limiter, not the room.
  thresholds: { checks: ["rate>=0.99"] },
};

export default function () {
  const enter = http.post(`${BASE}/api/rooms/${ROOM}/queue`);
  check(enter, { "entered": (r) => r.status === 200 });
  const holdMs = parseDuration(__ENV.HOLD || "60s");
  const started = Date.now();
  sse.open(`${BASE}/r/${ROOM}/events`, {}, (client) => {
    client.on("event", (e) => {
      if (e.name === "position") {
        positions.add(1);
        const t = JSON.parse(e.data).t; // the tick's server time, in microseconds
        if (t) lag.add(Date.now() - t / 1000);
      }
      if (e.name === "ready") readies.add(1);
      if (Date.now() - started > holdMs) client.close();
    });
  });
}

function parseDuration(s) {
  const m = /^(\d+)(ms|s|m)$/.exec(s);
  if (!m) return 60000;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2]];
}
