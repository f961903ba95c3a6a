package response

import "net/http"

// ContentSecurityPolicy allows no inline script: a nonce would make the
// shared page differ per visitor and break the edge cache. No page may be
// framed (frame-ancestors), so that no other site can overlay it. Product
// images may come from any https host (order.Product.ImageURL). The room
// page's proof-of-work solver is a same-origin worker file
// (static/vendor/altcha/worker.js), which script-src 'self' allows (no
// worker-src, no blob:).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// HTMLHeaders sets the type and the security headers of an HTML page.
func HTMLHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY") // for browsers without frame-ancestors
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
}
