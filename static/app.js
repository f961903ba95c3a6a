// waitingroom page script: enter, follow the SSE stream, fall back to
// polling when EventSource fails, and say every state in words. Plain JS;
// its one dependency is the vendored ALTCHA solver (data-solver), run in
// Web Workers. Times count from the server's clock (serverTime).
(function () {
  "use strict";
  var root = document.getElementById("wr");
  if (!root) return;
  document.documentElement.classList.add("js");
  var room = root.dataset.room, T = {};
  try { T = JSON.parse(document.getElementById("wr-t").textContent); } catch (e) {}
  var lang = document.documentElement.lang || "en";
  var $ = function (id) { return document.getElementById(id); };
  var statusEl = $("wr-status"), rankEl = $("wr-rank"), detailEl = $("wr-detail"), etaEl = $("wr-eta"),
      countEl = $("wr-count"), bar = $("wr-progress"), inlineEl = $("wr-inline"), warnEl = $("wr-warn"),
      connEl = $("wr-conn"), liveEl = $("wr-live"), order = $("wr-order"), join = $("wr-join"),
      keepEl = $("wr-keep"), shopEl = $("wr-shop"), qty = $("wr-qty"), introEl = $("wr-intro"),
      codeEl = $("wr-code"), codeErr = $("wr-code-error");
  // A room whose access is limited has its refusals' words (wr-a).
  var A = {};
  try { A = JSON.parse($("wr-a").textContent); } catch (e) {}
  var api = "/api/rooms/" + encodeURIComponent(room) + "/queue";
  var es = null, pollTimer = null, retryTimer = null, firstRank = null, lastRank = null, done = false;
  var offset = 0;          // server clock minus ours, in ms
  var countdown = null;    // {at: ms, kind: "opens"|"draw"|"pass"}
  var warned = false, entered = false, lastEnter = 0, reason = "", reasonUntil = 0;

  // utm_* parameters and the ad click ids (gclid, fbclid, ttclid) ride
  // along to the enter and the stream (where the join counts for its
  // campaign and the server remembers them) and to the order; the page's
  // bytes never depend on the query string. Each UTM value is cut to 200
  // UTF-8 bytes (the server's bound), on a character boundary; lone
  // surrogates go. A click id is kept whole or not at all.
  function cut(s) {
    var enc = window.TextEncoder ? new TextEncoder() : null, out = "", used = 0, cps = Array.from(String(s));
    for (var i = 0; i < cps.length; i++) {
      var c = cps[i], code = c.charCodeAt(0);
      if (c.length === 1 && code >= 0xd800 && code <= 0xdfff) continue;
      var n = enc ? enc.encode(c).length : (code < 0x80 ? 1 : code < 0x800 ? 2 : c.length === 2 ? 4 : 3);
      if (used + n > 200) break;
      used += n; out += c;
    }
    return out;
  }
  var clickIDs = ["gclid", "fbclid", "ttclid"];
  function keep(k, v) {
    if (clickIDs.indexOf(k) >= 0) return /^[A-Za-z0-9._~+\/=-]{1,512}$/.test(v) ? v : "";
    return cut(v);
  }
  var utm = {};
  try {
    var q = new URLSearchParams(location.search);
    q.forEach(function (v, k) {
      if (/^utm_[a-z]{1,20}$/.test(k) || clickIDs.indexOf(k) >= 0) { v = keep(k, v); if (v) utm[k] = v; }
    });
    if (Object.keys(utm).length) sessionStorage.setItem("wr_utm_" + room, JSON.stringify(utm));
    else utm = JSON.parse(sessionStorage.getItem("wr_utm_" + room) || "{}");
    Object.keys(utm).forEach(function (k) { utm[k] = keep(k, String(utm[k])); if (!utm[k]) delete utm[k]; });
  } catch (e) { utm = {}; }
  var utmQuery = "";
  ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"].concat(clickIDs).forEach(function (k) {
    if (utm[k]) utmQuery += (utmQuery ? "&" : "?") + k + "=" + encodeURIComponent(utm[k]);
  });

  function fill(s, k, v) { return String(s || "").split("{" + k + "}").join(String(v)); }
  function now() { return Date.now() + offset; }
  function duration(sec) {
    sec = Math.max(0, Math.round(sec));
    if (sec < 60) return fill(T.sec, "s", sec);
    if (sec >= 3600) {
      var h = fill(T.hour, "h", Math.floor(sec / 3600)), m = Math.floor(sec % 3600 / 60);
      return m ? h + " " + fill(T.min, "m", m) : h;
    }
    var out = fill(T.min, "m", Math.floor(sec / 60));
    return sec % 60 ? out + " " + fill(T.sec, "s", sec % 60) : out;
  }
  function clock(sec) { // mm:ss
    sec = Math.max(0, Math.ceil(sec));
    var s = sec % 60;
    return Math.floor(sec / 60) + ":" + (s < 10 ? "0" : "") + s;
  }
  function when(ms) {
    try {
      return new Date(ms).toLocaleString(lang, { month: "long", day: "numeric", hour: "numeric", minute: "2-digit", timeZoneName: "short" });
    } catch (e) { return new Date(ms).toString(); }
  }
  function text(el, s) { el.textContent = s || ""; }
  function conn(s) { text(connEl, s); }
  function show(el, on) { if (el) el.hidden = !on; }

  // The live region: rank changes at most every 30 s, a new state at once.
  var lastSaid = 0, pending = null, sayTimer = null;
  function say(s) {
    if (sayTimer) { clearTimeout(sayTimer); sayTimer = null; }
    pending = null;
    lastSaid = Date.now();
    text(liveEl, s);
  }
  function sayRank(s) {
    var wait = 30000 - (Date.now() - lastSaid);
    if (wait <= 0) return say(s);
    pending = s;
    if (!sayTimer) sayTimer = setTimeout(function () { sayTimer = null; if (pending) say(pending); }, wait);
  }

  var state = "";
  // The lead line is true of the line only: how it lets buyers in, or, in
  // the pre-queue, how places are drawn.
  var intros = { waiting: "intro", prequeue: "introPrequeue" };
  // view sets the page's state: its lines, what is shown, what is said.
  function view(name, rank, detail, urgent) {
    var changed = name !== state;
    state = name;
    statusEl.hidden = false;
    if (introEl) { text(introEl, T[intros[name]]); introEl.hidden = !intros[name]; }
    text(rankEl, rank);
    text(detailEl, detail);
    if (name !== "waiting") { text(etaEl, ""); text(inlineEl, ""); bar.hidden = true; }
    if (name !== "ready") { text(warnEl, ""); order.hidden = true; }
    show(keepEl, name === "waiting" || name === "prequeue");
    show(shopEl, name === "soldout" || name === "ended" || name === "expired");
    if (changed || urgent) say(rank + (detail ? ". " + detail : ""));
  }

  function stop() {
    done = true;
    if (es) { es.close(); es = null; }
    if (pollTimer) clearTimeout(pollTimer);
    polling = false; streamTries = 0;
    if (streamTimer) { clearTimeout(streamTimer); streamTimer = null; }
    conn("");
  }

  function render(p) {
    if (!p || done) return;
    if (typeof p.serverTime === "number") offset = p.serverTime - Date.now();
    if (p.status === "READY") return ready(p);
    if (p.soldOut) return soldOut(p);
    join.classList.remove("show");
    if (p.status === "PREQUEUED") return prequeue(p);
    if (p.status === "WAITING") return waiting(p);
    if (p.phase === "scheduled") return notOpen(p);
    if (p.phase === "closed") return ended();
    countdown = null; text(countEl, "");
    view("out", T.notInLine, "");
    join.classList.add("show");
  }

  function notOpen(p) {
    if (typeof p.serverTime === "number") offset = p.serverTime - Date.now();
    entered = false;
    var lines = [];
    if (p.opensAt) lines.push(fill(T.opensAt, "time", when(p.opensAt)));
    if (p.prequeueAt) lines.push(fill(T.lineOpensAt, "time", when(p.prequeueAt)));
    view("scheduled", T.notOpen, lines.join(" "));
    // The line opens at prequeueAt (or opensAt): enter then.
    countdown = p.opensAt ? { at: p.opensAt, kind: "opens", enterAt: p.prequeueAt || p.opensAt } : null;
    tick();
  }

  function prequeue(p) {
    view("prequeue", T.prequeued, T.prequeueHint);
    text(etaEl, p.ticket ? fill(T.ticket, "n", p.ticket) : "");
    countdown = p.opensAt ? { at: p.opensAt, kind: "draw" } : null;
    text(countEl, "");
    tick();
  }

  // Far back in the line, positions come every few ticks ("every"); in
  // between, the page counts down on its own: it holds the rank for
  // "after" ms, then takes off "pace" ranks a second for at most "span" ms.
  // The server keeps the pace below the line's and corrects a page before
  // it could get ahead, so the count is never better than the truth. It
  // stops where the stream is lost, and where the stream, which beats at
  // least every heartbeat, has said nothing for "quiet" ms: a server that
  // froze. It holds what it shows then, until the next position.
  var ticking = null; // {p, at}: the event the countdown runs from
  var beatAt = 0; // performance.now() of the stream's last event or beat
  function waiting(p) {
    ticking = p.pace > 0 && !p.paused ? { p: p, at: performance.now() } : null;
    waitingAt(p, p.rank, p.estimatedWaitSeconds);
  }
  function countDown() {
    if (!ticking || done || state !== "waiting") return;
    var p = ticking.p, at = ticking.at, end = performance.now();
    if (p.quiet > 0 && end - beatAt >= p.quiet) { end = beatAt + p.quiet; ticking = null; }
    var t = Math.min(Math.max(end - at - p.after, 0), p.span);
    var rank = Math.max(0, p.rank - Math.floor(p.pace * t / 1000));
    if (rank === lastRank) return;
    var eta = p.estimatedWaitSeconds;
    if (typeof eta === "number" && p.rank > 0) eta = Math.ceil(eta * rank / p.rank);
    waitingAt(p, rank, eta);
  }
  setInterval(countDown, 250);
  // quietFor is how long the stream may say nothing at p's cadence.
  function quietFor(p) { return 15000 + (p && p.after > 0 ? 2 * p.after + p.span : 0); }

  // place says rank as the line of the buyer's place; at the front of a
  // paused line, without a turn to come.
  function place(rank, paused) {
    if (rank === 0) return paused ? T.noneAhead : T.next;
    return rank === 1 ? T.aheadOne : fill(T.ahead, "n", rank.toLocaleString(lang));
  }

  function waitingAt(p, rank, eta) {
    countdown = null; text(countEl, "");
    // A rank that went up is shown as it is, with the reason, for 30 s.
    var up = lastRank !== null && rank > lastRank;
    if (firstRank === null || rank > firstRank) firstRank = rank;
    lastRank = rank;
    if (up) { reason = T["rankUp_" + p.rankUpReason] || T.rankUp; reasonUntil = Date.now() + 30000; }
    if (p.paused) {
      view("paused", T.paused, T.pausedHint);
      text(etaEl, place(rank, true));
      text(inlineEl, fill(T.inline, "n", p.currentTotalWaitingCount.toLocaleString(lang)));
      return;
    }
    var line = place(rank);
    var was = state;
    view("waiting", line, Date.now() < reasonUntil ? reason : "", up);
    if (was === "waiting" && !up) sayRank(line);
    text(etaEl, typeof eta === "number" ? fill(T.eta, "t", duration(eta)) : "");
    text(inlineEl, fill(T.inline, "n", p.currentTotalWaitingCount.toLocaleString(lang)));
    bar.hidden = false;
    bar.value = firstRank > 0 ? Math.round(100 * (firstRank - rank) / firstRank) : 100;
  }

  function ready(p) {
    stop();
    $("wr-token").value = p.entryToken;
    Object.keys(utm).forEach(function (k) {
      if (order.querySelector('input[name="' + k + '"]')) return;
      var i = document.createElement("input");
      i.type = "hidden"; i.name = k; i.value = utm[k];
      order.appendChild(i);
    });
    view("ready", T.ready, "", true);
    order.hidden = false;
    bar.hidden = false; bar.value = 100;
    warned = false;
    countdown = p.passExpiresAt ? { at: p.passExpiresAt, kind: "pass" } : null;
    text(countEl, "");
    tick();
    stock();
    var b = order.querySelector("button");
    if (b) b.focus();
  }

  function expired() {
    countdown = null;
    text(countEl, "");
    view("expired", T.expired, T.expiredHint, true);
    $("wr-token").value = "";
    join.querySelector("button").textContent = T.rejoin;
    join.classList.add("show");
  }

  // Sold out. A buyer in line keeps their place and the stream: a restock
  // moves the line again, and the next event says so.
  function soldOut(p) {
    countdown = null; text(countEl, "");
    if (p.status !== "WAITING") {
      stop();
      view("soldout", T.soldOut, T.soldOutHint, true);
    } else {
      view("soldout", T.soldOut, T.soldOutKeep);
    }
    join.classList.remove("show");
  }

  function ended() {
    stop();
    countdown = null; text(countEl, "");
    view("ended", T.ended, T.endedHint, true);
    join.classList.remove("show");
  }

  // tick runs every second: the countdowns, and the pass's warning and end.
  function tick() {
    if (!countdown) return;
    var left = (countdown.at - now()) / 1000;
    if (countdown.kind === "pass") {
      if (left <= 0) return expired();
      text(countEl, fill(T.passLeft, "t", clock(left)));
      if (left <= 60 && !warned) { warned = true; text(warnEl, T.passWarning); }
      return;
    }
    // The opening is due but the draw has not landed yet: say so, not "0 s".
    if (countdown.kind === "draw" && left <= 0) text(countEl, T.drawing);
    else text(countEl, fill(countdown.kind === "draw" ? T.drawIn : T.opensIn, "t", duration(left)));
    // The line opens: join it (once; a refusal sets a new countdown).
    if (countdown.enterAt && countdown.enterAt <= now() && !entered && Date.now() - lastEnter > 2000) {
      entered = true;
      enter().then(function (ok) { if (ok && !es) stream(); });
    }
  }
  setInterval(tick, 1000);

  // The quantity's max follows the chosen product's stock and limit.
  function setMax() {
    if (!qty) return;
    var p = order.querySelector('input[name="product_id"]:checked') || order.querySelector('input[name="product_id"][type="hidden"]');
    var m = p ? parseInt(p.dataset.max, 10) : NaN;
    if (m > 0) { qty.max = m; if (+qty.value > m) qty.value = m; }
  }
  order.addEventListener("change", setMax);
  function stock() {
    fetch("/api/rooms/" + encodeURIComponent(room) + "/products", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : []; })
      .then(function (ps) {
        ps.forEach(function (p) {
          var i = order.querySelector('input[name="product_id"][value="' + p.id + '"]');
          if (!i) return;
          var m = Math.min(parseInt(i.dataset.max, 10) || p.stock, p.stock);
          i.dataset.max = m;
          if (i.type === "radio") i.disabled = m <= 0;
        });
        setMax();
      })
      .catch(function () {});
  }

  function poll() {
    if (done || !polling) return;
    fetch(api + "/position", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (p) { render(p); schedule(p.pollingIntervalSeconds); })
      .catch(function () { conn(T.trouble); schedule(5); });
  }
  function schedule(sec) {
    if (done || !polling) return;
    pollTimer = setTimeout(poll, (sec || 3) * 1000 + Math.random() * 500);
  }

  // A stream refused (a full server's 503, or a proxy's with no server
  // behind it; a server that cannot reach Redis holds the stream instead)
  // is tried again while the page polls: first after 0.25 to 0.75 s, then
  // twice as late each time, up to 30 s. Once it opens, polling stops.
  var polling = false, streamTries = 0, streamTimer = null;
  function fallBack() {
    if (!polling) { polling = true; poll(); }
    if (streamTimer) return;
    var wait = Math.min(30000, 250 * Math.pow(2, streamTries) * (1 + 2 * Math.random()));
    streamTries++;
    streamTimer = setTimeout(function () { streamTimer = null; if (!es && !done) stream(); }, wait);
  }
  function streaming() {
    streamTries = 0;
    if (!polling) return;
    polling = false;
    if (pollTimer) { clearTimeout(pollTimer); pollTimer = null; }
  }

  // A waiting page hears its position every tick. An open stream silent
  // for 15 s has lost something (the drills saw a ready event that never
  // came): the position API is asked once, so that a turn is never missed.
  var heard = 0, last = null;
  setInterval(function () {
    if (done || !es || es.readyState !== EventSource.OPEN || (state !== "waiting" && state !== "paused")) return;
    if (Date.now() - heard < quietFor(ticking ? ticking.p : last)) return;
    heard = Date.now();
    fetch(api + "/position", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (p) { if (p) render(p); })
      .catch(function () {});
  }, 5000);

  function stream() {
    if (done) return;
    if (!window.EventSource) { conn(T.polling); polling = true; return poll(); }
    es = new EventSource("/r/" + encodeURIComponent(room) + "/events" + utmQuery);
    heard = Date.now();
    var onEvent = function (e) {
      heard = Date.now(); beatAt = performance.now(); conn("");
      try { last = JSON.parse(e.data); } catch (x) { return; }
      render(last);
    };
    es.addEventListener("position", onEvent);
    es.addEventListener("ready", onEvent);
    es.addEventListener("soldout", onEvent);
    // The server lost Redis: the position is on hold until the next one.
    es.addEventListener("outage", function () { ticking = null; conn(T.reconnecting); });
    // The server runs: a counting page may count on (see countDown).
    es.addEventListener("beat", function () { beatAt = performance.now(); });
    // The room's ticks stopped: hold the rank shown until the next one.
    es.addEventListener("hold", function () { heard = Date.now(); ticking = null; });
    var failures = 0;
    es.onopen = function () { heard = Date.now(); beatAt = performance.now(); failures = 0; conn(""); streaming(); };
    es.onerror = function () {
      ticking = null; // counting on without the stream could get ahead
      if (done) return;
      failures++;
      // Refused (CLOSED), or unable to connect again and again: poll the
      // JSON API instead. A single drop is left to the browser's reconnect.
      if (es.readyState === EventSource.CLOSED || failures >= 3) {
        es.close();
        es = null;
        conn(T.polling);
        fallBack();
      } else {
        conn(T.reconnecting);
      }
    };
  }

  // The proof of work. A room that asks for one answers the
  // enter of a visitor without a place with 428. The page then fetches a
  // challenge, has the vendored ALTCHA solver find its number in Web
  // Workers (nothing to click, nothing shown but words), and enters again
  // with the answer in X-Altcha. A refused answer or a failed solve is said,
  // and a new challenge is tried after a pause that grows.
  var proofErrors = ["challenge_required", "challenge_invalid", "challenge_expired", "challenge_used"];
  var proofFailures = 0;

  // solve finds the number of challenge ch: n workers each search their
  // share of [0, maxNumber], as altcha's widget splits it. It resolves to
  // the X-Altcha payload (base64 of the widget's JSON), or rejects.
  function solve(ch) {
    var n = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2)), size = Math.ceil((ch.maxNumber || 1e6) / n);
    var workers = [], left = n, over = false, timer = null;
    return new Promise(function (resolve, reject) {
      function end(err, number) {
        if (over) return;
        over = true;
        clearTimeout(timer);
        workers.forEach(function (w) { w.terminate(); });
        if (err) return reject(err);
        resolve(btoa(JSON.stringify({ algorithm: ch.algorithm, challenge: ch.challenge, number: number, salt: ch.salt, signature: ch.signature })));
      }
      // The challenge expires after about two minutes: give up then.
      timer = setTimeout(function () { end(new Error("challenge: no number in time")); }, 120000);
      try {
        for (var i = 0; i < n; i++) {
          var w = new Worker(root.dataset.solver);
          workers.push(w);
          w.onerror = function () { end(new Error("challenge: solver failed")); };
          w.onmessage = function (e) {
            if (e.data && typeof e.data.number === "number") return end(null, e.data.number);
            if (--left === 0) end(new Error("challenge: no number found"));
          };
          w.postMessage({ type: "work", payload: { algorithm: ch.algorithm, challenge: ch.challenge, salt: ch.salt }, start: i * size, max: i * size + size });
        }
      } catch (err) { end(err); } // no Worker, or one refused
    });
  }

  // prove says the place is being prepared, fetches a new challenge and
  // enters with its answer.
  function prove() {
    view("preparing", T.preparing, T.preparingHint);
    return fetch("/api/rooms/" + encodeURIComponent(room) + "/challenge", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) throw new Error("challenge: fetch: HTTP " + r.status);
        return r.json();
      })
      .then(solve)
      .then(function (payload) { return enter(payload); }, function () { return unproved(); });
  }

  // unproved says the place could not be prepared, and enters again (with
  // a new challenge) after 2, 4, 8 … 30 s.
  function unproved() {
    proofFailures++;
    view("unproved", T.prepareFailed, T.prepareFailedHint, true);
    retryTimer = setTimeout(function () { enter().then(function (ok) { if (ok && !es) stream(); }); },
      Math.min(30, Math.pow(2, proofFailures)) * 1000);
    return false;
  }

  // refused says why the line could not be joined; enter tries again.
  function refused(tooMany) {
    if (state && ["trouble", "preparing", "unproved"].indexOf(state) < 0) { conn(tooMany ? T.tooMany : T.trouble); return; }
    view("trouble", tooMany ? T.tooManyTitle : T.troubleTitle, tooMany ? T.tooMany : T.trouble);
  }

  // reusable returns proof (an X-Altcha payload) while it can still be
  // sent again: until about 10 s before its challenge expires (the salt's
  // expires parameter, unix seconds). A 429, a 503 or a lost connection
  // answer before the proof is spent, so it is kept for the retry rather
  // than solved again; only a 428 throws it away.
  function reusable(proof) {
    if (!proof) return undefined;
    try {
      var m = /[?&]expires=(\d+)/.exec(JSON.parse(atob(proof)).salt);
      if (m && Date.now() < parseInt(m[1], 10) * 1000 - 10000) return proof;
    } catch (err) { /* not a payload: solve again */ }
    return undefined;
  }

  // accessRefused says why a room whose access is limited refused the
  // join (its code, or the shop's sign-in), offers the join form again
  // with the code field, and tries nothing by itself: the buyer acts.
  function accessRefused(e, r) {
    var msg = A[e.error];
    if (e.error === "code_throttled") {
      msg = fill(msg, "t", duration(parseInt(r.headers.get("Retry-After"), 10) || 60));
    }
    statusEl.hidden = true;
    show(bar, false);
    if (codeEl && e.error.indexOf("code_") === 0) {
      text(codeErr, msg);
      join.classList.add("show");
      if (e.error !== "code_required") codeEl.focus();
      say(msg);
    } else if (e.error === "identity_required") {
      // The form says it and links the shop's sign-in: the way in.
      var link = $("wr-signin");
      if (link && e.signIn) link.href = e.signIn;
      join.querySelector("button").hidden = true;
      join.classList.add("show");
      say(msg);
    } else {
      view("refused", A.refused, msg, true);
      join.classList.add("show");
    }
    return false;
  }

  // enter joins the line (idempotent), with proof (an X-Altcha payload)
  // when it has one. A refusal says why and tries again, with the same
  // proof while it lasts (reusable); a room that asks for a proof of work
  // gets one (prove).
  function enter(proof) {
    lastEnter = Date.now();
    join.classList.remove("show");
    if (retryTimer) { clearTimeout(retryTimer); retryTimer = null; }
    var headers = proof ? { "X-Altcha": proof } : {};
    var init = { method: "POST", credentials: "same-origin", cache: "no-store", headers: headers };
    var code = codeEl ? codeEl.value.trim() : "";
    if (code) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify({ code: code });
      text(codeErr, "");
    }
    return fetch(api + utmQuery, init)
      .then(function (r) {
        if (r.ok) return r.json().then(function (p) { proofFailures = 0; conn(""); render(p); return true; });
        return r.json().catch(function () { return {}; }).then(function (e) {
          if (r.status === 428 && e && proofErrors.indexOf(e.error) >= 0) return proof ? unproved() : prove();
          if (e && A[e.error]) return accessRefused(e, r);
          if (e && (e.error === "sale_ended" || e.error === "closed" || e.phase === "closed")) { ended(); return false; }
          // Before the line opens: count down to it, and join then.
          if (e && (e.phase === "scheduled" || e.error === "not_open")) { statusEl.hidden = false; notOpen(e); return false; }
          var after = parseInt(r.headers.get("Retry-After"), 10) || 5;
          refused(r.status === 429);
          retryTimer = setTimeout(function () { enter(reusable(proof)).then(function (ok) { if (ok && !es) stream(); }); }, after * 1000);
          return false;
        });
      })
      .catch(function () {
        refused(false);
        retryTimer = setTimeout(function () { enter(reusable(proof)).then(function (ok) { if (ok && !es) stream(); }); }, 5000);
        return false;
      });
  }

  join.addEventListener("submit", function (e) {
    e.preventDefault();
    done = false; lastRank = null; firstRank = null; state = ""; entered = false;
    join.querySelector("button").textContent = T.join;
    enter().then(function (ok) { if (ok && (!es || es.readyState === EventSource.CLOSED)) stream(); });
  });
  statusEl.hidden = false;
  text(rankEl, T.connecting);
  if (root.hasAttribute("data-ask")) {
    // A code chooses the line here: a buyer with a place goes on, one
    // without is offered the form, with or without a code, before joining.
    fetch(api + "/position", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (p) {
        if (p && p.status === "NOT_ENTERED" && p.phase === "open") {
          statusEl.hidden = true;
          join.classList.add("show");
          return;
        }
        if (!p) return enter().then(function (ok) { if (ok) stream(); });
        render(p);
        if (p.status !== "NOT_ENTERED") stream();
        else join.classList.add("show"); // before the opening: the code can wait in the form
      })
      .catch(function () { enter().then(function (ok) { if (ok) stream(); }); });
  } else {
    enter().then(function (ok) { if (ok) stream(); });
  }
})();
