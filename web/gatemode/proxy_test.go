package gatemode

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/token"
)

// proxyDB is the Redis database of the reverse proxy's tests.
const proxyDB = 8

// echoed is what the test origin saw of a request.
type echoed struct {
	Method, Path, RawQuery, Body, Host, Cookie string
	XFF, XFH, XFP                              string
}

// echoOrigin answers every request with what it saw, and counts them.
func echoOrigin(t *testing.T) (*httptest.Server, *int) {
	t.Helper()
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Origin", "yes")
		json.NewEncoder(w).Encode(echoed{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Body: string(b),
			Host: r.Host, Cookie: r.Header.Get("Cookie"),
			XFF: r.Header.Get("X-Forwarded-For"), XFH: r.Header.Get("X-Forwarded-Host"), XFP: r.Header.Get("X-Forwarded-Proto")})
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// proxyRig is a Gate with its Proxy in front of an origin, on Redis
// database proxyDB.
type proxyRig struct {
	gate  *Gate
	eng   *queue.Engine
	proxy *Proxy
	url   string // the proxy listener
	rdb   redis.UniversalClient
	keys  *pass.Keys
	// clock is the engine's: the tests move it where credit must accrue
	// or a session age.
	clock *clockwork.FakeClock
}

// newProxyRig starts a proxy to origin; mut changes its options.
func newProxyRig(t *testing.T, origin string, mut func(*ProxyOptions)) *proxyRig {
	t.Helper()
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, proxyDB))
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	clock := clockwork.NewFakeClockAt(time.Now())
	eng.SetClock(clock.Now)
	keys, err := pass.Derive([]byte("proxy-test-secret-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	gt := newTestGate(t, func(d *Deps) {
		d.Rooms, d.Gates, d.PassKeys = eng, eng, keys
		d.PublicURL = "https://queue.example"
	})
	o := ProxyOptions{Origin: origin, MainAddr: "127.0.0.1:8080", Refresh: 50 * time.Millisecond, Rooms: eng}
	if mut != nil {
		mut(&o)
	}
	p, err := gt.NewProxy(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(p.Handler())
	t.Cleanup(srv.Close)
	return &proxyRig{gate: gt, eng: eng, proxy: p, url: srv.URL, rdb: rdb, keys: keys, clock: clock}
}

