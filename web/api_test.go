package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
	"waitingroom/web/request"
	"waitingroom/web/sse"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/visitor"
	"waitingroom/web/response"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
)

const testAdminToken = "test-admin-token-0123456789abcdef"

type harness struct {
	web  *Server
	srv  *httptest.Server
	eng  *queue.Engine
	room string
	rdb  redis.UniversalClient
	// clock is the fake clock of a harness of newClockedHarness, nil on
	// real time.
	clock *clockwork.FakeClock
	// forwardedFor, when set, is the X-Forwarded-For of every request of
	// do and postForm that names none (a harness that trusts the
	// loopback proxy): the client's address.
	forwardedFor string
}

// newHarness returns a server of one room (rate 1000) on real time: the
// scripts decide by Redis' clock, the caches by the machine's.
func newHarness(t *testing.T, mut func(*Options)) *harness {
	t.Helper()
	return newHarnessOn(t, nil, mut)
}

// newClockedHarness is newHarness on a fake clock, h.clock, that only the
// test moves: the engine's scripts (the admission credit, the schedule,
// passes, absences) and the server's caches, proofs of work and waits
// decide by it, and so does the order service that the harness makes.
func newClockedHarness(t *testing.T, mut func(*Options)) *harness {
	t.Helper()
	return newHarnessOn(t, clockwork.NewFakeClockAt(time.Now()), mut)
}

