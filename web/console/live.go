package console

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"waitingroom/server/loop"
	"waitingroom/server/operator"
	"waitingroom/server/room"
	"waitingroom/views"
)

const (
	// DashTick is how often, on the console's clock, the dashboard stream
	// sends the room.
	DashTick = time.Second
	// DashWriteTimeout bounds each write of a dashboard stream, in place
	// of the server's WRITE_TIMEOUT: a client that stops reading is
	// dropped at its next write.
	DashWriteTimeout = 5 * time.Second
	// dashStreamLife ends a stream so that the browser reconnects through
	// the session check: a signed-out or expired session stops seeing
	// the room within this time.
	dashStreamLife = 5 * time.Minute
	// dashRetryMillis is the reconnection delay the stream asks for.
	dashRetryMillis = 3000
	// dashBusyRetry is the Retry-After of a refused stream, in seconds.
	dashBusyRetry = 10
	// DashSessionCheck is how often a stream checks that its session is
	// still open: a sign-out ends the stream within this time.
	DashSessionCheck = 5 * time.Second
)

// roomLive serves GET /admin/rooms/{room}/live: an SSE stream that sends,
// once a second, the dashboard's #dash-live fragment rendered by the
// server (templ escapes it), as one "message" event. The stream ends when
// the client goes, when a write does not finish within DashWriteTimeout,
// when its session ends (checked every DashSessionCheck), or after
// dashStreamLife. Its seconds are the console's clock's: between two, it
// waits on one timer of that clock (see loop.Every).
func (s *Console) roomLive(w http.ResponseWriter, r *http.Request, _ Session) {
	name := r.PathValue("room")
	t := views.DashTextFor(Lang(r))
	if !room.ValidName(name) {
		s.Error(w, r, http.StatusNotFound, views.Fill(t.NoRoom, "room", name))
		return
	}
	if !s.dash.acquire() {
		w.Header().Set("Retry-After", strconv.Itoa(dashBusyRetry))
		s.Error(w, r, http.StatusServiceUnavailable, t.Busy)
		return
	}
	defer s.dash.release()
	loc, zone := dashZone(r)
	frame, err := s.dashboardFrame(r.Context(), name, loc, zone, t)
	if err != nil {
		s.dashboardFailed(w, r, name, t, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	rc := http.NewResponseController(w)
	first := append([]byte("retry: "+strconv.Itoa(dashRetryMillis)+"\n\n"), frame...)
	if !s.sendLive(rc, w, first) {
		return
	}
	ctx, end := context.WithCancel(r.Context())
	defer end()
	checked := s.clk.Now()
	loop.Every(ctx, s.clk, DashTick, DashTick, func(ctx context.Context) {
		if s.clk.Since(checked) >= s.dash.sessionCheck {
			checked = s.clk.Now()
			_, err := s.session(r)
			if errors.Is(err, operator.ErrNoSession) {
				end() // signed out or expired: the page's reconnection asks to sign in
				return
			}
			if err != nil && ctx.Err() == nil {
				s.log.Warn("console: live dashboard: session", "room", name, "err", err)
			}
		}
		frame, err := s.dashboardFrame(ctx, name, loc, zone, t)
		if errors.Is(err, room.ErrNotFound) {
			end() // the room was deleted: the page's reload says so
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("console: live dashboard", "room", name, "err", err)
			}
			return // the settings will read again at the next tick
		}
		if !s.sendLive(rc, w, frame) {
			end()
		}
	})
}

// sendLive writes b and flushes it within DashWriteTimeout; false when the
// client is gone or too slow. The deadline is on the real clock, as the
// connection's are.
func (s *Console) sendLive(rc *http.ResponseController, w http.ResponseWriter, b []byte) bool {
	if err := rc.SetWriteDeadline(time.Now().Add(s.dash.writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// dashboardFrame renders one second of room name as an SSE event. The
// streams of one room, language and time zone share each second's frame
// (a second of the console's clock), so that more viewers cost no more
// reads; a frame belongs to the second its render started in, however
// long the render takes, so that each second gets a fresh one.
func (s *Console) dashboardFrame(ctx context.Context, name string, loc *time.Location, zone string, t views.DashText) ([]byte, error) {
	key := t.Lang + " " + zone + " " + name
	if b, ok := s.dash.frames.get(key, s.clk.Now()); ok {
		return b, nil
	}
	// One render at a time per frame: the streams that tick meanwhile
	// wait for it. It does not end with the stream that started it.
	v, err, _ := s.dash.render.Do(key, func() (any, error) {
		start := s.clk.Now()
		if b, ok := s.dash.frames.get(key, start); ok {
			return b, nil
		}
		ctx := context.WithoutCancel(ctx) // dashboardSecond bounds it
		live, err := s.dashboardSecond(ctx, name, start, loc, t)
		if err != nil {
			return nil, err
		}
		var html bytes.Buffer
		if err := views.DashboardLiveView(live, t).Render(ctx, &html); err != nil {
			return nil, err
		}
		b := sseData(html.Bytes())
		s.dash.frames.put(key, b, start)
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// maxFrames bounds the shared frames (rooms × languages × time zones).
const maxFrames = 256

// frameCache holds each room's latest rendered frame, by language: a
// frame is shared within the second its render started in.
type frameCache struct {
	mu sync.Mutex
	m  map[string]cachedFrame
}

type cachedFrame struct {
	b   []byte
	sec int64 // the Unix second the frame's render started in
}

func (c *frameCache) get(key string, now time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[key]
	if !ok || f.sec != now.Unix() {
		return nil, false
	}
	return f.b, true
}

func (c *frameCache) put(key string, b []byte, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedFrame{}
	}
	if len(c.m) >= maxFrames {
		for k, f := range c.m {
			if f.sec != now.Unix() {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxFrames {
			return
		}
	}
	c.m[key] = cachedFrame{b: b, sec: now.Unix()}
}

// sseData is payload as one SSE event: a "data:" line for each of its
// lines (CR, LF and CRLF all end an SSE line), then a blank line.
func sseData(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+64)
	out = append(out, "data: "...)
	for i := 0; i < len(payload); i++ {
		switch c := payload[i]; c {
		case '\r':
			if i+1 < len(payload) && payload[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			out = append(out, "\ndata: "...)
		default:
			out = append(out, c)
		}
	}
	return append(out, "\n\n"...)
}