// gateRoom saves a room that protects prefixes, and waits until the proxy
// knows it.
func (pr *proxyRig) gateRoom(t *testing.T, failOpen bool, prefixes ...string) string {
	t.Helper()
	name := servicetest.RoomName(t, pr.rdb)
	set := room.Defaults(name)
	set.Rate = 1000
	set.Gate.TargetURL = "https://shop.example/checkout"
	set.Gate.FailOpen = failOpen
	set.Gate.Protect = prefixes
	if err := pr.eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		table, _ := pr.proxy.protect.current(context.Background(), time.Second)
		for _, r := range table {
			if r.room == name {
				return name
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy never read room %s's protect prefixes", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// session lets a visitor through room's line and redeems a pass into a
// live session, as the hand-off does; it returns the wr_gate cookie.
func (pr *proxyRig) session(t *testing.T, name string) *http.Cookie {
	t.Helper()
	jti, sid := pr.mint(t, name), testID(t)
	if _, err := pr.eng.Redeem(context.Background(), name, jti, sid); err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: GateCookie, Value: name + "." + sid}
}

// mint lets a visitor through room's line and mints its pass; it returns
// the pass's jti.
func (pr *proxyRig) mint(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	vis, jti := testID(t), testID(t)
	if _, err := pr.eng.Enter(ctx, name, vis); err != nil {
		t.Fatal(err)
	}
	pr.eng.Admit(ctx, name, time.Second, nil) // the rate clock starts
	pr.clock.Advance(20 * time.Millisecond)
	toks, _ := token.NewBatch(1)
	if adm, err := pr.eng.Admit(ctx, name, time.Second, toks); err != nil || len(adm.Visitors) != 1 {
		t.Fatalf("admit: %+v %v", adm, err)
	}
	if _, err := pr.eng.MintPass(ctx, name, vis, toks[0], jti); err != nil {
		t.Fatal(err)
	}
	return jti
}

func testID(t *testing.T) string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// noRedirects is a client that shows redirects instead of following them.
var proxyClient = &http.Client{Timeout: 10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type proxied struct {
	status int
	header http.Header
	body   string
	echo   echoed // when the origin answered
}

func (pr *proxyRig) do(t *testing.T, method, path, body string, hdr map[string]string, cookies ...*http.Cookie) proxied {
	t.Helper()
	req, err := http.NewRequest(method, pr.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if v := hdr["Host"]; v != "" {
		req.Host = v
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := proxyClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := proxied{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if resp.Header.Get("X-Origin") == "yes" {
		json.Unmarshal(b, &out.echo)
	}
	return out
}

// TestProxyPassesThrough: paths that no room protects reach the origin as
// they were sent (method, path, query, body, cookies), with the
// X-Forwarded headers of this hop, and the origin's answer comes back.
func TestProxyPassesThrough(t *testing.T) {
	origin, _ := echoOrigin(t)
	pr := newProxyRig(t, origin.URL, nil)
	pr.gateRoom(t, false, "/checkout")
	host := strings.TrimPrefix(pr.url, "http://")
	originHost := strings.TrimPrefix(origin.URL, "http://")
	for _, tt := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     echoed
	}{
		{"get with a query", "GET", "/products?id=7&q=a%20b", "", nil,
			echoed{Method: "GET", Path: "/products", RawQuery: "id=7&q=a%20b"}},
		{"post with a body", "POST", "/cart", "item=7&n=2", map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			echoed{Method: "POST", Path: "/cart", Body: "item=7&n=2"}},
		{"put", "PUT", "/api/cart/1", `{"n":3}`, nil, echoed{Method: "PUT", Path: "/api/cart/1", Body: `{"n":3}`}},
		{"delete", "DELETE", "/api/cart/1", "", nil, echoed{Method: "DELETE", Path: "/api/cart/1"}},
		{"cookies stay, the gate's too", "GET", "/", "", map[string]string{"Cookie": "shop=1; wr_gate=x.y"},
			echoed{Method: "GET", Path: "/", Cookie: "shop=1; wr_gate=x.y"}},
		{"not under the prefix", "GET", "/checkouts", "", nil, echoed{Method: "GET", Path: "/checkouts"}},
		{"a forged X-Forwarded-For is dropped", "GET", "/", "", map[string]string{"X-Forwarded-For": "6.6.6.6", "X-Forwarded-Proto": "https"},
			echoed{Method: "GET", Path: "/"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := pr.do(t, tt.method, tt.path, tt.body, tt.hdr)
			if r.status != 200 || r.header.Get("X-Origin") != "yes" {
				t.Fatalf("%d %s, want the origin's 200", r.status, r.body)
			}
			e := r.echo
			if e.Method != tt.want.Method || e.Path != tt.want.Path || e.RawQuery != tt.want.RawQuery || e.Body != tt.want.Body ||
				e.Cookie != tt.want.Cookie {
				t.Fatalf("the origin saw %+v, want %+v", e, tt.want)
			}
			if e.XFF != "127.0.0.1" || e.XFH != host || e.XFP != "http" || e.Host != originHost {
				t.Fatalf("forwarding headers %+v: want X-Forwarded-For 127.0.0.1, -Host %s, -Proto http, Host %s", e, host, originHost)
			}
		})
	}
}

// TestProxyTrustedForwarding: a trusted proxy in front (a TLS
// terminator) keeps its client and its https in the X-Forwarded headers.
func TestProxyTrustedForwarding(t *testing.T) {
	origin, _ := echoOrigin(t)
	pr := newProxyRig(t, origin.URL, nil)
	pr.gate.d.Trusted = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	r := pr.do(t, "GET", "/", "", map[string]string{"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "shop.example"})
	if r.echo.XFF != "203.0.113.9, 127.0.0.1" || r.echo.XFP != "https" || r.echo.XFH != "shop.example" {
		t.Fatalf("the origin saw %+v behind a trusted proxy", r.echo)
	}
}

// TestProxyStreams: the origin's answer reaches the client as it is
// written, not when it ends.
func TestProxyStreams(t *testing.T) {
	release := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "last\n")
	}))
	t.Cleanup(origin.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	pr := newProxyRig(t, origin.URL, nil)
	resp, err := http.Get(pr.url + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("transfer encoding %v, want chunked", resp.TransferEncoding)
	}
	lines := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l := <-lines:
		if l != "first" {
			t.Fatalf("first line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first chunk did not reach the client before the origin finished")
	}
	close(release)
	if l := <-lines; l != "last" {
		t.Fatalf("last line %q", l)
	}
}

// TestProxyProtects: paths under a room's prefix need a live session of
// that room; without one, GET and HEAD go to the room's page and other
// methods are refused. The longest prefix wins, and prefixes end on path
// segment boundaries.
func TestProxyProtects(t *testing.T) {
	origin, _ := echoOrigin(t)
	pr := newProxyRig(t, origin.URL, nil)
	shop := pr.gateRoom(t, false, "/checkout", "/pay/")
	vip := pr.gateRoom(t, false, "/checkout/vip")
	shopSession, vipSession := pr.session(t, shop), pr.session(t, vip)
	toShop, toVIP := "https://queue.example/r/"+shop, "https://queue.example/r/"+vip
	for _, tt := range []struct {
		name, method, path string
		cookie             *http.Cookie
		status             int
		location           string // for 303
	}{
		{"the prefix itself", "GET", "/checkout", nil, 303, toShop},
		{"below the prefix", "GET", "/checkout/step/2?x=1", nil, 303, toShop},
		{"a path parameter", "GET", "/checkout;jsessionid=1", nil, 303, toShop},
		{"another case", "GET", "/CheckOut", nil, 303, toShop},
		{"dot segments", "GET", "/shop/../checkout", nil, 303, toShop},
		{"a doubled slash", "GET", "//checkout", nil, 303, toShop},
		{"an escaped letter", "GET", "/%63heckout", nil, 303, toShop},
		{"head", "HEAD", "/checkout", nil, 303, toShop},
		{"post is refused", "POST", "/checkout", nil, 403, ""},
		{"not a segment boundary", "GET", "/checkouts", nil, 200, ""},
		{"a sibling", "GET", "/check", nil, 200, ""},
		{"a trailing-slash prefix", "GET", "/pay/card", nil, 303, toShop},
		{"above a trailing-slash prefix", "GET", "/pay", nil, 200, ""},
		{"the longest prefix wins", "GET", "/checkout/vip/seat", nil, 303, toVIP},
		{"with a session", "GET", "/checkout/step/2", shopSession, 200, ""},
		{"post with a session", "POST", "/checkout", shopSession, 200, ""},
		{"another room's session", "GET", "/checkout/vip", shopSession, 303, toVIP},
		{"the right room's session", "GET", "/checkout/vip", vipSession, 200, ""},
		{"a forged session", "GET", "/checkout", &http.Cookie{Name: GateCookie, Value: shop + "." + strings.Repeat("A", 22)}, 303, toShop},
		{"a malformed cookie", "GET", "/checkout", &http.Cookie{Name: GateCookie, Value: "junk"}, 303, toShop},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cs []*http.Cookie
			if tt.cookie != nil {
				cs = append(cs, tt.cookie)
			}
			r := pr.do(t, tt.method, tt.path, "", nil, cs...)
			if r.status != tt.status {
				t.Fatalf("%s %s: %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.status)
			}
			switch tt.status {
			case 200:
				if r.header.Get("X-Origin") != "yes" {
					t.Fatalf("not the origin's answer: %s", r.body)
				}
			case 303:
				if r.header.Get("Location") != tt.location || r.header.Get("X-Origin") != "" {
					t.Fatalf("sent to %q, want %q", r.header.Get("Location"), tt.location)
				}
			case 403:
				if !strings.Contains(r.body, `href="`+toShop+`"`) || r.header.Get("X-Origin") != "" {
					t.Fatalf("the refusal does not link to the room: %s", r.body)
				}
			}
		})
	}
	for outcome, want := range map[string]float64{proxyAdmitted: 3, proxySentToRoom: 13, proxyRefused: 1, proxyPassed: 3} {
		if got := testutil.ToFloat64(pr.proxy.requests.WithLabelValues(outcome)); got != want {
			t.Errorf("waitingroom_proxy_requests_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	// Two cookies of two rooms: each room's path finds its own.
	if r := pr.do(t, "GET", "/checkout/vip", "", nil, shopSession, vipSession); r.status != 200 {
		t.Fatalf("with both rooms' sessions: %d", r.status)
	}

	// An ended session sends its buyer to the room again.
	id := strings.TrimPrefix(shopSession.Value, shop+".")
	if err := pr.eng.EndSession(context.Background(), shop, id); err != nil {
		t.Fatal(err)
	}
	if r := pr.do(t, "GET", "/checkout", "", nil, shopSession); r.status != 303 || r.header.Get("Location") != toShop {
		t.Fatalf("after the session ended: %d %s", r.status, r.header.Get("Location"))
	}
}

// rawGet sends "GET target" to the proxy as written, on its own
// connection, and returns the status and whether the origin answered.
func (pr *proxyRig) rawGet(t *testing.T, target string) (int, bool) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(pr.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Origin") == "yes"
}

// TestProxyGuardsEveryForm: the spellings under which a shop's router
// may serve a protected path are guarded (303 to the room) or refused
// (400), and never reach the origin without a session.
func TestProxyGuardsEveryForm(t *testing.T) {
	origin, _ := echoOrigin(t)
	pr := newProxyRig(t, origin.URL, nil)
	pr.gateRoom(t, false, "/checkout")
	for _, tt := range []struct {
		target string
		status int
	}{
		{"/checkout.json", 303},
		{"/checkout.", 303},
		{"/checkout%20", 303},
		{"/checkout+", 303},
		{"/CHECKOUT", 303},
		{"/checkout/", 303},
		{"/checkout;x", 303},
		{"/checkout;jsessionid=1/step", 303},
		{"/%2e%2e/checkout", 303},
		{"/x/%2e%2e/checkout", 303},
		{"/..;/checkout", 303},
		{"/x/..;/checkout", 303},
		{"/./checkout", 303},
		{"//checkout", 303},
		{"/foo/../checkout", 303},
		{"/chec%E2%84%AAout", 303},
		{"/checkout?x=1", 303},
		{"http://elsewhere.example/checkout", 303},
		{"/checkout%00", 400},
		{"/checkout%09", 400},
		{"/%5Ccheckout", 400},
		{"/\\checkout", 400},
		{"/x%2f..%2fcheckout", 400},
		{"/%2563heckout", 400},
		{"/%c0%afcheckout", 400},
		{"/x?/checkout", 200},
		{"/checkouts", 200},
		{"/checkout-help", 200},
	} {
		status, reached := pr.rawGet(t, tt.target)
		if status != tt.status || reached != (tt.status == 200) {
			t.Errorf("GET %s: %d (origin answered: %v), want %d", tt.target, status, reached, tt.status)
		}
	}
	if got := testutil.ToFloat64(pr.proxy.requests.WithLabelValues(proxyBadPath)); got != 7 {
		t.Errorf("waitingroom_proxy_requests_total{outcome=%q} = %v, want 7", proxyBadPath, got)
	}
}

// TestProxyRenewsIdleSessions: a protected request renews an idle-mode
// session.
func TestProxyRenewsIdleSessions(t *testing.T) {
	origin, _ := echoOrigin(t)
	pr := newProxyRig(t, origin.URL, nil)
	name := pr.gateRoom(t, false, "/checkout")
	c := pr.session(t, name)
	id := strings.TrimPrefix(c.Value, name+".")
	before, err := pr.eng.TouchSession(context.Background(), name, id, false)
	if err != nil {
		t.Fatal(err)
	}
	pr.clock.Advance(1100 * time.Millisecond)
	if r := pr.do(t, "GET", "/checkout", "", nil, c); r.status != 200 {
		t.Fatalf("with a session: %d", r.status)
	}
	after, err := pr.eng.TouchSession(context.Background(), name, id, false)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Expires.After(before.Expires) {
		t.Fatalf("the session was not renewed: expires %v, then %v", before.Expires, after.Expires)
	}
}

// TestProxyOwnPaths: POST /_waitingroom/enter goes to the gate's enter
// handler, never to the origin, nor does anything else under
// /_waitingroom/.
func TestProxyOwnPaths(t *testing.T) {
	origin, seen := echoOrigin(t)
	pr := newProxyRig(t, origin.URL, func(o *ProxyOptions) {
		o.Enter = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	})
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/_waitingroom/enter", http.StatusTeapot}, // the stand-in handler
		{"GET", "/_waitingroom/enter", http.StatusMethodNotAllowed},
		{"POST", "/_waitingroom/other", http.StatusNotFound},
		{"POST", "/x/../_waitingroom/enter", http.StatusNotFound},
		{"POST", "/_WaitingRoom/enter", http.StatusNotFound},
	} {
		r := pr.do(t, tt.method, tt.path, "pass=secret&next=/", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		if r.status != tt.status {
			t.Fatalf("%s %s: %d, want %d", tt.method, tt.path, r.status, tt.status)
		}
	}
	if *seen != 0 {
		t.Fatalf("the origin saw %d of the gate's requests", *seen)
	}
}

// TestProxyHandOff is the buyer's way in reverse-proxy mode: the pass is
// posted to /_waitingroom/enter on the shop's host (the proxy), redeemed
// there into the wr_gate cookie, and the buyer reaches the protected page.
// The origin never sees the pass, and the pass works once.
func TestProxyHandOff(t *testing.T) {
	var bodies []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.Method+" "+r.URL.RequestURI()+" "+string(b))
		w.Header().Set("X-Origin", "yes")
		io.WriteString(w, "checkout page")
	}))
	t.Cleanup(origin.Close)
	pr := newProxyRig(t, origin.URL, nil)
	name := pr.gateRoom(t, false, "/checkout")
	jti := pr.mint(t, name)
	now := time.Now()
	compact, err := pr.keys.Sign(pass.Claims{Room: name, Subject: "s", ID: jti, Audience: "https://shop.example",
		Issuer: "https://queue.example", IssuedAt: now, Expiry: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"pass": {compact}, "next": {"/checkout/step?x=1"}}.Encode()
	formHdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://queue.example", "Host": "shop.example"}
	r := pr.do(t, "POST", "/_waitingroom/enter", form, formHdr)
	if r.status != 303 || r.header.Get("Location") != "/checkout/step?x=1" {
		t.Fatalf("enter: %d to %q: %s", r.status, r.header.Get("Location"), r.body)
	}
	var c *http.Cookie
	for _, sc := range (&http.Response{Header: r.header}).Cookies() {
		if sc.Name == GateCookie {
			c = sc
		}
	}
	if c == nil || !strings.HasPrefix(c.Value, name+".") {
		t.Fatalf("enter set no wr_gate cookie of %s: %v", name, r.header["Set-Cookie"])
	}
	if r := pr.do(t, "GET", "/checkout/step?x=1", "", nil, &http.Cookie{Name: c.Name, Value: c.Value}); r.status != 200 || r.body != "checkout page" {
		t.Fatalf("the protected page with the new session: %d %s", r.status, r.body)
	}
	if r := pr.do(t, "POST", "/_waitingroom/enter", form, formHdr); r.status != http.StatusConflict {
		t.Fatalf("the pass worked twice: %d", r.status)
	}
	if len(bodies) != 1 || strings.Contains(strings.Join(bodies, "\n"), compact) {
		t.Fatalf("the origin saw %q", bodies)
	}
}

// TestProxyProtectedAnswersArePrivate: a protected page let through may
// not be kept by a shared cache in front of the proxy; other pages keep
// the origin's Cache-Control.
func TestProxyProtectedAnswersArePrivate(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=60, s-maxage=600")
		w.Header().Set("X-Origin", "yes")
	}))
	t.Cleanup(origin.Close)
	pr := newProxyRig(t, origin.URL, nil)
	name := pr.gateRoom(t, false, "/checkout")
	c := pr.session(t, name)
	for _, tt := range []struct{ path, want string }{
		{"/checkout/cart", "private, max-age=60"},
		{"/products", "public, max-age=60, s-maxage=600"},
	} {
		r := pr.do(t, "GET", tt.path, "", nil, c)
		if r.status != 200 || r.header.Get("Cache-Control") != tt.want {
			t.Fatalf("%s: %d, Cache-Control %q, want %q", tt.path, r.status, r.header.Get("Cache-Control"), tt.want)
		}
	}
}

