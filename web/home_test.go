package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/room"
)

// someRooms is the room store with its list cut to names, so that a test
// sees only its own rooms on the shared Redis.
type someRooms struct {
	roomStore
	names []string
}

// roomStore names the embedded store, whose Rooms someRooms replaces.
type roomStore = Rooms

func (s someRooms) Rooms(context.Context) ([]string, error) { return s.names, nil }

// TestFrontPage: GET / redirects to LANDING_URL when it is set; else it is
// an HTML page (never JSON) listing the listed rooms, in the visitor's
// language, with an empty state.
func TestFrontPage(t *testing.T) {
	t.Parallel()
	base := newHarness(t, nil)
	listed, unlisted := base.room, base.room+"-u"
	opens := time.Now().Add(48 * time.Hour)
	for _, r := range []struct {
		name   string
		listed bool
		title  string
	}{{listed, true, "Winter <drop> 한정판"}, {unlisted, false, "Hidden test sale"}} {
		set := room.Defaults(r.name)
		set.Title, set.Listed, set.ShopName, set.OpensAt = r.title, r.listed, "Seoul Shoes", &opens
		if err := base.eng.SaveRoom(context.Background(), r.name, set); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { base.eng.DeleteRoom(context.Background(), r.name) })
	}
	tests := []struct {
		name     string
		names    []string
		landing  string
		accept   string
		status   int
		want     []string
		wantNot  []string
		location string
	}{
		{"landing URL", []string{listed}, "https://shop.example/sale?from=queue", "", 302, nil, nil, "https://shop.example/sale?from=queue"},
		{"listed rooms, English", []string{listed, unlisted}, "", "en", 200,
			[]string{`<html lang="en"`, `href="/r/` + listed + `"`, "Winter &lt;drop&gt; 한정판", "Seoul Shoes", "Opens "},
			[]string{unlisted, "Hidden test sale"}, ""},
		{"listed rooms, Korean", []string{listed, unlisted}, "", "ko-KR", 200,
			[]string{`<html lang="ko"`, `href="/r/` + listed + `"`, "KST 시작"}, []string{unlisted}, ""},
		{"no listed room", []string{unlisted}, "", "", 200,
			[]string{"There is no public sale right now"}, []string{"<ul"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				o.Rooms = someRooms{roomStore: o.Rooms, names: tt.names}
				o.LandingURL = tt.landing
			})
			nofollow := *h.srv.Client()
			nofollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			req, _ := http.NewRequest("GET", h.srv.URL+"/", nil)
			if tt.accept != "" {
				req.Header.Set("Accept-Language", tt.accept)
			}
			resp, err := nofollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			_, _ = copyBody(&b, resp)
			body := b.String()
			if resp.StatusCode != tt.status || resp.Header.Get("Location") != tt.location {
				t.Fatalf("%d to %q, want %d to %q", resp.StatusCode, resp.Header.Get("Location"), tt.status, tt.location)
			}
			if tt.status == 200 && (!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
				!strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'")) {
				t.Errorf("not an HTML page with the CSP: %v", resp.Header)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q:\n%s", w, body)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("page holds %q", w)
				}
			}
		})
	}
}

