// The console's branding page: a colour picker beside each accent colour's
// field, kept in step with what is typed there. Without JavaScript the
// fields are plain text, and the server checks them either way.
(function () {
  "use strict";
  var colour = /^#[0-9a-fA-F]{6}$/;
  document.querySelectorAll("input[data-picker]").forEach(function (text) {
    var pick = document.getElementById(text.getAttribute("data-picker"));
    if (!pick) return;
    var follow = function () { if (colour.test(text.value)) pick.value = text.value.toLowerCase(); };
    follow();
    pick.hidden = false;
    text.addEventListener("input", follow);
    pick.addEventListener("input", function () { text.value = pick.value; });
  });
})();
