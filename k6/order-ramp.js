// order-ramp.js: the second seed's stepped order load, for users who have
// k6 (the Go tool `wrload calibrate` is the reference: it also resets
// the room between steps, finds the knee and recommends a rate).
//
// Inputs (environment):
//   BASE_URL   server, default http://127.0.0.1:8080
//   ROOM       a room in passthrough mode ({"mode":"passthrough"}), with stock
//   RATE       orders per second of this run, default 20 (run once per step:
//              20, 30, … 80, resetting orders and stock in between)
//   DURATION   default 30s
//   ENTER_RATE joins per second in setup, default 10: the server's default
//              per-IP enter limit (ENTER_RATE_PER_IP, burst 3×), which every
//              join from this one client counts against. Setup then takes
//              RATE × DURATION / 10 seconds; to set up faster, start the
//              server with a higher ENTER_RATE_PER_IP (k6/sale.sh uses
//              100000) and pass ENTER_RATE no higher than it.
// The room needs a stock of at least RATE × DURATION, and a pass TTL
// (tokenTTLSeconds, 300 s by default) longer than setup plus DURATION: the
// first buyers are admitted as setup starts. Every order must be 201, and
// the run fails (k6 exits non-zero) when over 1% are not.
//
// setup() admits one buyer per iteration (passthrough lets everyone in at
// the next tick) and hands their cookie and entry token to the iterations,
// which post one order each at RATE per second, each with its own buyer.
// A refused join (429 from the per-IP limit, or any other answer) aborts
// the run in setup, rather than measure fewer buyers than asked.
import http from "k6/http";
import exec from "k6/execution";
import { check, sleep } from "k6";

const BASE = __ENV.BASE_URL || "http://127.0.0.1:8080";
const ROOM = __ENV.ROOM || "calibrate";
const RATE = Number(__ENV.RATE || 20);
const DURATION = __ENV.DURATION || "30s";
const SECONDS = Number(DURATION.replace("s", "")) || 30;
const ENTER_RATE = Number(__ENV.ENTER_RATE || 10);
const BUYERS = RATE * SECONDS + 10;

export const options = {
  setupTimeout: `${Math.ceil(BUYERS / ENTER_RATE) + 120}s`,
  scenarios: {
    orders: {
      executor: "constant-arrival-rate",
      rate: RATE,
      timeUnit: "1s",
      duration: DURATION,
      preAllocatedVUs: RATE * 2,
      maxVUs: RATE * 20,
    },
  },
  thresholds: { http_req_duration: ["p(95)<1000"], checks: ["rate>0.99"] },
};

export function setup() {
  const buyers = [];
  for (let i = 0; i < BUYERS; i++) {
    const jar = new http.CookieJar();
    const r = http.post(`${BASE}/api/rooms/${ROOM}/queue`, null, { jar });
    if (r.status !== 200) {
      throw new Error(`join ${i + 1} of ${BUYERS}: HTTP ${r.status} ${r.body}` +
        " (over the per-IP enter limit? see ENTER_RATE above)");
    }
    const vid = jar.cookiesForURL(BASE).wr_vid;
    buyers.push({ vid: vid && vid[0], token: null });
    sleep(1 / ENTER_RATE);
  }
  sleep(2); // passthrough admits everyone at the next tick
  for (const b of buyers) {
    const p = http.get(`${BASE}/api/rooms/${ROOM}/queue/position`, { cookies: { wr_vid: b.vid } });
    b.token = p.status === 200 ? p.json("entryToken") : null;
  }
  const ready = buyers.filter((b) => b.token);
  if (ready.length < BUYERS) {
    throw new Error(`${ready.length} of ${BUYERS} buyers admitted: is ROOM=${ROOM} in passthrough mode?`);
  }
  return ready;
}

export default function (buyers) {
  // One buyer per iteration: a token orders once (a second order is 409).
  const b = buyers[exec.scenario.iterationInTest];
  if (!b) {
    check(null, { "a buyer left for this iteration": () => false });
    return;
  }
  const r = http.post(`${BASE}/api/rooms/${ROOM}/orders`, JSON.stringify({ quantity: 1 }), {
    headers: { "Content-Type": "application/json", "X-Entry-Token": b.token },
    cookies: { wr_vid: b.vid },
  });
  check(r, { "201": (res) => res.status === 201 });
}
