package web

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"waitingroom/web/request"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/response"
	"waitingroom/web/sse"
)

// The embeddable live widget. Its page, its status and
// its stream are the same for every viewer of a room: no cookie, no
// ticket, no Redis work per viewer.

// widgetTTL is how long a room's widget settings and status are reused;
// past it, an entry being renewed is still answered for widgetStale.
const (
	widgetTTL   = time.Second
	widgetStale = 5 * time.Second
	// widgetGoneTTL is how long "no such room" is reused, so that the
	// widgets of a deleted room cost no Redis read per poll.
	widgetGoneTTL = 5 * time.Second
)

// widgetCache keeps, per room, what the widget needs from its settings
// and its newest status bytes, so that a crowd of viewers costs one
// settings read per room per second and the polling answer is the same
// bytes for all.
type widgetCache struct {
	mu    sync.Mutex
	rooms map[string]*widgetRoom
}

// widgetRoom is one room's cached widget settings and status.
type widgetRoom struct {
	title     string
	theme     string // the room's accent stylesheet (brand), or ""
	ancestors string // the CSP frame-ancestors source list
	target    string
	schedule  room.Schedule
	closed    bool   // mode closed
	status    []byte // the status JSON without its serverTime (see sse.AppendServerTime)
	gone      bool   // no such room (cached for widgetGoneTTL)
	expires   time.Time
	// refreshing is set while one request renews an expired entry; the
	// others are answered from it meanwhile (for up to widgetStale).
	refreshing atomic.Bool
}

// frameAncestors returns the CSP frame-ancestors sources of origins:
// the valid ones, or 'none'.
func frameAncestors(origins []string) string {
	var ok []string
	for _, o := range origins {
		if room.ValidOrigin(o) {
			ok = append(ok, o)
		}
	}
	if len(ok) == 0 {
		return "'none'"
	}
	return strings.Join(ok, " ")
}

// widgetCSP is the widget page's policy: the room page's, but frameable
// by the room's embed origins.
func widgetCSP(ancestors string) string {
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"form-action 'none'; base-uri 'none'; frame-ancestors " + ancestors
}