// TestProxyOriginDown: an origin that cannot be reached gets a 502 page
// in the visitor's language, with no internal error in it.
func TestProxyOriginDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	pr := newProxyRig(t, dead, nil)
	for _, tt := range []struct{ lang, want string }{
		{"ko-KR,ko;q=0.9", "쇼핑몰이 응답하지 않습니다"},
		{"en-US", "The shop is not answering"},
	} {
		r := pr.do(t, "GET", "/", "", map[string]string{"Accept-Language": tt.lang})
		if r.status != http.StatusBadGateway || !strings.Contains(r.body, tt.want) ||
			!strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %q %s", tt.lang, r.status, r.header.Get("Content-Type"), r.body)
		}
		if strings.Contains(r.body, "dial") || strings.Contains(r.body, ln.Addr().String()) || strings.Contains(r.body, "goroutine") {
			t.Fatalf("the page leaks the error: %s", r.body)
		}
	}
}

// switchedRooms reads the rooms from one engine, then another.
type switchedRooms struct {
	mu  sync.Mutex
	eng *queue.Engine
}

func (r *switchedRooms) set(eng *queue.Engine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.eng = eng
}

func (r *switchedRooms) get() *queue.Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.eng
}

func (r *switchedRooms) Rooms(ctx context.Context) ([]string, error) {
	if e := r.get(); e != nil {
		return e.Rooms(ctx)
	}
	return nil, errors.New("no engine yet")
}

