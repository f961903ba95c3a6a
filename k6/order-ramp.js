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
//
// setup() admits enough buyers (passthrough lets everyone in at the next
// tick) and hands their cookie and entry token to the iterations, which
// post one order each at RATE per second.
import http from "k6/http";
import { check, sleep } from "k6";

const BASE = __ENV.BASE_URL || "http://127.0.0.1:8080";
const ROOM = __ENV.ROOM || "calibrate";
const RATE = Number(__ENV.RATE || 20);
const DURATION = __ENV.DURATION || "30s";
const SECONDS = Number(DURATION.replace("s", "")) || 30;

export const options = {
  setupTimeout: "5m",
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
  thresholds: { http_req_duration: ["p(95)<1000"] },
};

export function setup() {
  const buyers = [];
  for (let i = 0; i < RATE * SECONDS + 10; i++) {
    const jar = new http.CookieJar();
    const r = http.post(`${BASE}/api/rooms/${ROOM}/queue`, null, { jar });
    const vid = jar.cookiesForURL(BASE).wr_vid;
    buyers.push({ vid: vid && vid[0], token: null });
  }
  sleep(2); // passthrough admits everyone at the next tick
  for (const b of buyers) {
    const p = http.get(`${BASE}/api/rooms/${ROOM}/queue/position`, { cookies: { wr_vid: b.vid } });
    b.token = p.json("entryToken");
  }
  return buyers.filter((b) => b.token);
}

export default function (buyers) {
  const b = buyers[(__VU * 1000 + __ITER) % buyers.length];
  const r = http.post(`${BASE}/api/rooms/${ROOM}/orders`, JSON.stringify({ quantity: 1 }), {
    headers: { "Content-Type": "application/json", "X-Entry-Token": b.token },
    cookies: { wr_vid: b.vid },
  });
  check(r, { "201": (res) => res.status === 201 });
}