// newHarnessOn is newHarness on clock, or on real time when clock is nil.
// mut sees o.Clock set to clock.
func newHarnessOn(t *testing.T, clock *clockwork.FakeClock, mut func(*Options)) *harness {
	t.Helper()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	var clk clockwork.Clock // nil: the real clocks
	if clock != nil {
		eng.SetClock(clock.Now)
		clk = clock
	}
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 1000
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	signer := testSigner(t)
	metrics := NewMetrics()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := newHub(eng, sse.Options{}, metrics, log)
	t.Cleanup(hub.Close)
	o := Options{
		Queue: eng, Rooms: eng, CampaignCounts: eng, Signer: signer, AdminToken: testAdminToken,
		Health:  func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		Static:  os.DirFS("../static"), // the real assets
		Metrics: metrics,
		Log:     log,
		Hub:     hub,
		// Generous caps: tests enter many visitors from one address.
		EnterRatePerIP: 10000, EnterBurstPerIP: 10000,
		Clock: clk,
	}
	withOrderService(&o, embeddedOrders(t, eng, log).WithClock(clk))
	if mut != nil {
		mut(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &harness{web: s, srv: srv, eng: eng, room: name, rdb: rdb, clock: clock}
}

// credit lets admission credit accrue in room for d: a tick that admits
// nobody starts the room's rate clock, then h.clock moves by d, so that the
// next tick may admit up to the room's rate × d.
func (h *harness) credit(t *testing.T, room string, d time.Duration) {
	t.Helper()
	if h.clock == nil {
		t.Fatal("credit moves the clock of newClockedHarness")
	}
	if _, err := h.eng.Admit(context.Background(), room, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(d)
}

// admitNext lets the next in line in with tok. On the fake clock one tick
// does it, once the clock moved; on real time ticks run until Redis' clock
// has given the room the credit.
func (h *harness) admitNext(t *testing.T, tok string) {
	t.Helper()
	admit := func() bool {
		a, err := h.eng.Admit(context.Background(), h.room, time.Second, []string{tok})
		if err != nil {
			t.Fatal(err)
		}
		return len(a.Visitors) == 1
	}
	if h.clock == nil {
		if _, err := h.eng.Admit(context.Background(), h.room, time.Second, nil); err != nil { // the rate clock starts
			t.Fatal(err)
		}
		waitFor(t, admit)
		return
	}
	h.credit(t, h.room, 5*time.Millisecond)
	if !admit() {
		t.Fatal("a tick with credit admitted nobody")
	}
}

// withOrderService has o use svc for every need of orders it serves: the
// orders, the product admin, the dashboard's stock, the console's orders
// and the resent order form.
func withOrderService(o *Options, svc *order.Service) {
	o.Orders, o.Catalog, o.Stock, o.ConsoleOrders, o.PlacedOrders = svc, svc, svc, svc, svc
}

// embeddedOrders is an order service on the embedded SQL store, for tests
// that do not bring PostgreSQL.
func embeddedOrders(t testing.TB, gate order.Gate, log *slog.Logger) *order.Service {
	t.Helper()
	db, err := store.Open(context.Background(), "", 1, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background(), os.DirFS("../migrations")); err != nil {
		t.Fatal(err)
	}
	return order.NewService(order.NewStore(db.DB, 0), gate, 0, log)
}

func testSigner(t *testing.T) *visitor.Signer {
	t.Helper()
	s, err := visitor.NewSigner([]byte("test-secret-key-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("body %q is not JSON: %v", r.body, err)
	}
}

func (r reply) cookie() *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == request.CookieName {
			return c
		}
	}
	return nil
}

func (h *harness) do(t *testing.T, method, path, body string, hdr map[string]string, cookie *http.Cookie) reply {
	t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // as a client of the JSON API sends it
	}
	if h.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", h.forwardedFor)
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	if v := hdr["Host"]; v != "" {
		req.Host = v // the client sends req.Host, not the header
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func TestEnterPositionLeave(t *testing.T) {
	t.Parallel()
	h := newClockedHarness(t, nil)
	q := "/api/rooms/" + h.room + "/queue"

	first := h.do(t, "POST", q, "", nil, nil)
	if first.status != 200 {
		t.Fatalf("enter: %d %s", first.status, first.body)
	}
	c := first.cookie()
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
		t.Fatalf("enter set cookie %+v, want an HttpOnly SameSite=Lax wr_vid", c)
	}
	var p queue.Position
	first.json(t, &p)
	if p.Status != queue.StatusWaiting || p.Rank != 0 || p.Waiting != 1 || p.Ticket != 1 {
		t.Fatalf("first enter: %+v", p)
	}
	if !strings.Contains(first.body, `"entryToken":null`) || !strings.Contains(first.body, `"currentTotalWaitingCount":1`) {
		t.Fatalf("position JSON lacks the contract's names: %s", first.body)
	}

	second := h.do(t, "POST", q, "", nil, nil) // another visitor
	lead := "x"                                // a first character that differs from the cookie's own (1 in 64 began with "x")
	if c.Value[0] == 'x' {
		lead = "y"
	}
	tampered := &http.Cookie{Name: request.CookieName, Value: lead + c.Value[1:]}
	steps := []struct {
		name       string
		method     string
		path       string
		cookie     *http.Cookie
		wantStatus queue.Status
		wantRank   int64
		wantTicket int64
		wantCookie bool
	}{
		{"repeat enter keeps the ticket", "POST", q, c, queue.StatusWaiting, 0, 1, false},
		{"position", "GET", q + "/position", c, queue.StatusWaiting, 0, 1, false},
		{"position without cookie", "GET", q + "/position", nil, queue.StatusNotEntered, 0, 0, false},
		{"tampered cookie is a new visitor", "POST", q, tampered, queue.StatusWaiting, 2, 3, true},
		{"leave", "DELETE", q, c, queue.StatusNotEntered, 0, 0, false},
		{"position after leave", "GET", q + "/position", c, queue.StatusNotEntered, 0, 0, false},
		{"the second visitor moved up", "GET", q + "/position", second.cookie(), queue.StatusWaiting, 0, 2, false},
		{"re-enter joins at the end", "POST", q, c, queue.StatusWaiting, 2, 4, false},
	}
	for _, st := range steps {
		r := h.do(t, st.method, st.path, "", nil, st.cookie)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", st.name, r.status, r.body)
		}
		var p queue.Position
		r.json(t, &p)
		if p.Status != st.wantStatus || p.Rank != st.wantRank || p.Ticket != st.wantTicket {
			t.Fatalf("%s: got %+v, want %s rank %d ticket %d", st.name, p, st.wantStatus, st.wantRank, st.wantTicket)
		}
		if (r.cookie() != nil) != st.wantCookie {
			t.Fatalf("%s: Set-Cookie present = %v, want %v", st.name, r.cookie() != nil, st.wantCookie)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: Cache-Control %q, want no-store", st.name, r.header.Get("Cache-Control"))
		}
	}

	// Once admitted, the position carries the token (to this visitor only).
	h.credit(t, h.room, 20*time.Millisecond)
	if a, err := h.eng.Admit(context.Background(), h.room, time.Second, []string{strings.Repeat("A", 43), strings.Repeat("B", 42) + "A"}); err != nil || len(a.Visitors) != 2 {
		t.Fatalf("admit: %+v %v", a, err)
	}
	r := h.do(t, "GET", q+"/position", "", nil, second.cookie())
	r.json(t, &p)
	if p.Status != queue.StatusReady || p.EntryToken == nil || *p.EntryToken != strings.Repeat("A", 43) {
		t.Fatalf("admitted visitor sees %+v", p)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	big := strings.Repeat("x", maxBody+1)
	bigEnter := strings.Repeat("x", enterBodyMax+1)
	admin := map[string]string{"Authorization": "Bearer " + testAdminToken}
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		wantStatus               int
		wantCode                 string
	}{
		{"bad room name", "POST", "/api/rooms/Bad_Room/queue", "", nil, 400, "bad_room"},
		{"too long room name", "POST", "/api/rooms/" + strings.Repeat("a", 65) + "/queue", "", nil, 400, "bad_room"},
		{"unknown room", "POST", "/api/rooms/no-such-room-x/queue", "", nil, 404, "room_not_found"},
		{"unknown room position", "GET", "/api/rooms/no-such-room-x/queue/position", "", nil, 404, "room_not_found"},
		{"oversized enter body", "POST", "/api/rooms/" + h.room + "/queue", bigEnter, nil, 413, "body_too_large"},
		{"oversized admin body", "POST", "/api/admin/rooms/" + h.room + "/bypass", `{"uses":"` + big + `"}`, admin, 413, "body_too_large"},
		{"oversized room body", "PUT", "/api/admin/rooms/" + h.room, `{"title":"` + strings.Repeat("x", roomBodyMax) + `"}`, admin, 413, "body_too_large"},
		{"a room's keys at their bound fit its body", "PUT", "/api/admin/rooms/" + h.room,
			`{"identity":"optional","identityKeys":"` + strings.Repeat(`\n`, room.MaxIdentityKeysLen-1) + `x"}`, admin, 400, "invalid_settings"},
		{"unknown path", "GET", "/api/nope", "", nil, 404, "not_found"},
		{"wrong method", "PATCH", "/api/rooms/" + h.room + "/queue", "", nil, 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(t, tt.method, tt.path, tt.body, tt.hdr, nil)
			var e response.Error
			r.json(t, &e)
			if r.status != tt.wantStatus || e.Code != tt.wantCode || e.Message == "" {
				t.Fatalf("got %d %s, want %d with code %s", r.status, r.body, tt.wantStatus, tt.wantCode)
			}
			if r.cookie() != nil {
				t.Fatalf("an error answer set a cookie")
			}
		})
	}
}

func TestChunkedOversizedBodyIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(strings.Repeat("x", 3*maxBody)))
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", h.srv.URL+"/api/rooms/"+h.room+"/queue", pr) // no Content-Length
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked oversized body: %d, want 413", resp.StatusCode)
	}
}

func TestAdminAPI(t *testing.T) {
	t.Parallel()
	h := newClockedHarness(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	fresh := servicetest.RoomName(t, h.rdb)
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		wantStatus               int
		check                    func(t *testing.T, r reply)
	}{
		{"no token", "GET", "/api/admin/rooms/" + h.room, "", nil, 401, nil},
		{"wrong token", "GET", "/api/admin/rooms/" + h.room, "", map[string]string{"Authorization": "Bearer nope"}, 401, nil},
		{"unknown room", "GET", "/api/admin/rooms/" + fresh, "", auth, 404, nil},
		{"create", "PUT", "/api/admin/rooms/" + fresh, `{"title":"Black Friday","rate":40}`, auth, 201, func(t *testing.T, r reply) {
			var v roomView
			r.json(t, &v)
			want := room.Defaults(fresh)
			want.Title, want.Rate = "Black Friday", 40
			want.Challenge = room.ChallengeOff // the server's default
			if v.Name != fresh || !reflect.DeepEqual(v.Settings.Settings, want) {
				t.Fatalf("created %+v, want %+v", v.Settings.Settings, want)
			}
		}},
		{"partial update keeps the rest", "PUT", "/api/admin/rooms/" + fresh, `{"paused":true,"maxActive":100}`, auth, 200, func(t *testing.T, r reply) {
			var v roomView
			r.json(t, &v)
			if v.Settings.Title != "Black Friday" || v.Settings.Rate != 40 || !v.Settings.Paused || v.Settings.MaxActive != 100 {
				t.Fatalf("after a partial update: %+v", v.Settings)
			}
		}},
		{"invalid setting", "PUT", "/api/admin/rooms/" + fresh, `{"rate":-1}`, auth, 400, nil},
		{"rate above the ceiling", "PUT", "/api/admin/rooms/" + fresh, `{"rate":100000}`, auth, 400, nil},
		{"rate below the floor", "PUT", "/api/admin/rooms/" + fresh, `{"rate":0.001}`, auth, 400, nil},
		{"order rate above the ceiling", "PUT", "/api/admin/rooms/" + fresh, `{"orderRate":10001}`, auth, 400, nil},
		{"mark sold out, then reopen", "PUT", "/api/admin/rooms/" + fresh, `{"soldOut":true}`, auth, 200, func(t *testing.T, r reply) {
			var v roomView
			r.json(t, &v)
			if !v.Live.SoldOut {
				t.Fatalf("not sold out: %s", r.body)
			}
		}},
		{"reopen", "PUT", "/api/admin/rooms/" + fresh, `{"soldOut":false,"mode":"passthrough"}`, auth, 200, func(t *testing.T, r reply) {
			var v roomView
			r.json(t, &v)
			if v.Live.SoldOut || v.Settings.Mode != "passthrough" {
				t.Fatalf("not reopened in passthrough: %s", r.body)
			}
		}},
		{"back to queue", "PUT", "/api/admin/rooms/" + fresh, `{"mode":"queue"}`, auth, 200, nil},
		{"unknown field", "PUT", "/api/admin/rooms/" + fresh, `{"rat":5}`, auth, 400, nil},
		{"not JSON", "PUT", "/api/admin/rooms/" + fresh, `rate=5`, auth, 400, nil},
		{"two objects", "PUT", "/api/admin/rooms/" + fresh, `{} {}`, auth, 400, nil},
		{"get with live counters", "GET", "/api/admin/rooms/" + h.room, "", auth, 200, func(t *testing.T, r reply) {
			var v roomView
			r.json(t, &v)
			if v.Settings.Rate != 1000 || v.Live.Waiting != 1 || v.Live.Issued != 1 {
				t.Fatalf("admin view %+v", v)
			}
			for _, why := range []string{`"leaves":0`, `"abandoned":0`, `"expired":0`, `"left":0`} {
				if !strings.Contains(r.body, why) {
					t.Fatalf("live counters lack %s: %s", why, r.body)
				}
			}
		}},
	}
	h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(t, tt.method, tt.path, tt.body, tt.hdr, nil)
			if r.status != tt.wantStatus {
				t.Fatalf("got %d %s, want %d", r.status, r.body, tt.wantStatus)
			}
			if r.status >= 400 {
				var e response.Error
				r.json(t, &e)
				if e.Code == "" || e.Message == "" {
					t.Fatalf("error without code or message: %s", r.body)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
	// A saved setting takes effect: the paused room admits nobody.
	id, _ := visitor.NewID()
	h.eng.Enter(context.Background(), fresh, id)
	h.credit(t, fresh, 50*time.Millisecond)
	if a, _ := h.eng.Admit(context.Background(), fresh, time.Second, []string{strings.Repeat("A", 43)}); len(a.Visitors) != 0 {
		t.Fatalf("a room paused through the admin API admitted %v", a.Visitors)
	}
}

func TestEnterRatePerIP(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.EnterRatePerIP, o.EnterBurstPerIP = 0.01, 2 })
	for i, want := range []int{200, 200, 429} {
		r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
		if r.status != want {
			t.Fatalf("enter %d: %d, want %d", i+1, r.status, want)
		}
		if want == 429 && (r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "rate_limited")) {
			t.Fatalf("refused enter: %v %s", r.header, r.body)
		}
	}
}