func (r *switchedRooms) RoomsSettings(ctx context.Context, names []string) (map[string]room.Settings, error) {
	return r.get().RoomsSettings(ctx, names)
}

// TestProxyRedisDown: when sessions cannot be checked, a room that fails
// open lets its buyers through and one that fails closed answers "please
// retry" (503, Retry-After); the protect prefixes outlive the outage.
func TestProxyRedisDown(t *testing.T) {
	origin, _ := echoOrigin(t)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	deadEng := queue.New(dead, queue.DefaultNamespace(dead))
	rooms := &switchedRooms{}
	pr := newProxyRig(t, origin.URL, func(o *ProxyOptions) { o.Sessions, o.Rooms = deadEng, rooms })
	rooms.set(pr.eng)
	open := pr.gateRoom(t, true, "/open")
	closed := pr.gateRoom(t, false, "/closed")
	c := pr.session(t, closed)

	// Redis goes away: the next reads of the prefixes fail, the last ones stay.
	rooms.set(deadEng)
	if err := pr.proxy.protect.load(context.Background()); err == nil {
		t.Fatal("a read from the dead Redis did not fail")
	}
	for _, tt := range []struct {
		name, path string
		cookie     *http.Cookie
		status     int
		want       string
	}{
		{"fail open, with a cookie", "/open/x", &http.Cookie{Name: GateCookie, Value: open + "." + strings.Repeat("A", 22)}, 200, ""},
		{"fail open, without one", "/open/x", nil, 200, ""},
		{"fail closed", "/closed/x", c, 503, "Please retry in a moment"},
		{"fail closed, without a cookie", "/closed/x", nil, 503, "Please retry in a moment"},
		{"unprotected", "/elsewhere", nil, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cs []*http.Cookie
			if tt.cookie != nil {
				cs = append(cs, tt.cookie)
			}
			r := pr.do(t, "GET", tt.path, "", nil, cs...)
			if r.status != tt.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
			}
			switch tt.status {
			case 200:
				if r.header.Get("X-Origin") != "yes" {
					t.Fatalf("not the origin's answer: %s", r.body)
				}
			case 303:
				if r.header.Get("Location") != tt.want {
					t.Fatalf("sent to %q", r.header.Get("Location"))
				}
			case 503:
				if !strings.Contains(r.body, tt.want) || r.header.Get("Retry-After") == "" || strings.Contains(r.body, "127.0.0.1:1") {
					t.Fatalf("please-retry page: %v %s", r.header, r.body)
				}
			}
		})
	}
	if o, c := testutil.ToFloat64(pr.proxy.requests.WithLabelValues(proxyFailOpen)), testutil.ToFloat64(pr.proxy.requests.WithLabelValues(proxyFailClosed)); o != 2 || c != 2 {
		t.Fatalf("fail_open %v, fail_closed %v: want 2 and 2", o, c)
	}
}

