/* The embeddable widget (/r/{room}/widget): keeps the room's phase live over SSE, or by polling where
   EventSource fails, counts down from the server's clock, and tells the host page its height. */
(function () {
  'use strict';
  var root = document.getElementById('wr-widget');
  if (!root) return;
  var d = root.dataset;
  var stateEl = document.getElementById('wr-w-state');
  var detailEl = document.getElementById('wr-w-detail');
  var goEl = document.getElementById('wr-w-go');
  var view = null;
  var offset = 0; // server clock minus this clock, ms
  var timer = 0;

  function fill(s, k, v) { return s.split('{' + k + '}').join(v); }
  function two(n) { return (n < 10 ? '0' : '') + n; }
  function clock(ms) {
    var s = Math.ceil(ms / 1000);
    return two(Math.floor(s / 3600)) + ':' + two(Math.floor(s / 60) % 60) + ':' + two(s % 60);
  }
  function count(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function wait(sec) {
    if (sec < 60) return fill(d.seconds, 's', String(Math.max(sec, 1)));
    var m = Math.ceil(sec / 60); // as the server's waitWords
    if (m < 60) return fill(d.minutes, 'm', String(m));
    return fill(d.hours, 'h', String(Math.floor(m / 60))) + (m % 60 ? ' ' + fill(d.minutes, 'm', String(m % 60)) : '');
  }
  function countdown(at) {
    var left = at - (Date.now() + offset);
    return left <= 0 ? d.opening : fill(d.opensIn, 't', clock(left));
  }
  function words(v) {
    if (v.soldOut) return [d.soldOut, ''];
    if (v.phase === 'closed') return [d.ended, ''];
    if (v.phase === 'scheduled') {
      var lineLeft = v.prequeueAt ? v.prequeueAt - (Date.now() + offset) : 0;
      if (lineLeft > 0) return [fill(d.lineOpensIn, 't', clock(lineLeft)), v.opensAt ? countdown(v.opensAt) : ''];
      return v.opensAt ? [countdown(v.opensAt), ''] : [d.notOpen, ''];
    }
    if (v.phase === 'prequeue') return [d.prequeue, v.opensAt ? countdown(v.opensAt) : ''];
    if (v.paused) return [d.paused, ''];
    if (v.waiting > 0 && v.eta !== null) return [fill(fill(d.waiting, 'n', count(v.waiting)), 't', wait(v.eta)), ''];
    if (v.waiting > 0) return [fill(d.waitingNow, 'n', count(v.waiting)), ''];
    return [d.open, ''];
  }
  function show() {
    if (!view) return;
    var w = words(view);
    var counting = view.phase === 'scheduled' || view.phase === 'prequeue';
    stateEl.setAttribute('aria-live', view.phase === 'scheduled' ? 'off' : 'polite');
    if (stateEl.textContent !== w[0]) stateEl.textContent = w[0];
    if (detailEl.textContent !== w[1]) detailEl.textContent = w[1];
    root.setAttribute('data-phase', view.soldOut ? 'soldout' : view.phase);
    if (goEl) goEl.hidden = !!view.soldOut; // nothing is left to go to
    if (counting && !timer) timer = setInterval(show, 1000);
    if (!counting && timer) { clearInterval(timer); timer = 0; }
    size();
  }
  function apply(v) {
    if (!v || typeof v.phase !== 'string') return;
    if (v.serverTime) offset = v.serverTime - Date.now();
    view = v;
    show();
  }
  var lastHeight = 0;
  function size() {
    var h = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (h === lastHeight || window.parent === window) return;
    lastHeight = h;
    window.parent.postMessage({ type: 'wr-widget-size', room: d.room, height: h }, '*');
  }

  // gone: the room no longer exists (deleted): say so, and ask again
  // only once a minute.
  var gone = false;
  function ended() {
    gone = true;
    view = null;
    if (timer) { clearInterval(timer); timer = 0; }
    if (stateEl.textContent !== d.gone) stateEl.textContent = d.gone;
    detailEl.textContent = '';
    root.setAttribute('data-phase', 'gone');
    size();
  }
  var polling = 0;
  function poll() {
    fetch(d.status, { credentials: 'omit' }).then(function (r) {
      if (r.status === 404) { ended(); return null; }
      gone = false;
      return r.ok ? r.json() : null;
    }).then(apply, function () {})
      .then(function () { polling = setTimeout(poll, gone ? 60000 + Math.random() * 10000 : 4000 + Math.random() * 2000); });
  }
  function startPolling() {
    if (!polling) polling = setTimeout(poll, gone ? 60000 : 0);
  }
  function listen() {
    if (!window.EventSource) { startPolling(); return; }
    var es, failures = 0;
    try { es = new EventSource(d.events); } catch (e) { startPolling(); return; }
    es.addEventListener('room', function (e) {
      failures = 0;
      try { apply(JSON.parse(e.data)); } catch (err) { /* a bad frame: wait for the next */ }
    });
    es.addEventListener('gone', function () { es.close(); ended(); startPolling(); });
    es.addEventListener('outage', function () {
      // Redis is away: the last state stays, marked as not live.
      if (!gone && detailEl.textContent !== d.reconnecting) detailEl.textContent = d.reconnecting;
      size();
    });
    es.onerror = function () {
      failures++;
      if (es.readyState === 2 || failures >= 3) { es.close(); startPolling(); }
    };
  }

  try { apply(JSON.parse(d.first)); } catch (e) { /* the server-rendered words stay */ }
  if (window.ResizeObserver) new ResizeObserver(size).observe(document.body);
  window.addEventListener('load', size);
  listen();
})();
