// widget-sse.js: embedded-widget viewers, for users who have k6 with the
// xk6-sse extension (k6 cannot be installed on the project's machines, so
// `bash k6/widget.sh`, over the Go tool `wrload soak -widget`, is the
// reference; see BENCHMARKS.md).
//
// Inputs (environment):
//   BASE_URL   server, default http://127.0.0.1:8080
//   ROOM       room, default demo
//   VUS        concurrent viewers, default 1000
//   HOLD       how long each viewer holds its stream, default 60s
//
// Each VU opens the room's widget stream (no enter, no cookie, no ticket)
// and counts the room's events until HOLD passes.
import sse from "k6/x/sse";
import { check } from "k6";
import { Counter, Trend } from "k6/metrics";

const BASE = __ENV.BASE_URL || "http://127.0.0.1:8080";
const ROOM = __ENV.ROOM || "demo";
const events = new Counter("wr_widget_events");
const lag = new Trend("wr_broadcast_lag_ms", true);

export const options = {
  scenarios: {
    widgets: {
      executor: "per-vu-iterations",
      vus: Number(__ENV.VUS || 1000),
      iterations: 1,
      maxDuration: "30m",
    },
  },
  // A run of 503s (the widget cap) or 429s measures the limits, not the widget.
  thresholds: { checks: ["rate>=0.99"] },
};

export default function () {
  const holdMs = parseDuration(__ENV.HOLD || "60s");
  const started = Date.now();
  const res = sse.open(`${BASE}/r/${ROOM}/widget/events`, {}, (client) => {
    client.on("event", (e) => {
      if (e.name === "room") {
        events.add(1);
        const t = JSON.parse(e.data).t; // the tick's server time, in microseconds
        if (t) lag.add(Date.now() - t / 1000);
      }
      if (Date.now() - started > holdMs) client.close();
    });
  });
  check(res, { "stream opened": (r) => r && r.status === 200 });
}

function parseDuration(s) {
  const m = /^(\d+)(ms|s|m)$/.exec(s);
  if (!m) return 60000;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2]];
}