// TestStreamOfAKnownVisitorIsNotAnEnter: the page's POST enter takes
// from the address's enter limit, its stream does not (a crowd behind one
// address is charged once a buyer): a visitor who has a place connects and
// reconnects with the limit spent; a stream that makes a new visitor does
// take an enter (and one that makes a place: TestStreamThatMakesAPlaceIsAnEnter).
func TestStreamOfAKnownVisitorIsNotAnEnter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.EnterRatePerIP, o.EnterBurstPerIP = 0.001, 1 })
	in := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
	if in.status != 200 {
		t.Fatalf("enter: %d %s", in.status, in.body)
	}
	stream := func(c *http.Cookie) int {
		req, _ := http.NewRequest("GET", h.srv.URL+"/r/"+h.room+"/events", nil)
		if c != nil {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 3 {
		if got := stream(in.cookie()); got != 200 {
			t.Fatalf("stream %d of the visitor who entered: %d, want 200", i+1, got)
		}
	}
	if got := stream(nil); got != 429 {
		t.Fatalf("stream of a new visitor past the limit: %d, want 429", got)
	}
}

// TestEnterRateDefaults: the per-address limit is a safety valve far
// above human rates (200/s, burst 600), not a cap on a crowd behind one
// address: 300 joins at once from one address all get in.
func TestEnterRateDefaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.EnterRatePerIP, o.EnterBurstPerIP = 0, 0 })
	if l := h.web.enters; l.perSecond != DefaultEnterRatePerIP || l.burst != 3*DefaultEnterRatePerIP {
		t.Fatalf("defaults %v/s burst %d, want %d/s burst %d", l.perSecond, l.burst, DefaultEnterRatePerIP, 3*DefaultEnterRatePerIP)
	}
	for i := range 300 {
		if r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil); r.status != 200 {
			t.Fatalf("join %d from one address: %d %s", i+1, r.status, r.body)
		}
	}
}

func TestAdminDisabledWithoutToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.AdminToken = "" })
	r := h.do(t, "GET", "/api/admin/rooms/"+h.room, "", map[string]string{"Authorization": "Bearer "}, nil)
	if r.status != 403 || !strings.Contains(r.body, "admin_disabled") {
		t.Fatalf("admin without ADMIN_TOKEN: %d %s", r.status, r.body)
	}
}

func TestRedisDownFailsClosed(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	h := newHarness(t, func(o *Options) {
		eng := queue.New(dead, queue.DefaultNamespace(dead))
		o.Queue, o.Rooms, o.CampaignCounts = eng, eng, eng
		o.Health = func(ctx context.Context) error { return dead.Ping(ctx).Err() }
	})
	for _, path := range []string{"/api/rooms/" + h.room + "/queue", "/healthz"} {
		method := "POST"
		if path == "/healthz" {
			method = "GET"
		}
		r := h.do(t, method, path, "", nil, nil)
		var e response.Error
		r.json(t, &e)
		if r.status != 503 || e.Code != "unavailable" || r.header.Get("Retry-After") == "" {
			t.Fatalf("%s with Redis down: %d %s", path, r.status, r.body)
		}
		if strings.Contains(r.body, "127.0.0.1:1") || strings.Contains(r.body, "dial") {
			t.Fatalf("%s leaks the internal error: %s", path, r.body)
		}
	}
}