// TestFavicon: /favicon.ico is the default icon, cached long; room pages
// link the room's favicon when it has one, else it.
func TestFavicon(t *testing.T) {
	t.Parallel()
	h := newClockedHarness(t, nil)
	r := h.do(t, "GET", "/favicon.ico", "", nil, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "image/x-icon" || !strings.HasPrefix(r.body, "\x00\x00\x01\x00") ||
		!strings.Contains(r.header.Get("Cache-Control"), "max-age=604800") {
		t.Fatalf("/favicon.ico: %d %v", r.status, r.header)
	}
	if p := h.do(t, "GET", "/r/"+h.room, "", nil, nil); !strings.Contains(p.body, `<link rel="icon" href="/favicon.ico">`) {
		t.Errorf("the room page does not link the default icon")
	}
	icon := room.MediaPath(strings.Repeat("cd", 32), "ico")
	saveBranded(t, h, func(s *room.Settings) { s.Favicon = icon })
	h.clock.Advance(pageCacheTTL + time.Millisecond) // the cached room page expires
	for _, path := range []string{"/r/" + h.room, "/r/" + h.room + "/status"} {
		if p := h.do(t, "GET", path, "", nil, nil); !strings.Contains(p.body, `<link rel="icon" href="`+icon+`">`) {
			t.Errorf("%s does not link the room's icon", path)
		}
	}
}

func copyBody(b *strings.Builder, resp *http.Response) (int64, error) {
	defer resp.Body.Close()
	return io.Copy(b, resp.Body)
}

// flakyRooms is a room store whose list of names is scripted: it blocks
// until release is closed (when set), fails while fail is set, and counts
// the scans.
type flakyRooms struct {
	roomStore
	names   []string
	release chan struct{}
	fail    atomic.Bool
	scans   atomic.Int64
	reads   atomic.Int64 // calls reading rooms' settings
}

func (f *flakyRooms) Room(ctx context.Context, name string) (room.Settings, error) {
	f.reads.Add(1)
	return f.roomStore.Room(ctx, name)
}

func (f *flakyRooms) RoomsSettings(ctx context.Context, names []string) (map[string]room.Settings, error) {
	f.reads.Add(1)
	return f.roomStore.RoomsSettings(ctx, names)
}

func (f *flakyRooms) Rooms(ctx context.Context) ([]string, error) {
	f.scans.Add(1)
	if f.release != nil {
		<-f.release // a store that does not heed ctx
	}
	if f.fail.Load() {
		return nil, errors.New("redis is away")
	}
	return f.names, nil
}

// TestFrontPageScans: a request waits on another's scan only as long as
// its own context allows; a failed scan serves the last good list, and is
// remembered a few seconds, so that a failing store is not scanned per
// request.
func TestFrontPageScans(t *testing.T) {
	t.Parallel()
	base := newHarness(t, nil)
	set := room.Defaults(base.room)
	set.Listed = true
	if err := base.eng.SaveRoom(context.Background(), base.room, set); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness, f *flakyRooms, clock *clockwork.FakeClock)
	}{
		{"settings are read a hundred rooms a round trip", func(t *testing.T, h *harness, f *flakyRooms, _ *clockwork.FakeClock) {
			f.names = nil
			for i := range 250 {
				f.names = append(f.names, fmt.Sprintf("%s-gone-%03d", base.room, i)) // unknown rooms
			}
			f.names = append(f.names, base.room)
			rooms, err := h.web.listed(context.Background())
			if err != nil || len(rooms) != 1 || rooms[0].name != base.room {
				t.Fatalf("%v %v, want the listed room", rooms, err)
			}
			if n := f.reads.Load(); n != 3 {
				t.Errorf("%d reads of settings, want 3", n)
			}
		}},
		{"a waiting request heeds its context", func(t *testing.T, h *harness, f *flakyRooms, _ *clockwork.FakeClock) {
			f.release = make(chan struct{})
			defer close(f.release)
			go h.web.listed(context.Background()) // holds the scan
			for f.scans.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			if _, err := h.web.listed(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err %v, want the request's deadline", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("waited %v past its deadline", d)
			}
		}},
		{"a failed refresh serves the last list", func(t *testing.T, h *harness, f *flakyRooms, clock *clockwork.FakeClock) {
			if rooms, err := h.web.listed(context.Background()); err != nil || len(rooms) != 1 {
				t.Fatalf("%v %v", rooms, err)
			}
			f.fail.Store(true)
			clock.Advance(homeTTL)
			if rooms, err := h.web.listed(context.Background()); err != nil || len(rooms) != 1 || rooms[0].name != base.room {
				t.Fatalf("%v %v, want the last list", rooms, err)
			}
		}},
		{"a failure is remembered a while", func(t *testing.T, h *harness, f *flakyRooms, clock *clockwork.FakeClock) {
			f.fail.Store(true)
			for range 10 {
				if _, err := h.web.listed(context.Background()); err == nil {
					t.Fatal("no error from a failing store")
				}
			}
			if n := f.scans.Load(); n != 1 {
				t.Errorf("%d scans, want 1", n)
			}
			clock.Advance(homeFailTTL)
			f.fail.Store(false)
			if rooms, err := h.web.listed(context.Background()); err != nil || len(rooms) != 1 || f.scans.Load() != 2 {
				t.Errorf("%v %v after %d scans: the failure was not forgotten", rooms, err, f.scans.Load())
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f *flakyRooms
			h := newClockedHarness(t, func(o *Options) {
				f = &flakyRooms{roomStore: o.Rooms, names: []string{base.room}}
				o.Rooms = f
			})
			tt.run(t, h, f, h.clock)
		})
	}
}
