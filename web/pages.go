package web

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/gatemode"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

func (s *Server) pageAssets() views.Assets {
	return views.Assets{CSS: s.assets.url("app.css"), JS: s.assets.url("app.js"), Solver: s.assets.url("vendor/altcha/worker.js")}
}

func messages(r *http.Request) views.Messages {
	return views.For(views.Negotiate(r.Header.Get("Accept-Language")))
}

// renderedPage is one room page in one language, ready to send.
type renderedPage struct {
	body, gz []byte
	etag     string
	lang     string
	expires  time.Time
}

// pageCache keeps each room page for a second, so that a page-load burst
// that reaches the origin (no CDN in front) costs one render and one Redis
// read per room, language and second. It also keeps what each room's other
// pages need of its settings (roomFace), so that a flood of refusals costs
// no Redis read.
type pageCache struct {
	mu    sync.Mutex
	pages map[string]*renderedPage
	faces map[string]roomFace
}

const (
	pageCacheTTL = time.Second
	faceCacheTTL = 10 * time.Second
	// maxCachedPages bounds each of pageCache's maps.
	maxCachedPages = 10000
)

// roomPage serves GET /r/{room}: the same bytes for every visitor, no
// cookie, no ticket, cacheable by a CDN. A request that names neither
// Korean nor English (a crawler's) gets the room's default language. The
// link preview's absolute URLs take PUBLIC_URL, else the request's host
// when requestOrigin trusts it: then the host is part of the cache key.
func (s *Server) roomPage(w http.ResponseWriter, r *http.Request) {
	s.metrics.PageRequests.Inc()
	name := r.PathValue("room")
	lang, named := views.Named(r.Header.Get("Accept-Language"))
	if !room.ValidName(name) {
		t := views.For(lang)
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusBadRequest, Heading: t.TitleNotFound, Message: t.BadRoomName})
		return
	}
	langKey := lang
	if !named {
		langKey = "default"
	}
	// A host that may not be trusted gets the page without absolute URLs,
	// under one key: random Hosts can neither poison nor grow the cache.
	base, trusted := s.requestOrigin(r)
	if !trusted {
		base = ""
	}
	key := name + "\x00" + langKey + "\x00" + base
	now := s.clock.Now()
	s.pages.mu.Lock()
	p := s.pages.pages[key]
	s.pages.mu.Unlock()
	if p == nil || now.After(p.expires) {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		set, err := s.rooms.Room(ctx, name)
		if err != nil {
			s.htmlFail(w, r, err, name)
			return
		}
		s.rememberFace(name, faceOf(set, now))
		if !named {
			lang = set.DefaultLanguage
		}
		t := views.For(lang).WithPass(passTTL(set))
		var buf bytes.Buffer
		page := views.RoomPage{Room: name, Title: set.Title, T: t, Assets: s.roomAssets(set.Favicon),
			Products: s.viewProducts(r.WithContext(ctx), name, set.MaxPerBuyer), ShopURL: set.ShopURL, MaxPerBuyer: set.MaxPerBuyer,
			Brand: brandOf(name, set.Title, set.ShopURL, set.Branding), Handoff: s.handoffShop(set), Access: joinAccess(set)}
		if page.Handoff != "" {
			page.Products = nil // the shop sells: no order form
		}
		page.Assets.Preview = s.linkPreview(ctx, base, name, set, t, now)
		if err := views.Room(page).Render(ctx, &buf); err != nil {
			s.htmlFail(w, r, err, name)
			return
		}
		sum := sha256.Sum256(buf.Bytes())
		p = &renderedPage{body: buf.Bytes(), gz: gzipBytes(buf.Bytes()), lang: t.Lang,
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`, expires: now.Add(pageCacheTTL)}
		s.pages.mu.Lock()
		if len(s.pages.pages) > maxCachedPages {
			clear(s.pages.pages)
		}
		s.pages.pages[key] = p
		s.pages.mu.Unlock()
	}
	response.HTMLHeaders(w)
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=10, stale-while-revalidate=30")
	h.Set("Vary", "Accept-Language, Accept-Encoding")
	h.Set("Content-Language", p.lang)
	h.Set("ETag", p.etag)
	if r.Header.Get("If-None-Match") == p.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(w, r, p.body, p.gz)
}

// queryUTM returns the valid attribution fields (utm_* and the click
// ids) of r's query string, in request.UTMFields order; the others are dropped.
func queryUTM(r *http.Request) []views.Field { return utmOf(r.URL.Query()) }

// utmOf returns the valid attribution fields of v, in request.UTMFields order.
func utmOf(v url.Values) []views.Field {
	var out []views.Field
	for _, kv := range request.AttributionValues(request.AttributionOf(v)) {
		if kv[1] != "" {
			out = append(out, views.Field{Name: kv[0], Value: kv[1]})
		}
	}
	return out
}

// withUTM returns path with utm's fields as its query string.
func withUTM(path string, utm []views.Field) string {
	if len(utm) == 0 {
		return path
	}
	q := url.Values{}
	for _, f := range utm {
		q.Set(f.Name, f.Value)
	}
	return path + "?" + q.Encode()
}

// join serves the no-JS "Join the line" form (POST /r/{room}/join, and
// POST /r/{room}, where the room page's form posts with the query string
// it was opened with): it enters, sets wr_vid and sends the browser to
// its status page, carrying the utm_* fields along. In a room that asks a
// proof of work, a visitor without a place brings one (field altcha, or a
// wait token in field wait), or is answered a short wait (wait.go).
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	name, _, ok := s.postedRoomForm(w, r, func(t views.Messages) string { return t.FormInvalid })
	if !ok {
		return
	}
	camp := s.campaignOf(r.Form) // the form's fields, then the query string's
	if !s.pageEnterAllowed(w, r, name) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	id, isNew, err := s.visitorOrNew(r)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	// The form carries a proof of work: in its altcha field (the widget's
	// payload) when a script solved one, or a wait token (wait.go).
	// The room's identity cookie (set by its sign-in link) makes the join
	// its identity's: visitorOrNew read its visitor.
	_, line, identified := request.IdentityOf(r, s.signer, name, s.clock.Now())
	if s.fromStaff(ctx, r, name) {
		// Staff skip the line: a pass of their own, at once. With every
		// slot held they join the line as any buyer does.
		_, err := s.letIn(ctx, r, name, id, "")
		if err == nil {
			if isNew {
				s.setVisitorCookie(w, r, id)
			}
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, withUTM("/r/"+name+"/status", queryUTM(r)), http.StatusSeeOther)
			return
		}
		if !errors.Is(err, queue.ErrRoomFull) {
			s.htmlFail(w, r, err, name)
			return
		}
	}
	wt, id, redeemed, err := s.joinProved(ctx, r, name, id, isNew, camp, queue.Credentials{Identity: identified, Line: line})
	if err != nil {
		if isNew && redeemed {
			s.setVisitorCookie(w, r, id) // the code is held for them
		}
		s.joinRefused(ctx, w, r, name, wt, s.withSignIn(ctx, name, err))
		return
	}
	if isNew {
		s.setVisitorCookie(w, r, id)
	}
	setUTMCookies(w, r, name, camp)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, withUTM("/r/"+name+"/status", queryUTM(r)), http.StatusSeeOther)
}

// secondsUntil returns the whole seconds from now (ms) to at (ms), at
// least 0, or nil when at is unknown.
func secondsUntil(at *int64, now int64) *int64 {
	if at == nil {
		return nil
	}
	d := max((*at-now+999)/1000, 0)
	return &d
}

// passTTL is how long set's passes are held, in seconds.
func passTTL(set room.Settings) int { return cmp.Or(set.TokenTTLSeconds, room.DefaultTokenTTL) }

// passOverFor is how long after a pass's end its status page still says
// that it ran out (rather than only that the visitor is not in line).
const passOverFor = time.Hour

// passOver reports whether r is the ready page's refresh at the end of a
// pass (views.PassOverParam, the end in unix ms) that came at or after
// that end, now (unix ms), and less than passOverFor later.
func passOver(r *http.Request, now int64) bool {
	v := r.URL.Query().Get(views.PassOverParam)
	if len(v) > 16 {
		return false
	}
	end, err := strconv.ParseInt(v, 10, 64)
	return err == nil && end > 0 && now >= end && now-end < passOverFor.Milliseconds()
}

// status serves the per-visitor page for browsers without JavaScript; it
// refreshes itself at the polling tier and is never cached.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	t := s.roomText(r, roomOfPath(r.URL.Path))
	if !room.ValidName(name) {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusBadRequest, Heading: t.TitleNotFound, Message: t.BadRoomName})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	id, known := s.visitorID(r)
	if !known {
		id = anonymous
	}
	p, err := s.q.Position(ctx, name, id)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	now := p.ServerTime
	if now == 0 {
		now = s.clock.Now().UnixMilli()
	}
	var passExpires *int64
	if p.PassExpiresAt > 0 {
		passExpires = &p.PassExpiresAt
	}
	if _, named := views.Named(r.Header.Get("Accept-Language")); !named {
		t = views.For(set.DefaultLanguage) // fresher than the face's
	}
	t = t.WithPass(passTTL(set))
	page := views.StatusPage{Room: name, Title: set.Title, T: t, Assets: s.roomAssets(set.Favicon), Access: joinAccess(set),
		Status: string(p.Status), Rank: p.Rank, Ticket: p.Ticket, Waiting: p.Waiting, ETA: p.EstimatedWaitSeconds,
		Refresh: p.PollingIntervalSeconds, SoldOut: p.SoldOut, Paused: p.Paused || set.Paused, Phase: p.Phase,
		OpensIn: secondsUntil(p.OpensAt, now), PassLeft: secondsUntil(passExpires, now),
		PassEndsAt: p.PassExpiresAt, PassOver: passOver(r, now),
		RankUpReason: p.RankUpReason, UTM: queryUTM(r), ShopURL: set.ShopURL, MaxPerBuyer: set.MaxPerBuyer,
		Brand: brandOf(name, set.Title, set.ShopURL, set.Branding), Handoff: s.handoffShop(set)}
	if page.Paused || p.Status == queue.StatusPrequeued {
		page.ETA = nil // no honest estimate while nobody is let in
	}
	if page.Refresh <= 0 {
		page.Refresh = 5
	}
	if p.EntryToken != nil {
		page.Token = *p.EntryToken
		if page.Handoff == "" {
			page.Products = s.viewProducts(r.WithContext(ctx), name, set.MaxPerBuyer)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusOK, views.Status(page))
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	s.renderWith(w, r, status, c, nil)
}

// renderWith is render with headers changing the page's headers (a CSP
// of its own) after response.HTMLHeaders set them.
func (s *Server) renderWith(w http.ResponseWriter, r *http.Request, status int, c templ.Component, headers func(http.Header)) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.Error("render", "path", r.URL.Path, "err", err)
		response.WriteError(w, http.StatusInternalServerError, "internal", "The page could not be rendered.")
		return
	}
	response.HTMLHeaders(w)
	if headers != nil {
		headers(w.Header())
	}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// htmlPage answers the error page p, in the visitor's language, linking
// back to the room's shop.
func (s *Server) htmlPage(w http.ResponseWriter, r *http.Request, p views.ErrorPage) {
	s.htmlPageFrom(w, r, p, "")
}

// htmlPageFrom is htmlPage for a page served on another host than the
// waiting room's (the shop's, gate mode): when base, the waiting room's
// origin, is set, the page's stylesheet, icon and logo are loaded from it
// (a path on the shop's host would not be found), as the proxy's pages'.
func (s *Server) htmlPageFrom(w http.ResponseWriter, r *http.Request, p views.ErrorPage, base string) {
	if p.Status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "2")
	}
	w.Header().Set("Cache-Control", "no-store")
	// The page is in the language, and has the icon, of the room of its
	// address, even when it offers no way back to it.
	of := roomOfPath(r.URL.Path)
	f := s.roomFace(r.Context(), of)
	p.T, p.Assets = s.roomText(r, of), s.roomAssets(f.favicon)
	if p.ShopURL == "" && p.Room != "" {
		p.ShopURL = s.roomFace(r.Context(), p.Room).shopURL
	}
	if p.Brand == (views.Brand{}) {
		p.Brand = s.brandFor(r.Context(), p.Room)
	}
	if base == "" {
		s.render(w, r, p.Status, views.Error(p))
		return
	}
	if p.Assets.Icon == "" {
		p.Assets.Icon = views.DefaultIcon
	}
	p.Assets.CSS, p.Assets.Icon, p.Brand.Logo = onOrigin(base, p.Assets.CSS), onOrigin(base, p.Assets.Icon), onOrigin(base, p.Brand.Logo)
	s.renderWith(w, r, p.Status, views.Error(p), func(h http.Header) {
		h.Set("Content-Security-Policy", gatemode.ShopPagePolicy(base))
	})
}

// onOrigin is path (a path on this server, "/…") on base; anything else
// (an absolute URL, a data: URL, "") is left as it is.
func onOrigin(base, path string) string {
	if strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "//") {
		return base + path
	}
	return path
}

// htmlError answers an HTML error page whose heading says status in words.
func (s *Server) htmlError(w http.ResponseWriter, r *http.Request, status int, msg, roomName string, retry bool) {
	s.htmlPage(w, r, views.ErrorPage{Status: status, Message: msg, Room: roomName, Retry: retry})
}

// htmlFail maps an engine error onto an HTML error page, as fail does for
// JSON.
func (s *Server) htmlFail(w http.ResponseWriter, r *http.Request, err error, roomName string) {
	s.respond().HTML(w, r, err, response.PageOptions{Room: roomName})
}