// widgetRoom returns room name's widget settings and status, at most
// widgetTTL old.
func (s *Server) widgetRoom(ctx context.Context, name string) (*widgetRoom, error) {
	now := s.clock.Now()
	s.widgets.mu.Lock()
	wr := s.widgets.rooms[name]
	s.widgets.mu.Unlock()
	if wr != nil && now.Before(wr.expires) {
		if wr.gone {
			return nil, room.ErrNotFound
		}
		return wr, nil
	}
	if wr != nil && !wr.gone && now.Before(wr.expires.Add(widgetStale)) && !wr.refreshing.CompareAndSwap(false, true) {
		return wr, nil // another request is renewing it: a burst costs one read
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	set, err := s.rooms.Room(ctx, name)
	if errors.Is(err, room.ErrNotFound) {
		s.cacheWidgetRoom(name, &widgetRoom{gone: true, expires: now.Add(widgetGoneTTL)})
		return nil, err
	}
	if err != nil {
		if wr != nil {
			wr.refreshing.Store(false)
		}
		return nil, err
	}
	hr, err := s.hub.Room(ctx, name)
	if err != nil {
		if wr != nil {
			wr.refreshing.Store(false)
		}
		return nil, err
	}
	wr = &widgetRoom{title: set.Title, theme: themeURL(name, set.Branding), ancestors: frameAncestors(set.EmbedOrigins), target: set.EmbedTarget,
		schedule: set.Schedule, closed: room.CanonicalMode(set.Mode) == room.ModeClosed, expires: now.Add(widgetTTL)}
	if wr.title == "" {
		wr.title = name
	}
	if wr.target != room.EmbedSameTab {
		wr.target = room.EmbedNewTab
	}
	wr.status = s.widgetView(hr, wr, now).StatusHead()
	s.cacheWidgetRoom(name, wr)
	return wr, nil
}

// cacheWidgetRoom keeps wr as room name's widget entry.
func (s *Server) cacheWidgetRoom(name string, wr *widgetRoom) {
	s.widgets.mu.Lock()
	defer s.widgets.mu.Unlock()
	if s.widgets.rooms == nil || len(s.widgets.rooms) > maxCachedPages {
		s.widgets.rooms = map[string]*widgetRoom{}
	}
	s.widgets.rooms[name] = wr
}

// widgetView is the room's view: the hub's, fed by the room's ticks;
// before this process saw a tick, the phase and times of its settings.
func (s *Server) widgetView(hr *sse.Room, wr *widgetRoom, now time.Time) sse.View {
	v, ok := s.hub.View(hr, now)
	if !ok {
		v.Phase = room.SchedulePhase(wr.schedule, wr.closed, now)
		v.PrequeueAt, v.OpensAt, v.ClosesAt = unixMs(wr.schedule.PrequeueAt), unixMs(wr.schedule.OpensAt), unixMs(wr.schedule.ClosesAt)
	}
	return v
}

func unixMs(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMilli()
}

// widgetLink is the room's URL carrying the host page's attribution in q
// (request.UTMFields: the utm_* fields and the ad click ids), the valid ones.
func widgetLink(name string, q url.Values) string {
	out := url.Values{}
	for _, k := range request.UTMFields {
		if v := q.Get(k); v != "" && request.ValidAttribution(k, v) {
			out.Set(k, v)
		}
	}
	if len(out) == 0 {
		return "/r/" + name
	}
	return "/r/" + name + "?" + out.Encode()
}

// widgetText is the widget's state line and detail for v at now, in t's
// language; static/widget.js words them the same way.
func widgetText(t views.Messages, v sse.View, now time.Time) (state, detail string) {
	countdown := func(atMs int64) string {
		left := time.Duration(atMs-now.UnixMilli()) * time.Millisecond
		if left <= 0 {
			return t.WidgetOpening
		}
		return strings.ReplaceAll(t.OpensIn, "{t}", clock(left))
	}
	switch {
	case v.SoldOut:
		return t.SoldOutTitle, ""
	case v.Phase == queue.PhaseClosed:
		return t.Ended, ""
	case v.Phase == queue.PhaseScheduled:
		if v.PrequeueAt > now.UnixMilli() {
			// Before the pre-queue: its countdown, and the sale's opening.
			state = strings.ReplaceAll(t.WidgetLineOpensIn, "{t}", clock(time.Duration(v.PrequeueAt-now.UnixMilli())*time.Millisecond))
			if v.OpensAt > 0 {
				detail = countdown(v.OpensAt)
			}
			return state, detail
		}
		if v.OpensAt <= 0 {
			return t.NotOpen, ""
		}
		return countdown(v.OpensAt), ""
	case v.Phase == queue.PhasePrequeue:
		if v.OpensAt > 0 {
			return t.WidgetPrequeue, countdown(v.OpensAt)
		}
		return t.WidgetPrequeue, ""
	case v.Paused:
		return t.Paused, ""
	case v.Waiting > 0 && v.ETA != nil:
		n := views.FormatCount(v.Waiting)
		return strings.NewReplacer("{n}", n, "{t}", waitWords(t, *v.ETA)).Replace(t.WidgetWaiting), ""
	case v.Waiting > 0:
		return strings.ReplaceAll(t.WidgetWaitingNow, "{n}", views.FormatCount(v.Waiting)), ""
	}
	return t.WidgetOpen, ""
}

// clock formats d as hh:mm:ss, rounded up to the second.
func clock(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	two := func(n int64) string {
		if n < 10 {
			return "0" + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10)
	}
	return two(s/3600) + ":" + two(s/60%60) + ":" + two(s%60)
}

// waitWords words a wait of sec seconds as the room page does
// (views.Messages.Duration), rounded up to the minute past one.
func waitWords(t views.Messages, sec int64) string {
	if sec < 60 {
		return t.Duration(max(sec, 1))
	}
	return t.Duration((sec + 59) / 60 * 60)
}

// widgetPage serves GET /r/{room}/widget: the widget, frameable only by
// the room's embed origins. It sets no cookie and takes no ticket.
func (s *Server) widgetPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	t := s.roomText(r, name) // the room's default language where the request names none
	if !room.ValidName(name) {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusBadRequest, Heading: t.TitleNotFound, Message: t.BadRoomName})
		return
	}
	wr, err := s.widgetRoom(r.Context(), name)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	now := s.clock.Now()
	hr, err := s.hub.Room(r.Context(), name) // loaded by widgetRoom: no Redis
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	v := s.widgetView(hr, wr, now)
	state, detail := widgetText(t, v, now)
	page := views.WidgetPage{Room: name, Title: wr.title, T: t, CSS: s.assets.url("widget.css"), Theme: wr.theme, JS: s.assets.url("widget.js"),
		State: state, Detail: detail, Link: widgetLink(name, r.URL.Query()), Target: wr.target,
		StatusJSON: string(v.AppendJSON(nil)), SoldOut: v.SoldOut}
	var buf bytes.Buffer
	if err := views.Widget(page).Render(r.Context(), &buf); err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// frame-ancestors, not X-Frame-Options: the two would conflict.
	ancestors := wr.ancestors
	if r.URL.Query().Get("preview") == "1" {
		// The console's preview frames it from this origin.
		ancestors = "'self'"
		if wr.ancestors != "'none'" {
			ancestors += " " + wr.ancestors
		}
	}
	h.Set("Content-Security-Policy", widgetCSP(ancestors))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	// A CDN may keep it for a few seconds (by URL: the carried fields are
	// in it): the script brings the phase up to date at once.
	h.Set("Cache-Control", "public, max-age=5")
	h.Set("Vary", "Accept-Language, Accept-Encoding")
	h.Set("Content-Language", t.Lang)
	writeBody(w, r, buf.Bytes(), nil)
}

