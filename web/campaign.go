package web

import (
	"cmp"
	"log/slog"
	"net/http"
	"net/url"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/web/request"
)

// utmCookie remembers the campaign a buyer joined a room by, with the
// link's utm_term, utm_content and ad click ids, so that their order
// counts under it even when the page they buy from was opened without the
// link's query string (a bookmark, a new tab).
//
// Attribution is not a security boundary: a buyer can already put any
// UTM values in the link they join by or in the order itself. The cookie
// is first-party, HttpOnly and scoped to the room's paths, its values are
// checked again (request.ValidUTM) when read, and its size is bounded.
const utmCookie = "wr_utm"

// maxUTMCookie bounds the cookie's encoded value, in bytes (under the
// 4 KiB browsers keep of a cookie); attribution whose encoding is longer
// is not remembered.
const maxUTMCookie = 3500

// utmCookies returns the cookies that remember the attribution of r's
// join for room: the campaign c (with the link's utm_term and
// utm_content) when it is a valid one with a utm_source, and the link's
// valid ad click ids. There is one cookie for the room's pages (the order
// form posts to /r/{room}/order) and one for its API (POST
// /api/rooms/{room}/orders). It returns nil when there is nothing to
// remember (a direct join without click ids, values that are not valid)
// or when r already carries a remembered campaign: a room counts a
// visitor's first join, so the first campaign stays. Remembered click ids
// without a campaign do not stay in the way of a join by a campaign: it is
// remembered with them (the join's own click ids first).
func utmCookies(r *http.Request, room string, c queue.Campaign) []*http.Cookie {
	prev, had := utmFromCookie(r)
	if had && prev.Source != "" {
		return nil
	}
	from := r.Form // the join form's fields and query string
	if from == nil {
		from = r.URL.Query()
	}
	link := request.AttributionOf(from)
	u := order.UTM{Gclid: link.Gclid, Fbclid: link.Fbclid, Ttclid: link.Ttclid}
	if !c.Direct() && c != queue.OtherCampaign && c.Source != "" &&
		request.ValidUTM(order.UTM{Source: c.Source, Medium: c.Medium, Campaign: c.Campaign}) {
		u.Source, u.Medium, u.Campaign, u.Term, u.Content = c.Source, c.Medium, c.Campaign, link.Term, link.Content
	}
	if had {
		if u.Source == "" {
			return nil // nothing new: the click ids first remembered stay
		}
		u.Gclid, u.Fbclid, u.Ttclid = cmp.Or(u.Gclid, prev.Gclid), cmp.Or(u.Fbclid, prev.Fbclid), cmp.Or(u.Ttclid, prev.Ttclid)
	}
	if u == (order.UTM{}) {
		return nil
	}
	v := url.Values{}
	for _, kv := range request.AttributionValues(u) {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	enc := v.Encode()
	if len(enc) > maxUTMCookie {
		return nil
	}
	secure := r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"
	var out []*http.Cookie
	for _, path := range []string{"/r/" + room, "/api/rooms/" + room} {
		out = append(out, &http.Cookie{Name: utmCookie, Value: enc, Path: path, MaxAge: int(request.CookieMaxAge.Seconds()),
			HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure})
	}
	return out
}

// setUTMCookies sets utmCookies(r, room, c) on w.
func setUTMCookies(w http.ResponseWriter, r *http.Request, room string, c queue.Campaign) {
	if c.Direct() && r.Form == nil && r.URL.RawQuery == "" {
		return // no link to remember: utmCookies would find nothing
	}
	for _, ck := range utmCookies(r, room, c) {
		http.SetCookie(w, ck)
	}
}

// utmFromCookie returns the attribution remembered in r's wr_utm cookie,
// if it holds valid attribution.
func utmFromCookie(r *http.Request) (order.UTM, bool) {
	ck, err := r.Cookie(utmCookie)
	if err != nil || ck.Value == "" || len(ck.Value) > maxUTMCookie {
		return order.UTM{}, false
	}
	v, err := url.ParseQuery(ck.Value)
	if err != nil {
		return order.UTM{}, false
	}
	var u order.UTM
	for _, k := range request.UTMFields {
		request.SetAttribution(&u, k, v.Get(k))
	}
	if u == (order.UTM{}) || !request.ValidUTM(u) {
		return order.UTM{}, false
	}
	return u, true
}

// orderUTM returns u, or the attribution remembered in r's wr_utm cookie
// when the order carries none at all: an explicit UTM always wins.
func orderUTM(r *http.Request, u order.UTM) order.UTM {
	if u != (order.UTM{}) {
		return u
	}
	if c, ok := utmFromCookie(r); ok {
		return c
	}
	return u
}

// campaignOf returns the campaign named by v's utm_source, utm_medium and
// utm_campaign. Attribution never decides who gets in line: when one of
// the values is not a valid UTM value (the order path's rule, request.ValidUTM:
// too long, not UTF-8, control or bidirectional formatting characters) the
// join counts under queue.OtherCampaign, and the buyer joins all the same.
func (s *Server) campaignOf(v url.Values) queue.Campaign {
	c := queue.Campaign{Source: v.Get("utm_source"), Medium: v.Get("utm_medium"), Campaign: v.Get("utm_campaign")}
	if request.ValidUTM(order.UTM{Source: c.Source, Medium: c.Medium, Campaign: c.Campaign}) {
		return c
	}
	if s.log != nil {
		// The values themselves stay out of the log: they are not valid text.
		s.log.Debug("join with UTM values that are not valid: counted as (other)",
			slog.Int("source_bytes", len(c.Source)), slog.Int("medium_bytes", len(c.Medium)),
			slog.Int("campaign_bytes", len(c.Campaign)))
	}
	return queue.OtherCampaign
}
