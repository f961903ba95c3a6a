package gatemode

import (
	"bytes"
	"net/http"

	"waitingroom/views"
)

// page answers one of the proxy's own pages on the shop's host, in the
// visitor's language: status in words, a link to room when set, and
// Retry-After on 503. Its stylesheet comes from the waiting room's host.
func (p *Proxy) page(w http.ResponseWriter, r *http.Request, status int, roomName string) {
	t := views.ProxyTextFor(views.Negotiate(r.Header.Get("Accept-Language")))
	base := p.roomBase(r)
	pg := views.ProxyPage{Status: status, T: t, CSS: base + p.gt.d.CSS}
	switch status {
	case http.StatusBadGateway:
		pg.Heading, pg.Message, pg.Retry = t.OriginDownTitle, t.OriginDown, r.Method == http.MethodGet
	case http.StatusServiceUnavailable:
		pg.Heading, pg.Message, pg.Retry = t.UnavailableTitle, t.Unavailable, r.Method == http.MethodGet
		w.Header().Set("Retry-After", "2")
	case http.StatusForbidden:
		pg.Heading, pg.Message = t.RefusedTitle, t.Refused
	case http.StatusBadRequest:
		pg.Heading, pg.Message = t.BadAddressTitle, t.BadAddress
	default:
		pg.Heading, pg.Message = t.NotHereTitle, t.NotHere
	}
	if roomName != "" {
		pg.RoomURL = base + "/r/" + roomName
	}
	var buf bytes.Buffer
	if err := views.Proxy(pg).Render(r.Context(), &buf); err != nil {
		p.log.Error("proxy: render", "status", status, "err", err)
		http.Error(w, http.StatusText(status), status)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", ShopPagePolicy(base))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Accept-Language")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// ShopPagePolicy is the CSP of a page the waiting room serves on the
// shop's host (the proxy's pages, the enter callback's errors): its
// stylesheet and images come from base, the waiting room's origin.
func ShopPagePolicy(base string) string {
	return "default-src 'none'; style-src " + base + "; img-src " + base + " data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}
