// enter-poll.js: the seed's polling pattern, for users who have k6 (the Go
// tool `wrload soak -poll` is the reference here).
//
// Inputs (environment):
//   BASE_URL   server, default http://127.0.0.1:8080
//   ROOM       room, default demo
//   VUS        concurrent visitors, default 1000
//   HOLD       how long each visitor polls, default 60s
//
// Each VU enters, then polls the position API at the interval the server
// asks for (pollingIntervalSeconds: 1 s under 100 ahead, 3 s under 1,000,
// 5 s beyond, plus jitter), until it is READY or HOLD passes.
import http from "k6/http";
import { check, sleep } from "k6";

const BASE = __ENV.BASE_URL || "http://127.0.0.1:8080";
const ROOM = __ENV.ROOM || "demo";

export const options = {
  scenarios: {
    poll: {
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
  const until = Date.now() + parseDuration(__ENV.HOLD || "60s");
  let wait = enter.json("pollingIntervalSeconds") || 1;
  while (Date.now() < until) {
    sleep(wait + Math.random() * 0.5);
    const p = http.get(`${BASE}/api/rooms/${ROOM}/queue/position`);
    check(p, { "position": (r) => r.status === 200 });
    if (p.json("status") === "READY") break;
    wait = p.json("pollingIntervalSeconds") || 1;
  }
}

function parseDuration(s) {
  const m = /^(\d+)(ms|s|m)$/.exec(s);
  if (!m) return 60000;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2]];
}
