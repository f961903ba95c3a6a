package web

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/response"
)

// handoffShop is the shop's name that a READY page offers to continue to,
// or "" when room set sends its buyers to no shop (or gate mode is off):
// then the page has its order form.
func (s *Server) handoffShop(set room.Settings) string {
	if s.gates == nil || s.passKeys == nil {
		return ""
	}
	if g := gateSettings(set); g.on {
		return g.shop
	}
	return ""
}

// handoffPolicy is the hand-off page's CSP: the page's own, but its one
// form may post to the shop's origin only.
func handoffPolicy(audience string) string {
	return strings.Replace(response.ContentSecurityPolicy, "form-action 'self'", "form-action "+audience, 1)
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
	g := gateSettings(set)
	if !g.on || s.gates == nil || s.passKeys == nil {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusNotFound, Heading: t.TitleNotFound, Message: views.GateTextFor(t.Lang).Off, Room: name})
		return
	}
	visitor, ok := s.visitorID(r)
	tok := r.PostForm.Get("entry_token")
	if !ok || tok == "" {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusUnauthorized, Heading: t.Expired, Message: t.ErrTokenGone, Room: name, Rejoin: true})
		return
	}
	jti, err := randomID(16)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	exp, err := s.gates.MintPass(ctx, name, visitor, tok, jti)
	switch {
	case errors.Is(err, queue.ErrTokenInvalid), errors.Is(err, queue.ErrTokenUsed), errors.Is(err, queue.ErrTokenInUse), errors.As(err, new(*queue.WaitError)):
		s.htmlFail(w, r, err, name)
		return
	case err != nil:
		s.storeDown.failed(time.Now())
		s.htmlFail(w, r, err, name)
		return
	}
	now := time.Now()
	s.storeDown.ok(now)
	iss, _ := s.requestOrigin(r)
	compact, err := s.passKeys.Sign(pass.Claims{Room: name, Subject: queue.Subject(s.gates.Namespace(), visitor), ID: jti, Audience: g.audience,
		Issuer: iss, IssuedAt: now, Expiry: exp})
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	s.gateRooms.remember(name, g, now)
	w.Header().Set("Cache-Control", "no-store")
	page := views.HandoffPage{Title: set.Title, Shop: g.shop, Action: g.audience + "/_waitingroom/enter", Pass: compact, Next: g.next,
		T: t, Assets: s.roomAssets(set.Favicon), Script: s.assets.url("handoff.js"), Brand: brandOf(name, set.Title, set.ShopURL, set.Branding)}
	s.renderWith(w, r, http.StatusOK, views.Handoff(page), func(h http.Header) {
		h.Set("Content-Security-Policy", handoffPolicy(g.audience))
		h.Set("Referrer-Policy", "no-referrer")
	})
}