type panicky struct{ Queue }

func (panicky) EnterWithProof(context.Context, string, string, string, queue.Campaign, queue.Proof) (queue.Position, error) {
	panic(errors.New("boom"))
}

func (panicky) EnterNew(context.Context, string, string, string, queue.Campaign) (queue.Position, error) {
	panic(errors.New("boom"))
}

func TestPanicIsAJSONError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.Queue = panicky{o.Queue} })
	r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
	if r.status != 500 || !strings.Contains(r.body, `"error":"internal"`) || strings.Contains(r.body, "goroutine") {
		t.Fatalf("panic answered %d %s", r.status, r.body)
	}
}

func TestHealthMetricsRobots(t *testing.T) {
	t.Parallel()
	var metrics *Metrics
	h := newHarness(t, func(o *Options) { metrics = o.Metrics })
	h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
	private := httptest.NewServer(metrics.Handler())
	t.Cleanup(private.Close)
	tests := []struct {
		base, path string
		status     int
		want       string
	}{
		{h.srv.URL, "/healthz", 200, `"status":"ok"`},
		{h.srv.URL, "/robots.txt", 200, "User-agent"},
		// The metrics are private: not on the public routes.
		{h.srv.URL, "/metrics", 404, "There is nothing here"},
		{private.URL, "/metrics", 200, "waitingroom_enter_duration_seconds_count 1"},
		{private.URL, "/metrics", 200, "process_resident_memory_bytes"},
	}
	for _, tt := range tests {
		resp, err := http.Get(tt.base + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s%s: %d, want %d with %q", tt.base, tt.path, resp.StatusCode, tt.status, tt.want)
		}
	}
}

// discardWriter is a ResponseWriter that keeps only the status: the
// benchmark measures the handlers, not a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header { return w.h }

func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }

func (w *discardWriter) WriteHeader(code int) { w.code = code }

// BenchmarkEnterHandler measures the server's handler chain for an enter
// of a new visitor (POST /api/rooms/{room}/queue without a cookie), from
// the outermost middleware to the answer, against the real Redis; the
// HTTP server's own reading and writing are left out.
func BenchmarkEnterHandler(b *testing.B) {
	rdb := servicetest.Redis(b)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(b, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		b.Fatal(err)
	}
	signer, err := visitor.NewSigner([]byte("test-secret-key-0123456789"))
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := NewMetrics()
	hub := newHub(eng, sse.Options{}, metrics, log)
	b.Cleanup(hub.Close)
	s, err := New(Options{Queue: eng, Rooms: eng, Orders: embeddedOrders(b, eng, log), Signer: signer, Metrics: metrics, Log: log, Hub: hub,
		Health:         func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		EnterRatePerIP: 1e9, EnterBurstPerIP: 1e9})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	b.ReportAllocs()
	b.SetParallelism(32) // enters arrive together, as in a sale: they batch
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest("POST", "/api/rooms/"+name+"/queue", nil)
			r.RemoteAddr = "192.0.2.1:1234"
			w := &discardWriter{h: http.Header{}}
			h.ServeHTTP(w, r)
			if w.code != http.StatusOK {
				b.Errorf("enter answered %d", w.code)
				return
			}
		}
	})
	// This process's CPU an enter, Redis's own left out: wall time per
	// enter counts Redis too when it shares the cores.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the user and system CPU time this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
