// Console dashboard: follow the room's SSE stream and put each second's
// fragment (rendered and escaped by the server) in #dash-live. Plain JS,
// no dependencies. Without it the page shows the room as it was at load,
// with a Reload link.
(function () {
  "use strict";
  var live = document.getElementById("dash-live");
  var badge = document.getElementById("dash-status");
  if (!live || !live.dataset.src || !window.EventSource) return;
  var es = new EventSource(live.dataset.src);
  es.onopen = function () { if (badge) badge.hidden = false; };
  es.onmessage = function (e) {
    live.innerHTML = e.data;
    if (badge) badge.hidden = false;
  };
  // The browser reconnects by itself after the server's retry delay; a
  // closed stream (signed out, room gone) stays closed: Reload says why.
  es.onerror = function () { if (badge) badge.hidden = true; };
  window.addEventListener("pagehide", function () { es.close(); });
})();
