// waitingroom page script: enter, follow the SSE stream, fall back to
// polling when EventSource fails. Plain JS, no dependencies.
(function () {
  "use strict";
  var root = document.getElementById("wr");
  if (!root) return;
  document.documentElement.classList.add("js");
  var d = root.dataset, room = d.room;
  var $ = function (id) { return document.getElementById(id); };
  var rankEl = $("wr-rank"), etaEl = $("wr-eta"), bar = $("wr-progress"), inlineEl = $("wr-inline"),
      connEl = $("wr-conn"), order = $("wr-order"), join = $("wr-join");
  var api = "/api/rooms/" + encodeURIComponent(room) + "/queue";
  var es = null, pollTimer = null, firstRank = null, done = false;

  // utm_* parameters ride along to the order; the page's bytes never
  // depend on the query string.
  var utm = {};
  try {
    var q = new URLSearchParams(location.search);
    q.forEach(function (v, k) { if (/^utm_[a-z]{1,20}$/.test(k)) utm[k] = v.slice(0, 200); });
    if (Object.keys(utm).length) sessionStorage.setItem("wr_utm_" + room, JSON.stringify(utm));
    else utm = JSON.parse(sessionStorage.getItem("wr_utm_" + room) || "{}");
  } catch (e) { utm = {}; }

  function fill(s, k, v) { return s.split("{" + k + "}").join(String(v)); }
  function duration(sec) {
    sec = Math.max(0, Math.round(sec));
    if (sec < 60) return fill(d.tSec, "s", sec);
    var out = fill(d.tMin, "m", Math.floor(sec / 60));
    return sec % 60 ? out + " " + fill(d.tSec, "s", sec % 60) : out;
  }
  function conn(text) { connEl.textContent = text || ""; }

  function render(p) {
    if (!p || done) return;
    if (p.status === "READY") return ready(p);
    if (p.soldOut) return soldOut();
    if (p.status === "NOT_ENTERED") {
      rankEl.textContent = d.tNotinline;
      etaEl.textContent = ""; inlineEl.textContent = "";
      bar.hidden = true;
      join.classList.add("show");
      return;
    }
    join.classList.remove("show");
    // The rank is shown as the server says; if it went up, the server says
    // why (rankUpReason) and so does the page.
    var rank = p.rank, why = "";
    if (p.rankUpReason) why = d["tRankup" + p.rankUpReason.charAt(0).toUpperCase() + p.rankUpReason.slice(1)] || "";
    if (firstRank === null || rank > firstRank) firstRank = rank;
    rankEl.textContent = rank === 0 ? d.tNext : rank === 1 ? d.tAheadOne : fill(d.tAhead, "n", rank.toLocaleString());
    // No ETA while paused (estimatedWaitSeconds is null).
    etaEl.textContent = p.estimatedWaitSeconds == null ? (p.paused ? d.tPaused : "") :
      fill(d.tEta, "t", duration(p.estimatedWaitSeconds));
    inlineEl.textContent = (why ? why + " " : "") + fill(d.tInline, "n", p.currentTotalWaitingCount.toLocaleString());
    bar.hidden = false;
    bar.value = firstRank > 0 ? Math.round(100 * (firstRank - rank) / firstRank) : 100;
  }

  function ready(p) {
    done = true;
    if (es) es.close();
    if (pollTimer) clearTimeout(pollTimer);
    conn("");
    var h2 = order.querySelector("h2");
    rankEl.textContent = h2.textContent; // announced through the live region
    h2.hidden = true;
    etaEl.textContent = ""; inlineEl.textContent = "";
    bar.hidden = false; bar.value = 100;
    $("wr-token").value = p.entryToken;
    Object.keys(utm).forEach(function (k) {
      var i = document.createElement("input");
      i.type = "hidden"; i.name = k; i.value = utm[k];
      order.appendChild(i);
    });
    order.hidden = false;
    var b = order.querySelector("button");
    if (b) b.focus();
  }

  function soldOut() {
    done = true;
    if (es) es.close();
    if (pollTimer) clearTimeout(pollTimer);
    conn("");
    rankEl.textContent = d.tSoldout;
    etaEl.textContent = ""; inlineEl.textContent = "";
    bar.hidden = true;
    join.classList.remove("show");
  }

  function poll() {
    if (done) return;
    fetch(api + "/position", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (p) { render(p); schedule(p.pollingIntervalSeconds); })
      .catch(function () { schedule(5); });
  }
  function schedule(sec) {
    if (done) return;
    pollTimer = setTimeout(poll, (sec || 3) * 1000 + Math.random() * 500);
  }

  function stream() {
    if (!window.EventSource) { conn(d.tPolling); return poll(); }
    es = new EventSource("/r/" + encodeURIComponent(room) + "/events");
    var onEvent = function (e) { conn(""); try { render(JSON.parse(e.data)); } catch (x) {} };
    es.addEventListener("position", onEvent);
    es.addEventListener("ready", onEvent);
    es.addEventListener("soldout", onEvent);
    // The server lost Redis: the position is on hold until the next one.
    es.addEventListener("outage", function () { conn(d.tReconnecting); });
    var failures = 0;
    es.onopen = function () { failures = 0; conn(""); };
    es.onerror = function () {
      if (done) return;
      failures++;
      // Refused (CLOSED), or unable to connect again and again: poll the
      // JSON API instead. A single drop is left to the browser's reconnect.
      if (es.readyState === EventSource.CLOSED || failures >= 3) {
        es.close();
        conn(d.tPolling);
        poll();
      } else {
        conn(d.tReconnecting);
      }
    };
  }

  function enter() {
    join.classList.remove("show");
    return fetch(api, { method: "POST", credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(render)
      .catch(function () {});
  }

  join.addEventListener("submit", function (e) {
    e.preventDefault();
    done = false; firstRank = null;
    enter().then(function () { if (!es || es.readyState === EventSource.CLOSED) stream(); });
  });
  enter().then(stream);
})();