// recordedRooms is the database's record of the rooms, in memory.
type recordedRooms []store.RoomRecord

func (r recordedRooms) Rooms(context.Context) ([]store.RoomRecord, error) { return r, nil }

// TestProxyStartsDuringAnOutage: a proxy that cannot read Redis when it
// starts guards the prefixes of the database's record of the rooms, each
// in its room's fail mode; with no record either, it answers "please
// retry" rather than let anyone through unchecked.
func TestProxyStartsDuringAnOutage(t *testing.T) {
	origin, seen := echoOrigin(t)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	deadEng := queue.New(dead, queue.DefaultNamespace(dead))
	open, closed := room.Defaults("open"), room.Defaults("closed")
	open.Gate.Protect, open.Gate.FailOpen = []string{"/checkout"}, true
	closed.Gate.Protect = []string{"/tickets"}
	record := recordedRooms{{Name: "open", Settings: open}, {Name: "closed", Settings: closed}}
	for _, tt := range []struct {
		name     string
		recorded RecordedRooms
		path     string
		status   int
	}{
		{"a recorded prefix failing open", record, "/checkout", 200},
		{"a recorded prefix failing closed", record, "/tickets/1", 503},
		{"elsewhere", record, "/products", 200},
		{"no record", nil, "/products", 503},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pr := newProxyRig(t, origin.URL, func(o *ProxyOptions) { o.Rooms, o.Sessions, o.Recorded = deadEng, deadEng, tt.recorded })
			pr.proxy.firstWait = 1500 * time.Millisecond
			before := *seen
			r := pr.do(t, "GET", tt.path, "", nil)
			if r.status != tt.status || (r.status == 200) != (*seen > before) {
				t.Fatalf("%d %s (origin reached: %v), want %d", r.status, r.body, *seen > before, tt.status)
			}
		})
	}
}

