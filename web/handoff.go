package web

import (
	"context"
	"net/http"

	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/gatemode"
)

// handoffShop is the shop's name that a READY page offers to continue to,
// or "" when room set sends its buyers to no shop (or gate mode is off):
// then the page has its order form.
func (s *Server) handoffShop(set room.Settings) string {
	t, _ := s.gate.Target(set)
	return t.Shop
}

// handoff serves POST /r/{room}/pass, the READY form of a room with a
// targetURL: it mints a single-use pass for the visitor's entry token,
// signs it, and answers a page that posts it to the shop's callback at
// once. The pass is never logged, never in a URL, never in a Referer.
func (s *Server) handoff(w http.ResponseWriter, r *http.Request) {
	name, t, ok := s.postedRoomForm(w, r, func(t views.Messages) string { return t.FormInvalid })
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	g, on := s.gate.Target(set)
	if !on {
		s.htmlFail(w, r, room.ErrNoShop, name)
		return
	}
	visitor, ok := s.visitorID(r)
	tok := r.PostForm.Get("entry_token")
	if !ok || tok == "" {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusUnauthorized, Heading: t.Expired, Message: t.ErrTokenGone, Room: name, Rejoin: true})
		return
	}
	iss, _ := s.requestOrigin(r)
	compact, err := s.gate.MintPass(ctx, name, visitor, tok, iss, g)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	page := views.HandoffPage{Title: set.Title, Shop: g.Shop, Action: g.Audience + "/_waitingroom/enter", Pass: compact, Next: g.Next,
		T: t, Assets: s.roomAssets(set.Favicon), Script: s.assets.url("handoff.js"), Brand: brandOf(name, set.Title, set.ShopURL, set.Branding)}
	s.renderWith(w, r, http.StatusOK, views.Handoff(page), func(h http.Header) {
		h.Set("Content-Security-Policy", gatemode.HandoffPolicy(g.Audience))
		h.Set("Referrer-Policy", "no-referrer")
	})
}
