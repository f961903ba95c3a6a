/* The waiting room's widget: <script src="https://room.example/static/embed.js" data-room="drop" async></script>
   inserts the room's live widget after itself, passes the page's utm_* and ad click ids to the room's link,
   and sizes the frame to its content. No dependencies. */
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
  window.addEventListener('message', function (e) {
    if (e.origin !== origin || e.source !== f.contentWindow) return;
    var d = e.data;
    if (!d || d.type !== 'wr-widget-size') return;
    var h = Math.ceil(Number(d.height));
    if (h > 0 && h <= 2000) f.style.height = h + 'px';
  });
})();
