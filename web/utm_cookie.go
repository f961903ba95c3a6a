package web

import (
	"net/http"
	"net/url"

	"waitingroom/server/order"
	"waitingroom/server/queue"
)

// utmCookie remembers the campaign a buyer joined a room by, so that their
// order counts under it even when the page they buy from was opened
// without the link's utm_* query string (a bookmark, a new tab).
//
// Attribution is not a security boundary: a buyer can already put any
// UTM values in the link they join by or in the order itself. The cookie
// is first-party, HttpOnly and scoped to the room's paths, its values are
// checked again (validUTM) when read, and its size is bounded.
const utmCookie = "wr_utm"

// maxUTMCookie bounds the cookie's encoded value, in bytes; a campaign
// whose encoding is longer is not remembered.
const maxUTMCookie = 1024

// utmCookies returns the cookies that remember c for room: one for the
// room's pages (the order form posts to /r/{room}/order) and one for its
// API (POST /api/rooms/{room}/orders). It returns nil when there is
// nothing to remember (a direct join, values that are not valid) or when
// r already carries a remembered campaign: a room counts a visitor's
// first join, so the first campaign stays.
func utmCookies(r *http.Request, room string, c queue.Campaign) []*http.Cookie {
	if c.Direct() || c == queue.OtherCampaign || c.Source == "" ||
		!validUTM(order.UTM{Source: c.Source, Medium: c.Medium, Campaign: c.Campaign}) {
		return nil
	}
	if _, ok := utmFromCookie(r); ok {
		return nil
	}
	v := url.Values{"utm_source": {c.Source}}
	if c.Medium != "" {
		v.Set("utm_medium", c.Medium)
	}
	if c.Campaign != "" {
		v.Set("utm_campaign", c.Campaign)
	}
	enc := v.Encode()
	if len(enc) > maxUTMCookie {
		return nil
	}
	secure := r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
	var out []*http.Cookie
	for _, path := range []string{"/r/" + room, "/api/rooms/" + room} {
		out = append(out, &http.Cookie{Name: utmCookie, Value: enc, Path: path, MaxAge: int(cookieMaxAge.Seconds()),
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure})
	}
	return out
}

// setUTMCookies sets utmCookies(r, room, c) on w.
func setUTMCookies(w http.ResponseWriter, r *http.Request, room string, c queue.Campaign) {
	for _, ck := range utmCookies(r, room, c) {
		http.SetCookie(w, ck)
	}
}

// utmFromCookie returns the campaign remembered in r's wr_utm cookie, if
// it holds a valid one.
func utmFromCookie(r *http.Request) (order.UTM, bool) {
	ck, err := r.Cookie(utmCookie)
	if err != nil || ck.Value == "" || len(ck.Value) > maxUTMCookie {
		return order.UTM{}, false
	}
	v, err := url.ParseQuery(ck.Value)
	if err != nil {
		return order.UTM{}, false
	}
	u := order.UTM{Source: v.Get("utm_source"), Medium: v.Get("utm_medium"), Campaign: v.Get("utm_campaign")}
	if u.Source == "" || !validUTM(u) {
		return order.UTM{}, false
	}
	return u, true
}

// orderUTM returns u, or the campaign remembered in r's wr_utm cookie when
// the order carries no UTM value at all: an explicit UTM always wins.
func orderUTM(r *http.Request, u order.UTM) order.UTM {
	if u != (order.UTM{}) {
		return u
	}
	if c, ok := utmFromCookie(r); ok {
		return c
	}
	return u
}