// widgetStatus serves GET /r/{room}/widget/status, the widget's polling
// fallback: the same bytes for every viewer, renewed once a second.
func (s *Server) widgetStatus(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if !room.ValidName(name) {
		response.WriteError(w, http.StatusBadRequest, "bad_room", "Room names are 1 to 64 characters of a-z, 0-9 and '-'.")
		return
	}
	wr, err := s.widgetRoom(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "public, max-age=1")
	h.Set("X-Content-Type-Options", "nosniff")
	// Each answer carries the server's clock now, for the countdown.
	body := sse.AppendServerTime(append(make([]byte, 0, len(wr.status)+32), wr.status...), s.clock.Now().UnixMilli())
	writeBody(w, r, body, nil)
}

// widgetEvents serves GET /r/{room}/widget/events: the room's live view
// as "room" events, sharing the room's broadcast. The viewer holds only
// its connection; streams are capped per process and per client network.
func (s *Server) widgetEvents(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if !room.ValidName(name) {
		response.WriteError(w, http.StatusBadRequest, "bad_room", "Room names are 1 to 64 characters of a-z, 0-9 and '-'.")
		return
	}
	if r.Method == http.MethodHead {
		s.headEvents(w, r, name) // whether the stream exists, holding nothing
		return
	}
	slot, err := s.hub.ReserveWidget(s.clientKey(r))
	if errors.Is(err, sse.ErrProcessFull) {
		s.metrics.Rejected.WithLabelValues("widget_streams").Inc()
		w.Header().Set("Retry-After", "30")
		response.WriteError(w, http.StatusServiceUnavailable, "too_many_widgets",
			"This server holds as many live widgets as it can; the widget checks every few seconds instead.")
		return
	}
	if err != nil {
		s.refuseNetworkStream(w)
		return
	}
	defer slot.Release()
	wr, err := s.widgetRoom(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	hr, err := s.hub.Room(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := s.widgetView(hr, wr, s.clock.Now())
	nc, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.log.Error("widget sse: hijack", "err", err)
		response.WriteError(w, http.StatusInternalServerError, "internal", "Streaming is not supported on this connection.")
		return
	}
	s.hub.Watch(nc, hr, slot, v)
}
