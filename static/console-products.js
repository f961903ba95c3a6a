// The console's products: a product image that does not load (an address
// that answers no image) is replaced by words that say so, from the
// image's data-broken, rather than shown as a broken picture.
(function () {
  "use strict";
  var broken = function (img) {
    var say = document.createElement("span");
    say.className = "img-broken";
    say.setAttribute("role", "status");
    say.textContent = img.getAttribute("data-broken");
    img.replaceWith(say);
  };
  document.querySelectorAll("img[data-broken]").forEach(function (img) {
    if (img.complete && img.naturalWidth === 0) {
      broken(img);
      return;
    }
    img.addEventListener("error", function () { broken(img); });
  });
})();
