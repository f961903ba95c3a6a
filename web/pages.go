package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/a-h/templ"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
)

// contentSecurityPolicy allows no inline script: a nonce would make the
// shared page differ per visitor and break the edge cache. No page may be
// framed (frame-ancestors), so that no other site can overlay it.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func htmlHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY") // for browsers without frame-ancestors
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
}

func (s *Server) pageAssets() views.Assets {
	return views.Assets{CSS: s.assets.url("app.css"), JS: s.assets.url("app.js")}
}

func messages(r *http.Request) views.Messages {
	return views.For(views.Negotiate(r.Header.Get("Accept-Language")))
}

// renderedPage is one room page in one language, ready to send.
type renderedPage struct {
	body, gz []byte
	etag     string
	expires  time.Time
}

// pageCache keeps each room page for a second, so that a page-load burst
// that reaches the origin (no CDN in front) costs one render and one Redis
// read per room, language and second.
type pageCache struct {
	mu    sync.Mutex
	pages map[string]*renderedPage
}

const pageCacheTTL = time.Second

// roomPage serves GET /r/{room}: the same bytes for every visitor, no
// cookie, no ticket, cacheable by a CDN.
func (s *Server) roomPage(w http.ResponseWriter, r *http.Request) {
	s.metrics.PageRequests.Inc()
	name := r.PathValue("room")
	if !room.ValidName(name) {
		s.htmlError(w, r, http.StatusBadRequest, "Room names are 1 to 64 characters of a-z, 0-9 and '-'.", "", false)
		return
	}
	t := messages(r)
	key := name + "\x00" + t.Lang
	now := time.Now()
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
		var buf bytes.Buffer
		page := views.RoomPage{Room: name, Title: set.Title, T: t, Assets: s.pageAssets(), Products: s.viewProducts(r.WithContext(ctx), name)}
		if err := views.Room(page).Render(ctx, &buf); err != nil {
			s.htmlFail(w, r, err, name)
			return
		}
		sum := sha256.Sum256(buf.Bytes())
		p = &renderedPage{body: buf.Bytes(), gz: gzipBytes(buf.Bytes()),
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`, expires: now.Add(pageCacheTTL)}
		s.pages.mu.Lock()
		if len(s.pages.pages) > 10000 {
			clear(s.pages.pages)
		}
		s.pages.pages[key] = p
		s.pages.mu.Unlock()
	}
	htmlHeaders(w)
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=10, stale-while-revalidate=30")
	h.Set("Vary", "Accept-Language, Accept-Encoding")
	h.Set("Content-Language", t.Lang)
	h.Set("ETag", p.etag)
	if r.Header.Get("If-None-Match") == p.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(w, r, p.body, p.gz)
}

// join serves the no-JS "Join the line" form: it enters, sets wr_vid and
// sends the browser to its status page.
func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if !room.ValidName(name) {
		s.htmlError(w, r, http.StatusBadRequest, "Room names are 1 to 64 characters of a-z, 0-9 and '-'.", "", false)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		s.htmlError(w, r, http.StatusRequestEntityTooLarge, "The form is too large.", name, false)
		return
	}
	if !s.enterAllowed(r) {
		w.Header().Set("Retry-After", "2")
		s.htmlError(w, r, http.StatusTooManyRequests, "Too many attempts from your network. Please wait a moment and retry.", name, true)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	id, isNew, err := s.visitorOrNew(r)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	if _, err := s.q.EnterFrom(ctx, name, id, s.enterNet(r)); err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	if isNew {
		s.setVisitorCookie(w, r, id)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/r/"+name+"/status", http.StatusSeeOther)
}

// status serves the per-visitor page for browsers without JavaScript; it
// refreshes itself at the polling tier and is never cached.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if !room.ValidName(name) {
		s.htmlError(w, r, http.StatusBadRequest, "Room names are 1 to 64 characters of a-z, 0-9 and '-'.", "", false)
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
	page := views.StatusPage{Room: name, Title: set.Title, T: messages(r), Assets: s.pageAssets(),
		Status: string(p.Status), Rank: p.Rank, Waiting: p.Waiting, ETA: p.EstimatedWaitSeconds, Paused: p.Paused,
		Refresh: p.PollingIntervalSeconds, SoldOut: p.SoldOut}
	if p.EntryToken != nil {
		page.Token = *p.EntryToken
		page.Products = s.viewProducts(r.WithContext(ctx), name)
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusOK, views.Status(page))
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.Error("render", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "The page could not be rendered.")
		return
	}
	htmlHeaders(w)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// htmlError answers an HTML error page.
func (s *Server) htmlError(w http.ResponseWriter, r *http.Request, status int, msg, roomName string, retry bool) {
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "2")
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, views.Error(views.ErrorPage{Status: status, Message: msg, Room: roomName, Retry: retry,
		T: messages(r), Assets: s.pageAssets()}))
}

// htmlFail maps an engine error onto an HTML error page, as fail does for
// JSON.
func (s *Server) htmlFail(w http.ResponseWriter, r *http.Request, err error, roomName string) {
	switch {
	case errors.Is(err, room.ErrNotFound):
		s.htmlError(w, r, http.StatusNotFound, "There is no waiting room at this address.", "", false)
	case errors.Is(err, queue.ErrNotOpen): // DRAW
		s.htmlError(w, r, http.StatusConflict, "This sale is not open yet.", roomName, false)
	case errors.Is(err, queue.ErrSaleEnded): // DRAW
		s.htmlError(w, r, http.StatusConflict, "This sale has ended.", roomName, false)
	default:
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		s.htmlError(w, r, http.StatusServiceUnavailable, "The waiting room is briefly unavailable. Please retry in a moment.", roomName, true)
	}
}
