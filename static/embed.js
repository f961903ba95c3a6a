/* The waiting room's widget: <script src="https://room.example/static/embed.js" data-room="drop" async></script>
   inserts the room's live widget after itself, passes the page's utm_* and ad click ids to the room's link,
   and sizes the frame to its content. On a page whose origin the room does not list among its embed origins
   the browser refuses to frame the widget: the frame loads without the widget's first message, and a plain
   link to the room takes its place, with a console warning that says what to add. No dependencies. */
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || !script.src) return;
  var room = script.getAttribute('data-room') || '';
  if (!/^[a-z0-9-]{1,64}$/.test(room)) return;
  var origin = new URL(script.src, location.href).origin;
  var carried = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'gclid', 'fbclid', 'ttclid'];
  var page = new URLSearchParams(location.search);
  var q = new URLSearchParams();
  carried.forEach(function (k) {
    var v = page.get(k);
    if (v) q.set(k, v.slice(0, 512));
  });
  var ko = /^ko\b/i.test(document.documentElement.lang || navigator.language || '');
  var f = document.createElement('iframe');
  f.src = origin + '/r/' + room + '/widget' + (q.toString() ? '?' + q.toString() : '');
  f.title = script.getAttribute('data-title') || (ko ? '실시간 판매 현황' : 'Live sale status');
  f.setAttribute('scrolling', 'no');
  f.style.border = '0';
  f.style.width = '100%';
  f.style.height = '140px';
  f.style.display = 'block';
  f.style.colorScheme = 'normal';
  script.parentNode.insertBefore(f, script.nextSibling);
  // The widget posts its size as it starts, before its frame's load event;
  // a frame refused by frame-ancestors loads an error page that posts
  // nothing. A short grace after the load covers a slow delivery.
  var heard = false;
  function refused() {
    if (heard || !f.parentNode) return;
    var a = document.createElement('a');
    a.href = origin + '/r/' + room + (q.toString() ? '?' + q.toString() : '');
    a.className = 'wr-widget-link';
    a.textContent = ko ? '판매 페이지로 가기' : 'Go to the sale';
    f.parentNode.replaceChild(a, f);
    console.warn('waitingroom widget: room "' + room + '" does not list ' + location.origin +
      ' among its embed origins, so the browser refused to frame the live widget; a plain link is shown instead. ' +
      'Add ' + location.origin + ' to the room\'s embed origins (console: the room\'s Embed page) to show the widget.');
  }
  f.addEventListener('load', function () { if (!heard) setTimeout(refused, 3000); });
  window.addEventListener('message', function (e) {
    if (e.origin !== origin || e.source !== f.contentWindow) return;
    var d = e.data;
    if (!d || d.type !== 'wr-widget-size') return;
    heard = true;
    var h = Math.ceil(Number(d.height));
    if (h > 0 && h <= 2000) f.style.height = h + 'px';
  });
})();