// TestProxyRoomBase: without PUBLIC_URL, buyers are sent to the room on
// the request's host name at the main listener's port.
func TestProxyRoomBase(t *testing.T) {
	origin, _ := echoOrigin(t)
	pr := newProxyRig(t, origin.URL, func(o *ProxyOptions) { o.MainAddr = "[::]:8080" })
	pr.gate.d.PublicURL = ""
	name := pr.gateRoom(t, false, "/checkout")
	u, _ := url.Parse(pr.url)
	r := pr.do(t, "GET", "/checkout", "", nil)
	if want := "http://" + u.Hostname() + ":8080/r/" + name; r.status != 303 || r.header.Get("Location") != want {
		t.Fatalf("%d to %q, want %q", r.status, r.header.Get("Location"), want)
	}
}

// TestProxyUpgrades: a connection upgrade (a WebSocket) goes through the
// proxy both ways, and outlives the per-write deadline.
func TestProxyUpgrades(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "no upgrade", http.StatusBadRequest)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		rw.Flush()
		buf := make([]byte, 4)
		for {
			if _, err := io.ReadFull(rw, buf); err != nil {
				return
			}
			c.Write(buf)
		}
	}))
	t.Cleanup(origin.Close)
	pr := newProxyRig(t, origin.URL, func(o *ProxyOptions) { o.WriteTimeout = 200 * time.Millisecond })
	c, err := net.Dial("tcp", strings.TrimPrefix(pr.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: shop\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	for _, msg := range []string{"ping", "pong"} {
		time.Sleep(400 * time.Millisecond) // past the write deadline
		io.WriteString(c, msg)
		got := make([]byte, 4)
		if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
			t.Fatalf("echo of %q: %q %v", msg, got, err)
		}
	}
}

// TestProxyCutsAClientThatStopsReading: a long answer goes on while the
// client reads, and a client that stops reading is cut after the write
// timeout rather than held.
func TestProxyCutsAClientThatStopsReading(t *testing.T) {
	chunk := strings.Repeat("x", 64<<10)
	done := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		for i := 0; i < 2000; i++ { // 128 MiB at most: more than any socket buffers
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(origin.Close)
	pr := newProxyRig(t, origin.URL, func(o *ProxyOptions) { o.WriteTimeout = 300 * time.Millisecond })
	c, err := net.Dial("tcp", strings.TrimPrefix(pr.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /big HTTP/1.1\r\nHost: shop\r\n\r\n")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy still held a client that stopped reading")
	}
}
