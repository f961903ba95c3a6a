package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/gate"
	"waitingroom/server/adapt"
	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/web/gatemode"
	"waitingroom/web/response"
)

// The shop of the gate tests' room.
const (
	testShopOrigin = "https://shop.example"
	testTargetURL  = testShopOrigin + "/checkout?step=1"
)

// gateHarness is a harness whose room sends its buyers on to
// testTargetURL, with an API key.
type gateHarness struct {
	*harness
	keys   *pass.Keys
	apiKey string
}

func testPassKeys(t *testing.T) *pass.Keys {
	t.Helper()
	k, err := pass.Derive([]byte("gate test secret 0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newGateHarness(t *testing.T, mut func(*Options)) *gateHarness {
	t.Helper()
	return gateHarnessOn(t, newHarness, mut)
}

// newClockedGateHarness is newGateHarness on the fake clock of
// newClockedHarness.
func newClockedGateHarness(t *testing.T, mut func(*Options)) *gateHarness {
	t.Helper()
	return gateHarnessOn(t, newClockedHarness, mut)
}

// gateHarnessOn is newGateHarness on the harness that start returns.
func gateHarnessOn(t *testing.T, start func(*testing.T, func(*Options)) *harness, mut func(*Options)) *gateHarness {
	t.Helper()
	keys := testPassKeys(t)
	h := start(t, func(o *Options) {
		o.PassKeys, o.Gates = keys, o.Queue.(*queue.Engine)
		if mut != nil {
			mut(o)
		}
	})
	g := &gateHarness{harness: h, keys: keys}
	g.setGate(t, func(s *room.Settings) { s.Gate.TargetURL, s.ShopName = testTargetURL, "Demo Shop" })
	r := h.do(t, "POST", "/api/admin/rooms/"+h.room+"/apikey", "", map[string]string{"Authorization": "Bearer " + testAdminToken}, nil)
	var k struct {
		APIKey string `json:"apiKey"`
	}
	r.json(t, &k)
	if r.status != 201 || !strings.HasPrefix(k.APIKey, "wrk_") || len(k.APIKey) != 4+43 {
		t.Fatalf("new API key: %d %s", r.status, r.body)
	}
	g.apiKey = k.APIKey
	return g
}

// setGate changes the room's settings in Redis.
func (g *gateHarness) setGate(t *testing.T, change func(*room.Settings)) {
	t.Helper()
	set, err := g.eng.Room(context.Background(), g.room)
	if err != nil {
		t.Fatal(err)
	}
	change(&set)
	if err := g.eng.SaveRoom(context.Background(), g.room, set); err != nil {
		t.Fatal(err)
	}
}

func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// missingRoom is a valid room name that no test creates: prefix and 8
// random hex digits (a base64 token may hold '_', which room names refuse).
func missingRoom(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// readyVisitor enters a new visitor and admits it: its cookie and entry
// token.
func (g *gateHarness) readyVisitor(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	q := "/api/rooms/" + g.room + "/queue"
	c := g.do(t, "POST", q, "", nil, nil).cookie()
	g.admitNext(t, randomToken(t))
	var p queue.Position
	g.do(t, "GET", q+"/position", "", nil, c).json(t, &p)
	if p.EntryToken == nil {
		t.Fatalf("not READY: %+v", p)
	}
	return c, *p.EntryToken
}

// testShopHost is the host of the test room's shop.
const testShopHost = "shop.example"

// form posts a browser's form to path. The callback on the shop's host,
// /_waitingroom/enter, is posted with Host testShopHost unless hdr names
// another.
func (g *gateHarness) form(t *testing.T, path string, f url.Values, hdr map[string]string, c *http.Cookie) reply {
	t.Helper()
	req, _ := http.NewRequest("POST", g.srv.URL+path, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if path == gatemode.EnterPath {
		req.Host = testShopHost
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if v := hdr["Host"]; v != "" {
		req.Host = v
	}
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := noRedirects().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b.String()}
}

var passField = regexp.MustCompile(`name="pass" value="([^"]+)"`)

// handoff asks for the pass of a READY visitor: the hand-off page.
func (g *gateHarness) handoff(t *testing.T, c *http.Cookie, tok string) reply {
	t.Helper()
	return g.form(t, "/r/"+g.room+"/pass", url.Values{"entry_token": {tok}}, nil, c)
}

// passOf returns the pass that a hand-off page carries.
func passOf(t *testing.T, r reply) string {
	t.Helper()
	m := passField.FindStringSubmatch(r.body)
	if r.status != 200 || m == nil {
		t.Fatalf("hand-off: %d %.600s", r.status, r.body)
	}
	return html.UnescapeString(m[1])
}

// newPass returns a fresh pass of a new READY visitor.
func (g *gateHarness) newPass(t *testing.T) string {
	t.Helper()
	c, tok := g.readyVisitor(t)
	return passOf(t, g.handoff(t, c, tok))
}

func (g *gateHarness) keyed(key string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + key}
}

func TestGateJWKSListsCurrentAndPrevious(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		previous string
		keys     int
	}{
		{"one key", "", 1},
		{"after a rotation", "../server/pass/testdata/previous.pem", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := pass.Load("../server/pass/testdata/current.pem", tc.previous)
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, func(o *Options) { o.PassKeys, o.Gates = keys, o.Queue.(*queue.Engine) })
			r := h.do(t, "GET", "/.well-known/jwks.json", "", nil, nil)
			var set struct {
				Keys []struct{ Kty, Crv, Kid, Alg, Use, X string }
			}
			r.json(t, &set)
			if r.status != 200 || r.header.Get("Cache-Control") != "public, max-age=300" || len(set.Keys) != tc.keys {
				t.Fatalf("JWKS: %d %q %s", r.status, r.header.Get("Cache-Control"), r.body)
			}
			if set.Keys[0].Kid != keys.KeyID() || set.Keys[0].Alg != "EdDSA" || set.Keys[0].Crv != "Ed25519" {
				t.Fatalf("the current key is not first: %s", r.body)
			}
			if tc.keys == 2 && (set.Keys[1].Kid == set.Keys[0].Kid || set.Keys[1].X == "") {
				t.Fatalf("the previous key: %s", r.body)
			}
			if strings.Contains(r.body, `"d"`) {
				t.Fatalf("the JWKS shows a private key: %s", r.body)
			}
		})
	}
}

func TestGateInfo(t *testing.T) {
	t.Parallel()
	g := newGateHarness(t, nil)
	r := g.do(t, "GET", "/api/rooms/"+g.room+"/gate", "", nil, nil)
	var v gatemode.GateView
	r.json(t, &v)
	want := gatemode.GateView{Room: g.room, RoomURL: g.srv.URL + "/r/" + g.room, SessionSeconds: 600, SessionMode: "idle", Audience: testShopOrigin}
	if r.status != 200 || v != want {
		t.Fatalf("gate: %d %+v, want %+v", r.status, v, want)
	}
	for _, tc := range []struct {
		name, room, code string
	}{
		{"no such room", missingRoom("gate-nope-"), "room_not_found"},
	} {
		var e response.Error
		r := g.do(t, "GET", "/api/rooms/"+tc.room+"/gate", "", nil, nil)
		r.json(t, &e)
		if r.status != 404 || e.Code != tc.code {
			t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
	g.setGate(t, func(s *room.Settings) { s.Gate.TargetURL = "" })
	var e response.Error
	r = g.do(t, "GET", "/api/rooms/"+g.room+"/gate", "", nil, nil)
	r.json(t, &e)
	if r.status != 404 || e.Code != "gate_off" {
		t.Fatalf("a room without a targetURL: %d %s", r.status, r.body)
	}
}

// scriptTag finds every script element's opening tag.
var scriptTag = regexp.MustCompile(`<script[^>]*>`)

func TestGateHandoff(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	for _, lang := range []struct{ accept, words string }{{"en", "Continue to Demo Shop"}, {"ko", "Demo Shop에서 구매 계속하기"}} {
		page := g.do(t, "GET", "/r/"+g.room, "", map[string]string{"Accept-Language": lang.accept}, nil)
		if !strings.Contains(page.body, `action="/r/`+g.room+`/pass"`) || !strings.Contains(page.body, lang.words) ||
			strings.Contains(page.body, `/order"`) {
			t.Fatalf("%s room page: no hand-off form in place of the order form: %.2000s", lang.accept, page.body)
		}
	}
	c, tok := g.readyVisitor(t)
	status := g.do(t, "GET", "/r/"+g.room+"/status", "", map[string]string{"Accept-Language": "ko"}, c)
	if !strings.Contains(status.body, `action="/r/`+g.room+`/pass"`) || !strings.Contains(status.body, html.EscapeString(tok)) ||
		!strings.Contains(status.body, "Demo Shop에서 구매 계속하기") {
		t.Fatalf("READY status page: %.3000s", status.body)
	}

	r := g.handoff(t, c, tok)
	p := passOf(t, r)
	h := r.header
	if h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" ||
		!strings.Contains(h.Get("Content-Security-Policy"), "form-action "+testShopOrigin+";") ||
		strings.Contains(h.Get("Content-Security-Policy"), "form-action 'self'") {
		t.Fatalf("hand-off headers: %v", h)
	}
	if !strings.Contains(r.body, `action="`+testShopOrigin+`/_waitingroom/enter"`) ||
		!strings.Contains(r.body, `name="next" value="/checkout?step=1"`) {
		t.Fatalf("hand-off form: %s", r.body)
	}
	for _, tag := range scriptTag.FindAllString(r.body, -1) {
		if !strings.Contains(tag, ` src="/static/handoff.`) {
			t.Fatalf("an inline script, or another: %s", tag)
		}
	}
	if len(scriptTag.FindAllString(r.body, -1)) != 1 {
		t.Fatalf("want one script, the static hand-off: %s", r.body)
	}
	c2, err := g.keys.Verify(p, time.Now())
	if err != nil || c2.Room != g.room || c2.Audience != testShopOrigin || c2.Issuer != g.srv.URL || len(c2.ID) != 22 ||
		c2.Subject != queue.Subject(g.eng.Namespace(), cookieVisitor(c)) {
		t.Fatalf("the pass: %+v %v", c2, err)
	}

	// A second hand-off replaces the pass: the first one is unknown.
	second := passOf(t, g.handoff(t, c, tok))
	var e response.Error
	rr := g.do(t, "POST", "/api/rooms/"+g.room+"/passes/redeem", `{"pass":"`+p+`"}`, g.keyed(g.apiKey), nil)
	rr.json(t, &e)
	if rr.status != 401 || e.Code != "pass_invalid" {
		t.Fatalf("a replaced pass: %d %s", rr.status, rr.body)
	}
	if rr := g.do(t, "POST", "/api/rooms/"+g.room+"/passes/redeem", `{"pass":"`+second+`"}`, g.keyed(g.apiKey), nil); rr.status != 200 {
		t.Fatalf("the second pass: %d %s", rr.status, rr.body)
	}

	// The refusals are the room's pages, in the visitor's language.
	for _, tc := range []struct {
		name   string
		token  string
		cookie *http.Cookie
		hdr    map[string]string
		status int
		words  string
	}{
		{"a used pass", tok, c, map[string]string{"Accept-Language": "en"}, 409, "already been used to enter the shop"},
		{"an expired or made-up token", randomToken(t), c, map[string]string{"Accept-Language": "ko"}, 401, "입장권이 유효하지 않거나 만료되었습니다"},
		{"no visitor cookie", tok, nil, nil, 401, "not valid, or it has expired"},
		{"cross-site", tok, c, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "another website"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.form(t, "/r/"+g.room+"/pass", url.Values{"entry_token": {tc.token}}, tc.hdr, tc.cookie)
			if r.status != tc.status || !strings.Contains(r.body, tc.words) || passField.MatchString(r.body) {
				t.Fatalf("%d %.1500s", r.status, r.body)
			}
		})
	}
}

// cookieVisitor is the visitor id of a wr_vid cookie (id.signature).
func cookieVisitor(c *http.Cookie) string {
	id, _, _ := strings.Cut(c.Value, ".")
	return id
}

func TestGateRedeem(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	redeem := "/api/rooms/" + g.room + "/passes/redeem"
	good := g.newPass(t)
	now := time.Now()
	forged := func(c pass.Claims) string {
		s, err := g.keys.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claims, _ := g.keys.Verify(good, now)
	otherRoom, otherAud := claims, claims
	otherRoom.Room = "another-room"
	otherAud.Audience = "https://evil.example"
	strangerKeys, _ := pass.Derive([]byte("another deployment's secret"))
	stranger, _ := strangerKeys.Sign(claims)
	big := `{"pass":"` + strings.Repeat("a", gatemode.BodyMax) + `"}`
	for _, tc := range []struct {
		name   string
		key    string
		body   string
		status int
		code   string
	}{
		{"no key", "", `{"pass":"` + good + `"}`, 401, "api_key_invalid"},
		{"a wrong key", "wrk_" + strings.Repeat("x", 43), `{"pass":"` + good + `"}`, 401, "api_key_invalid"},
		{"the admin token", testAdminToken, `{"pass":"` + good + `"}`, 401, "api_key_invalid"},
		{"garbage", g.apiKey, `{"pass":"not.a.pass"}`, 401, "pass_invalid"},
		{"another deployment's key", g.apiKey, `{"pass":"` + stranger + `"}`, 401, "pass_invalid"},
		{"for another room", g.apiKey, `{"pass":"` + forged(otherRoom) + `"}`, 401, "pass_invalid"},
		{"for another shop", g.apiKey, `{"pass":"` + forged(otherAud) + `"}`, 401, "pass_invalid"},
		{"trailing garbage", g.apiKey, `{"pass":"` + good + `"} {}`, 400, "bad_json"},
		{"an unknown field", g.apiKey, `{"pass":"` + good + `","x":1}`, 400, "bad_json"},
		{"too large", g.apiKey, big, 413, "body_too_large"},
		{"good", g.apiKey, `{"pass":"` + good + `"}`, 200, ""},
		{"again", g.apiKey, `{"pass":"` + good + `"}`, 409, "pass_used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.key != "" {
				hdr = g.keyed(tc.key)
			}
			r := g.do(t, "POST", redeem, tc.body, hdr, nil)
			var e response.Error
			json.Unmarshal([]byte(r.body), &e)
			if r.status != tc.status || e.Code != tc.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if strings.Contains(r.body, good) {
				t.Fatal("the answer repeats the pass")
			}
			if tc.status != 200 {
				return
			}
			var v map[string]gatemode.SessionView
			r.json(t, &v)
			s := v["session"]
			exp, err := time.Parse(time.RFC3339, s.ExpiresAt)
			if s.Room != g.room || !gatemode.ValidSessionID(s.ID) || s.Subject != claims.Subject || s.Mode != "idle" || s.IdleSeconds != 600 ||
				err != nil || exp.Sub(now) < 590*time.Second || exp.Sub(now) > 610*time.Second {
				t.Fatalf("session %+v", s)
			}
		})
	}
}

func TestGateAPIKeyThrottled(t *testing.T) {
	t.Parallel()
	g := newGateHarness(t, nil)
	redeem := "/api/rooms/" + g.room + "/passes/redeem"
	for i := range adminFailures {
		if r := g.do(t, "POST", redeem, `{"pass":"x"}`, g.keyed("wrk_wrong"), nil); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i, r.status, r.body)
		}
	}
	r := g.do(t, "POST", redeem, `{"pass":"x"}`, g.keyed("wrk_wrong"), nil)
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("after %d failures, a wrong key: %d %s", adminFailures, r.status, r.body)
	}
	// The right key is checked first, and never refused.
	if r := g.do(t, "POST", redeem, `{"pass":"x"}`, g.keyed(g.apiKey), nil); r.status != 401 || !strings.Contains(r.body, "pass_invalid") {
		t.Fatalf("after %d failures, the right key: %d %s", adminFailures, r.status, r.body)
	}
	// Failures count per client and room: another room's key still works
	// from this client.
	other := g.room + "-b"
	set := room.Defaults(other)
	set.Gate.TargetURL = "https://other.example/"
	if err := g.eng.SaveRoom(context.Background(), other, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.eng.DeleteRoom(context.Background(), other) })
	if r := g.do(t, "POST", "/api/rooms/"+other+"/passes/redeem", `{"pass":"x"}`, g.keyed("wrk_wrong"), nil); r.status != 401 {
		t.Fatalf("a wrong key of another room: %d %s", r.status, r.body)
	}
	// The admin API has a count of its own.
	if r := g.do(t, "GET", "/api/admin/rooms/"+g.room, "", g.keyed(testAdminToken), nil); r.status != 200 {
		t.Fatalf("the admin API after the room key's failures: %d", r.status)
	}
}

func TestGateAPIKeyEndpoint(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	admin := g.keyed(testAdminToken)
	r := g.do(t, "GET", "/api/admin/rooms/"+g.room, "", admin, nil)
	if !strings.Contains(r.body, `"apiKeySet":true`) || strings.Contains(r.body, "apiKeyHash") {
		t.Fatalf("the admin view: %s", r.body)
	}
	old := g.apiKey
	r = g.do(t, "POST", "/api/admin/rooms/"+g.room+"/apikey", "", admin, nil)
	var k struct {
		APIKey string `json:"apiKey"`
	}
	r.json(t, &k)
	if r.status != 201 || k.APIKey == old || !strings.HasPrefix(k.APIKey, "wrk_") {
		t.Fatalf("a new key: %d %s", r.status, r.body)
	}
	end := "/api/rooms/" + g.room + "/sessions/" + strings.Repeat("A", 22) + "/end"
	for _, tc := range []struct {
		name   string
		key    string
		status int
	}{{"the old key", old, 401}, {"the new key", k.APIKey, 204}} {
		if r := g.do(t, "POST", end, "", g.keyed(tc.key), nil); r.status != tc.status {
			t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
		status     int
	}{
		{"without the admin token", "/api/admin/rooms/" + g.room + "/apikey", nil, 401},
		{"no such room", "/api/admin/rooms/" + missingRoom("gate-none-") + "/apikey", admin, 404},
	} {
		if r := g.do(t, "POST", tc.path, "", tc.hdr, nil); r.status != tc.status {
			t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
}

// redeemed returns the session of a fresh pass, redeemed through the API.
func (g *gateHarness) redeemed(t *testing.T) gatemode.SessionView {
	t.Helper()
	r := g.do(t, "POST", "/api/rooms/"+g.room+"/passes/redeem", `{"pass":"`+g.newPass(t)+`"}`, g.keyed(g.apiKey), nil)
	var v map[string]gatemode.SessionView
	r.json(t, &v)
	if r.status != 200 {
		t.Fatalf("redeem: %d %s", r.status, r.body)
	}
	return v["session"]
}

func TestGateRenewAndEnd(t *testing.T) {
	t.Parallel()
	g := newGateHarness(t, func(o *Options) {})
	s := g.redeemed(t)
	base := "/api/rooms/" + g.room + "/sessions/"
	steps := []struct {
		name, path string
		status     int
		code       string
	}{
		{"renew", base + s.ID + "/renew", 200, ""},
		{"renew a made-up id", base + strings.Repeat("B", 22) + "/renew", 404, "session_gone"},
		{"renew a malformed id", base + "x/renew", 404, "session_gone"},
		{"end", base + s.ID + "/end", 204, ""},
		{"renew after the end", base + s.ID + "/renew", 404, "session_gone"},
		{"end again", base + s.ID + "/end", 204, ""},
	}
	for _, st := range steps {
		r := g.do(t, "POST", st.path, "", g.keyed(g.apiKey), nil)
		var e response.Error
		json.Unmarshal([]byte(r.body), &e)
		if r.status != st.status || e.Code != st.code {
			t.Fatalf("%s: %d %s", st.name, r.status, r.body)
		}
	}
	if n, err := g.eng.ActiveSessions(context.Background(), g.room); err != nil || n != 0 {
		t.Fatalf("active sessions after the end: %d %v", n, err)
	}
}

// switchable is the engine's gate, or a dead Redis's once down.
type switchable struct {
	gatemode.Gates
	dead gatemode.Gates
	down atomic.Bool
}

func (s *switchable) TouchSession(ctx context.Context, name, id string, renew bool) (queue.Session, error) {
	if s.down.Load() {
		return s.dead.TouchSession(ctx, name, id, renew)
	}
	return s.Gates.TouchSession(ctx, name, id, renew)
}

func (s *switchable) Redeem(ctx context.Context, name, jti, sid string) (queue.Session, error) {
	if s.down.Load() {
		return s.dead.Redeem(ctx, name, jti, sid)
	}
	return s.Gates.Redeem(ctx, name, jti, sid)
}

func (s *switchable) MintPass(ctx context.Context, name, visitor, tok, jti string) (time.Time, error) {
	if s.down.Load() {
		return s.dead.MintPass(ctx, name, visitor, tok, jti)
	}
	return s.Gates.MintPass(ctx, name, visitor, tok, jti)
}

func gateCookieOf(r reply) *http.Cookie { return cookieOf(r, gatemode.GateCookie) }

// cookieOf is the cookie called name that r sets, or nil.
func cookieOf(r reply, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestGateEnterAndCheck(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	enter := func(p, next string, hdr map[string]string) reply {
		return g.form(t, "/_waitingroom/enter", url.Values{"pass": {p}, "next": {next}}, hdr, nil)
	}
	p := g.newPass(t)
	// A second hand-off replaces the visitor's pass: the first one is
	// unknown to the store.
	vc, vtok := g.readyVisitor(t)
	replaced := passOf(t, g.handoff(t, vc, vtok))
	passOf(t, g.handoff(t, vc, vtok))
	// A pass whose key is neither the current nor the previous one.
	oldKeys, err := pass.Derive([]byte("a key two rotations ago 0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	rotatedAway, err := oldKeys.Sign(pass.Claims{Room: g.room, ID: "rotated-away-jti", Audience: testShopOrigin, Issuer: g.srv.URL,
		IssuedAt: time.Now(), Expiry: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	// The hand-off page posts across sites, by design.
	// X-Forwarded-Proto from a client that is no trusted proxy: no
	// Secure (TestGateCookieSecure).
	r := enter(p, "/checkout?step=1", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": g.srv.URL, "X-Forwarded-Proto": "https"})
	c := gateCookieOf(r)
	if r.status != 303 || r.header.Get("Location") != "/checkout?step=1" || c == nil || !c.HttpOnly || c.Secure ||
		c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.MaxAge != 0 || !strings.HasPrefix(c.Value, g.room+".") {
		t.Fatalf("enter: %d %v %.500s", r.status, r.header, r.body)
	}
	check := func(c *http.Cookie, room string) reply {
		hdr := map[string]string{"Host": testShopHost}
		if room != "" {
			hdr["X-Waitingroom-Room"] = room
		}
		return g.do(t, "GET", "/gate/check", "", hdr, c)
	}
	_, id, _ := strings.Cut(c.Value, ".")
	for _, tc := range []struct {
		name   string
		cookie *http.Cookie
		room   string
		status int
	}{
		{"live", c, "", 204},
		{"live, this room", c, g.room, 204},
		{"another room", c, "other-room", 401},
		{"no cookie", nil, "", 401},
		{"a made-up session", &http.Cookie{Name: gatemode.GateCookie, Value: g.room + "." + strings.Repeat("C", 22)}, "", 401},
		{"malformed", &http.Cookie{Name: gatemode.GateCookie, Value: "garbage"}, "", 401},
	} {
		if r := check(tc.cookie, tc.room); r.status != tc.status {
			t.Fatalf("check %s: %d %s", tc.name, r.status, r.body)
		}
	}
	if r := g.do(t, "POST", "/api/rooms/"+g.room+"/sessions/"+id+"/end", "", g.keyed(g.apiKey), nil); r.status != 204 {
		t.Fatalf("end: %d", r.status)
	}
	if r := check(c, ""); r.status != 401 {
		t.Fatalf("check after the end: %d", r.status)
	}

	for _, tc := range []struct {
		name   string
		pass   string
		next   string
		status int
		words  string
	}{
		{"used", p, "/", 409, "already used"},
		{"forged", "eyJhbGciOiJFZERTQSJ9.e30.AAAA", "/", 401, "could not be used"},
		{"replaced by a newer pass", replaced, "/", 401, "This pass can no longer be used"},
		{"a key rotated away", rotatedAway, "/", 401, "This pass can no longer be used"},
		{"another host in next", g.newPass(t), "//evil.example/x", 303, ""},
		// http.Redirect cleans "/./\\evil" to "/\\evil", which browsers
		// read as "//evil" (found in review).
		{"dot backslash in next", g.newPass(t), `/./\evil.example`, 303, ""},
		{"dot-dot backslash in next", g.newPass(t), `/a/../\evil.example`, 303, ""},
	} {
		r := enter(tc.pass, tc.next, map[string]string{"Accept-Language": "en"})
		if r.status != tc.status || !strings.Contains(r.body, tc.words) {
			t.Fatalf("enter %s: %d %.800s", tc.name, r.status, r.body)
		}
		if tc.status == 303 && (r.header.Get("Location") != "/" || gateCookieOf(r) == nil || gateCookieOf(r).Secure) {
			t.Fatalf("enter %s: to %q, cookie %v", tc.name, r.header.Get("Location"), gateCookieOf(r))
		}
		if (tc.status == 409 || tc.pass == replaced) && !strings.Contains(r.body, `href="`+g.srv.URL+"/r/"+g.room+`"`) {
			t.Fatalf("enter %s: no way back to the room: %s", tc.name, r.body)
		}
	}
}

func TestGateCheckWithRedisDown(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	for _, tc := range []struct {
		name     string
		failOpen bool
		status   int
		header   string
	}{
		{"fail open", true, 204, "open"},
		{"fail closed", false, 503, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw := &switchable{dead: queue.New(dead, "wr:dead")}
			g := newClockedGateHarness(t, func(o *Options) {
				sw.Gates = o.Gates
				o.Gates = sw
			})
			g.setGate(t, func(s *room.Settings) { s.Gate.FailOpen = tc.failOpen })
			r := g.form(t, "/_waitingroom/enter", url.Values{"pass": {g.newPass(t)}}, nil, nil)
			c := gateCookieOf(r)
			if c == nil {
				t.Fatalf("enter: %d %s", r.status, r.body)
			}
			shop := map[string]string{"Host": testShopHost}
			if r := g.do(t, "GET", "/gate/check", "", shop, nil); r.status != 401 {
				t.Fatalf("no cookie with Redis up: %d", r.status)
			}
			sw.down.Store(true)
			forged := &http.Cookie{Name: gatemode.GateCookie, Value: g.room + "." + strings.Repeat("Z", 22)}
			// The same answer with a cookie, a made-up one, or none (once
			// Redis is known to be away), for the room by Host or by name.
			for _, st := range []struct {
				name   string
				cookie *http.Cookie
				hdr    map[string]string
				status int
				header string
			}{
				{"live cookie", c, shop, tc.status, tc.header},
				{"made-up cookie", forged, shop, tc.status, tc.header},
				{"no cookie", nil, shop, tc.status, tc.header},
				{"no cookie, room named", nil, map[string]string{"X-Waitingroom-Room": g.room}, tc.status, tc.header},
				{"no cookie, another shop's host", nil, map[string]string{"Host": "elsewhere.example"}, 401, ""},
			} {
				r := g.do(t, "GET", "/gate/check", "", st.hdr, st.cookie)
				if r.status != st.status || r.header.Get("X-Waitingroom-Fail") != st.header {
					t.Fatalf("check with Redis down, %s: %d %v", st.name, r.status, r.header)
				}
			}
			sw.down.Store(false)
			if r := g.do(t, "GET", "/gate/check", "", shop, c); r.status != 204 || r.header.Get("X-Waitingroom-Fail") != "" {
				t.Fatalf("live cookie with Redis back: %d", r.status)
			}
			if r := g.do(t, "GET", "/gate/check", "", shop, nil); r.status != 401 {
				t.Fatalf("no cookie with Redis back: %d", r.status)
			}
		})
	}
}

func TestGateSessionMetrics(t *testing.T) {
	t.Parallel()
	g := newGateHarness(t, nil)
	ended := g.redeemed(t)
	g.redeemed(t)
	if r := g.do(t, "POST", "/api/rooms/"+g.room+"/sessions/"+ended.ID+"/end", "", g.keyed(g.apiKey), nil); r.status != 204 {
		t.Fatalf("end: %d", r.status)
	}
	g.do(t, "GET", "/gate/check", "", nil, nil)
	a, err := g.eng.Admit(context.Background(), g.room, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.web.metrics.Ticked(g.room, a, time.Millisecond, nil)
	want := map[string]float64{
		`waitingroom_gate_sessions{room="` + g.room + `"}`:                      1,
		`waitingroom_gate_session_events{event="opened",room="` + g.room + `"}`: 2,
		`waitingroom_gate_session_events{event="ended",room="` + g.room + `"}`:  1,
		`waitingroom_gate_session_events{event="idle",room="` + g.room + `"}`:   0,
		`waitingroom_gate_checks_total{result="denied"}`:                        1,
	}
	mfs, err := g.web.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			got[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	for k, v := range want {
		if n, ok := got[k]; !ok || n != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// TestGateEnterRotatedKeyLinksBack: a pass signed by a key rotated away
// gets the neutral page with the way back to the room it names, on this
// site (PUBLIC_URL) only.
func TestGateEnterRotatedKeyLinksBack(t *testing.T) {
	t.Parallel()
	g := newGateHarness(t, func(o *Options) { o.PublicURL = "https://queue.example" })
	oldKeys, err := pass.Derive([]byte("a key two rotations ago 0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := oldKeys.Sign(pass.Claims{Room: g.room, ID: "rotated-away-jti", Audience: testShopOrigin, Issuer: "https://evil.example",
		IssuedAt: time.Now(), Expiry: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []struct{ accept, words string }{{"en", "can no longer be used"}, {"ko", "더 이상 사용할 수 없습니다"}} {
		r := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/"}}, map[string]string{"Accept-Language": lang.accept}, nil)
		if r.status != 401 || !strings.Contains(r.body, lang.words) || !strings.Contains(r.body, `href="https://queue.example/r/`+g.room+`"`) ||
			strings.Contains(r.body, "evil.example") {
			t.Fatalf("%s: %d %.1500s", lang.accept, r.status, r.body)
		}
	}
}

// TestGateFormBodies: a malformed form body on the gate's form routes is
// 400; only one over the limit is 413.
func TestGateFormBodies(t *testing.T) {
	t.Parallel()
	g := newGateHarness(t, nil)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Host": testShopHost}
	for _, path := range []string{gatemode.EnterPath, "/r/" + g.room + "/pass", "/r/" + g.room + "/order"} {
		for _, tc := range []struct {
			name   string
			body   string
			status int
		}{
			{"malformed", "pass=%zz&next=/", http.StatusBadRequest},
			{"too large", "pass=" + strings.Repeat("a", 1<<20), http.StatusRequestEntityTooLarge},
		} {
			if r := g.do(t, "POST", path, tc.body, form, nil); r.status != tc.status {
				t.Errorf("%s %s: %d, want %d", path, tc.name, r.status, tc.status)
			}
		}
	}
}

// TestGateSessionBoundToShopHost: a pass opens a session only on its own
// shop's host, and /gate/check lets a session open only its own room's
// shop: by X-Waitingroom-Room when nginx sends it, else by the host.
func TestGateSessionBoundToShopHost(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	roomA := g.room
	roomB := roomA + "-b"
	set := room.Defaults(roomB)
	set.Rate = 1000
	set.Gate.TargetURL = "https://other.example/x"
	if err := g.eng.SaveRoom(context.Background(), roomB, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.eng.DeleteRoom(context.Background(), roomB) })
	g.room = roomB
	passB, passB2 := g.newPass(t), g.newPass(t)
	g.room = roomA
	enter := func(p, host string) reply {
		return g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, map[string]string{"Host": host}, nil)
	}
	for _, host := range []string{"shop.example", "shop.example:443", "evil.example"} {
		if r := enter(passB, host); r.status != http.StatusUnauthorized || gateCookieOf(r) != nil {
			t.Fatalf("room B's pass on %s: %d, cookie %v", host, r.status, gateCookieOf(r))
		}
	}
	r := enter(passB2, "Other.Example:443")
	cB := gateCookieOf(r)
	if r.status != http.StatusSeeOther || cB == nil {
		t.Fatalf("room B's pass on its own host: %d %.300s", r.status, r.body)
	}
	cA := gateCookieOf(enter(g.newPass(t), "shop.example"))
	if cA == nil {
		t.Fatal("room A's pass on its own host set no cookie")
	}
	for _, tc := range []struct {
		name    string
		cookie  *http.Cookie
		host    string
		roomHdr string
		status  int
	}{
		{"A's session on A's host", cA, "shop.example", "", 204},
		{"A's session on A's host, default port", cA, "SHOP.example:80", "", 204},
		{"B's session on A's host", cB, "shop.example", "", 401},
		{"B's session on B's host", cB, "other.example", "", 204},
		{"B's session, nginx names A", cB, "other.example", roomA, 401},
		{"B's session, nginx names B", cB, "shop.example", roomB, 204},
		{"A's session on another port", cA, "shop.example:8443", "", 401},
	} {
		hdr := map[string]string{"Host": tc.host}
		if tc.roomHdr != "" {
			hdr["X-Waitingroom-Room"] = tc.roomHdr
		}
		if r := g.do(t, "GET", "/gate/check", "", hdr, tc.cookie); r.status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, r.status, tc.status)
		}
	}
}

// TestGateRoomRefusesBuiltInOrders: a room that sends its buyers to a
// shop takes no order on its own order path, JSON or form, and claims no
// token: the buyer's pass still hands off to the shop.
func TestGateRoomRefusesBuiltInOrders(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	c, tok := g.readyVisitor(t)
	r := g.do(t, "POST", "/api/rooms/"+g.room+"/orders", `{"quantity":1}`, map[string]string{"X-Entry-Token": tok}, c)
	var e response.Error
	json.Unmarshal([]byte(r.body), &e)
	if r.status != 409 || e.Code != "gate_on" {
		t.Fatalf("JSON order: %d %s", r.status, r.body)
	}
	for _, tc := range []struct{ lang, words string }{
		{"en", "orders are taken at the shop"},
		{"ko", "주문은 쇼핑몰에서 받습니다"},
	} {
		r := g.form(t, "/r/"+g.room+"/order", url.Values{"entry_token": {tok}}, map[string]string{"Accept-Language": tc.lang}, c)
		if r.status != 409 || !strings.Contains(r.body, tc.words) {
			t.Fatalf("form order (%s): %d %.800s", tc.lang, r.status, r.body)
		}
	}
	if p := passOf(t, g.handoff(t, c, tok)); p == "" {
		t.Fatal("no pass after the refused orders")
	}
}

// TestGateRedeemRetry: a redeem with the caller's session id is
// idempotent for that id (the shop's retry after a timeout), and 409 for
// any other; a malformed id is a 400 before anything is spent.
func TestGateRedeemRetry(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	redeem := "/api/rooms/" + g.room + "/passes/redeem"
	p := g.newPass(t)
	sid, other := randomToken(t)[:22], randomToken(t)[:22]
	body := func(session string) string { return `{"pass":"` + p + `","session":"` + session + `"}` }
	var first gatemode.SessionView
	for _, tc := range []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"too short an id", body("abc"), 400, "bad_request"},
		{"too long an id", body(sid + "A"), 400, "bad_request"},
		{"not base64url", body(strings.Repeat("+", 22)), 400, "bad_request"},
		{"not a string", `{"pass":"` + p + `","session":1}`, 400, "bad_json"},
		{"first", body(sid), 200, ""},
		{"retry with the same id", body(sid), 200, ""},
		{"again with the same id", body(sid), 200, ""},
		{"another id", body(other), 409, "pass_used"},
		{"no id", `{"pass":"` + p + `"}`, 409, "pass_used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(t, "POST", redeem, tc.body, g.keyed(g.apiKey), nil)
			var e response.Error
			json.Unmarshal([]byte(r.body), &e)
			if r.status != tc.status || e.Code != tc.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if r.status != 200 {
				return
			}
			var v map[string]gatemode.SessionView
			r.json(t, &v)
			s := v["session"]
			if s.ID != sid {
				t.Fatalf("session %q, want the caller's %q", s.ID, sid)
			}
			if first.ID == "" {
				first = s
			} else if s != first {
				t.Fatalf("retry: %+v, want %+v", s, first)
			}
		})
	}
	// The session is one, holding one slot.
	if n, err := g.eng.ActiveSessions(t.Context(), g.room); err != nil || n != 1 {
		t.Fatalf("%d live sessions (%v), want 1", n, err)
	}
}

// signalNS is the Redis namespace of the signal tests' recorders: their
// keys never meet another test's.
const signalNS = "wr:h15sig-test"

// TestGateMiddlewareFeedsTheSignal: a real gate in front of a stand-in
// shop reports its handlers' answers to this server once a second; they
// reach the room's signal in Redis: the samples, their p95 and the
// failures.
func TestGateMiddlewareFeedsTheSignal(t *testing.T) {
	t.Parallel()
	const slow = 120 * time.Millisecond
	rdb := servicetest.Redis(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The reports are counted in one second of a fake clock, and read as
	// that second has landed.
	fc := clockwork.NewFakeClockAt(time.Now())
	rec := adapt.NewRecorder(rdb, signalNS, "test", nil, log).WithClock(fc)
	g := newGateHarness(t, func(o *Options) { o.Signal = rec })
	rec.Track([]string{g.room})

	mw, err := gate.New(gate.Options{RoomURL: g.srv.URL, Room: g.room, APIKey: g.apiKey, Audience: testShopOrigin, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(gate.EnterPath, mw.EnterHandler())
	mux.Handle("/checkout/", mw.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/checkout/slow":
			time.Sleep(slow)
		case "/checkout/fail":
			http.Error(w, "the payment provider is down", http.StatusBadGateway)
			return
		}
		fmt.Fprint(w, "checkout")
	})))
	shop := httptest.NewServer(mux)
	t.Cleanup(shop.Close)

	// The hand-off: the pass posted to the shop becomes a session.
	resp, err := noRedirects().PostForm(shop.URL+gate.EnterPath, url.Values{"pass": {g.newPass(t)}, "next": {"/checkout/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == gate.CookieName {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil {
		t.Fatalf("enter: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	sent := map[string]int{"/checkout/": 30, "/checkout/slow": 3, "/checkout/fail": 2}
	for path, n := range sent {
		for range n {
			req, _ := http.NewRequest("GET", shop.URL+path, nil)
			req.AddCookie(session) // Secure (an https audience): set by hand over the test's http
			resp, err := noRedirects().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := map[bool]int{true: 502, false: 200}[path == "/checkout/fail"]; resp.StatusCode != want {
				t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
			}
		}
	}

	// The gate reports once a second of real time; the recorder flushes
	// what came.
	landed := clockwork.NewFakeClockAt(fc.Now().Truncate(time.Second).Add(time.Second + adapt.Landed))
	reader := adapt.NewReader(rdb, signalNS).WithClock(landed)
	deadline := time.Now().Add(10 * time.Second)
	var sig adapt.Signal
	for ; ; time.Sleep(20 * time.Millisecond) {
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if sig, err = reader.Read(context.Background(), g.room, adapt.MaxWindow); err != nil {
			t.Fatal(err)
		}
		if sig.Samples >= 35 || time.Now().After(deadline) {
			break
		}
	}
	if sig.Samples != 35 || sig.Errors != 2 || sig.Failed[gatemode.ShopUnavailable] != 2 {
		t.Fatalf("signal %d samples, %d errors, failures %v; want 35, 2, 2 unavailable", sig.Samples, sig.Errors, sig.Failed)
	}
	// 33 answers of 35 are fast or failed fast: the p95 is among the slow.
	if sig.P95 < slow*3/4 || sig.P95 > 4*slow {
		t.Fatalf("p95 %v, want about %v", sig.P95, slow)
	}
}

// TestGateReportEndpoint: the report endpoint takes the room's API key
// only, a bounded, valid body only, no browser's cross-site post, and a
// bounded rate of reports per room; every refusal is a clear JSON error.
func TestGateReportEndpoint(t *testing.T) {
	t.Parallel()
	// The limits' clock stands still: the burst is all a room's reports
	// get, however long the requests take.
	still := time.Now()
	g := newGateHarness(t, func(o *Options) { o.Now = func() time.Time { return still } })
	path := "/api/rooms/" + g.room + "/gate/report"
	good := `{"ok":10,"failed":1,"okMs":[12.5,30],"failedMs":[5000]}`
	for _, tt := range []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		code   string
	}{
		{"a report", good, g.keyed(g.apiKey), 204, ""},
		{"nothing to report", `{"ok":0,"failed":0}`, g.keyed(g.apiKey), 204, ""},
		{"no key", good, nil, 401, "api_key_invalid"},
		{"a bad key", good, g.keyed("wrk_" + strings.Repeat("A", 43)), 401, "api_key_invalid"},
		{"the admin token", good, g.keyed(testAdminToken), 401, "api_key_invalid"},
		{"oversized", `{"ok":1,"okMs":[` + strings.Repeat("1,", gatemode.BodyMax) + `1]}`, g.keyed(g.apiKey), 413, "body_too_large"},
		{"not JSON", `ok=1`, g.keyed(g.apiKey), 400, "bad_json"},
		{"an unknown field", `{"ok":1,"okMs":[1],"p95":3}`, g.keyed(g.apiKey), 400, "bad_json"},
		{"a negative count", `{"ok":-1}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"too many answers", `{"ok":1000001,"okMs":[1]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"answers without durations", `{"ok":5}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"more durations than answers", `{"failed":1,"failedMs":[1,2]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"a negative duration", `{"ok":1,"okMs":[-1]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"a duration past 10 minutes", `{"ok":1,"okMs":[600001]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"too many durations", `{"ok":300,"okMs":[` + strings.Repeat("1,", 256) + `1]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"a browser's cross-site post", good, map[string]string{"Authorization": "Bearer " + g.apiKey,
			"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := g.do(t, "POST", path, tt.body, tt.hdr, nil)
			if r.status != tt.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
			}
			if tt.code != "" {
				var e response.Error
				r.json(t, &e)
				if e.Code != tt.code || e.Message == "" {
					t.Fatalf("error %+v, want %s with a message", e, tt.code)
				}
			}
		})
	}
	t.Run("a room's reports are rate limited", func(t *testing.T) {
		limited := 0
		for range 2 * gatemode.ReportsBurst {
			if r := g.do(t, "POST", path, good, g.keyed(g.apiKey), nil); r.status == http.StatusTooManyRequests {
				limited++
				if !strings.Contains(r.body, "too_many_reports") || r.header.Get("Retry-After") == "" {
					t.Fatalf("429 %v %s", r.header, r.body)
				}
			}
		}
		if limited == 0 {
			t.Fatalf("%d reports in a row, none refused", 2*gatemode.ReportsBurst)
		}
	})
}

// TestGateEnterResubmit: a second submit of a used pass by the browser it
// let in goes on to next; by any other browser it is refused. A new pass
// of the room replaces the browser's session and ends the old one: one
// browser holds one slot.
func TestGateEnterResubmit(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	ctx := context.Background()
	enter := func(p string, c *http.Cookie) reply {
		return g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, c)
	}
	p := g.newPass(t)
	r := enter(p, nil)
	c := gateCookieOf(r)
	if r.status != 303 || c == nil {
		t.Fatalf("first submit: %d %.300s", r.status, r.body)
	}
	for _, tc := range []struct {
		name   string
		cookie *http.Cookie
		status int
	}{
		{"again, with the session it opened", c, 303},
		{"again, without a cookie", nil, 409},
		{"again, with a made-up session", &http.Cookie{Name: gatemode.GateCookie, Value: g.room + "." + strings.Repeat("D", 22)}, 409},
	} {
		r := enter(p, tc.cookie)
		if r.status != tc.status || (tc.status == 303 && (r.header.Get("Location") != "/checkout" || gateCookieOf(r) != nil)) {
			t.Fatalf("%s: %d to %q, cookie %v", tc.name, r.status, r.header.Get("Location"), gateCookieOf(r))
		}
	}

	_, oldID, _ := strings.Cut(c.Value, ".")
	r = enter(g.newPass(t), c)
	c2 := gateCookieOf(r)
	if r.status != 303 || c2 == nil || c2.Value == c.Value {
		t.Fatalf("a new pass: %d, cookie %v", r.status, c2)
	}
	if _, err := g.eng.TouchSession(ctx, g.room, oldID, false); !errors.Is(err, queue.ErrSessionGone) {
		t.Fatalf("the replaced session still lives: %v", err)
	}
	if n, err := g.eng.ActiveSessions(ctx, g.room); err != nil || n != 1 {
		t.Fatalf("active sessions: %d %v", n, err)
	}
	// The first pass again, now that its session ended: refused.
	if r := enter(p, c); r.status != 409 {
		t.Fatalf("the first pass with its ended session: %d", r.status)
	}
}

// lostReply redeems for real, then answers the first redeem with an
// error, as a Redis reply lost after the script ran would.
type lostReply struct {
	*queue.Engine
	lost atomic.Bool
}

func (l *lostReply) Redeem(ctx context.Context, roomName, jti, sessionID string) (queue.Session, error) {
	s, err := l.Engine.Redeem(ctx, roomName, jti, sessionID)
	if err == nil && l.lost.CompareAndSwap(false, true) {
		return queue.Session{}, errors.New("i/o timeout after the script ran")
	}
	return s, err
}

// TestGateEnterResendAfterALostReply: the first redeem of a pass opened a
// session but its answer was lost, so the buyer saw "please retry". The
// retry page's cookie makes the resend land in that same session (one
// slot), while the pass copied into another browser is still refused.
func TestGateEnterResendAfterALostReply(t *testing.T) {
	t.Parallel()
	var gates *lostReply
	g := newClockedGateHarness(t, func(o *Options) {
		gates = &lostReply{Engine: o.Queue.(*queue.Engine)}
		o.Gates = gates
	})
	ctx := context.Background()
	p := g.newPass(t)
	enter := func(c *http.Cookie) reply {
		return g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, c)
	}
	first := enter(nil)
	seed := cookieOf(first, gatemode.RetryCookie)
	if first.status != http.StatusServiceUnavailable || seed == nil || seed.Path != gatemode.EnterPath || gateCookieOf(first) != nil ||
		!strings.Contains(first.body, `name="pass"`) {
		t.Fatalf("first try: %d, retry cookie %v: %.300s", first.status, seed, first.body)
	}
	if r := enter(nil); r.status != http.StatusConflict {
		t.Fatalf("the pass from another browser: %d, want 409", r.status)
	}
	again := enter(seed)
	c := gateCookieOf(again)
	if again.status != http.StatusSeeOther || c == nil || again.header.Get("Location") != "/checkout" {
		t.Fatalf("the resend: %d to %q, cookie %v", again.status, again.header.Get("Location"), c)
	}
	if gone := cookieOf(again, gatemode.RetryCookie); gone == nil || gone.MaxAge >= 0 {
		t.Fatalf("the retry cookie is not cleared: %v", gone)
	}
	_, id, _ := strings.Cut(c.Value, ".")
	if _, err := g.eng.TouchSession(ctx, g.room, id, false); err != nil {
		t.Fatalf("the resend's session: %v", err)
	}
	if n, err := g.eng.ActiveSessions(ctx, g.room); err != nil || n != 1 {
		t.Fatalf("active sessions: %d %v, want 1", n, err)
	}
}

// TestGateEnterSeedCannotBePlanted: an attacker who plants a cookie in the
// victim's browser before the hand-off (from a sibling subdomain, say) and
// holds a copy of the pass cannot ride the victim's session: the session
// id does not follow from any cookie the attacker can make (found in
// review: it was a hash of the wr_gate value and the pass).
func TestGateEnterSeedCannotBePlanted(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	seed := strings.Repeat("A", 22)
	for _, tc := range []struct {
		name   string
		cookie *http.Cookie
	}{
		{"a planted session cookie", &http.Cookie{Name: gatemode.GateCookie, Value: g.room + "." + seed}},
		{"a planted retry cookie", &http.Cookie{Name: gatemode.RetryCookie, Value: seed + "." + strings.Repeat("B", 43)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := g.newPass(t)
			c, err := g.keys.Verify(p, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			victim := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, tc.cookie)
			if victim.status != http.StatusSeeOther {
				t.Fatalf("the victim: %d", victim.status)
			}
			_, id, _ := strings.Cut(gateCookieOf(victim).Value, ".")
			if id == g.web.signer.MAC("gate session", g.room+"\x00"+seed+"\x00"+c.ID)[:22] {
				t.Fatal("the session id follows from the planted seed")
			}
			// The attacker resends the copied pass with the planted cookie.
			if r := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, tc.cookie); r.status != http.StatusConflict {
				t.Fatalf("the attacker's resend: %d, want 409", r.status)
			}
		})
	}
}

// TestGateBusyPassIsRetried: while another attempt holds the pass (a
// stalled first try), a redeem is told to try again (503 pass_busy), not
// that the pass was used: that attempt may fail and leave it usable.
func TestGateBusyPassIsRetried(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	ctx := context.Background()
	c, tok := g.readyVisitor(t)
	p := passOf(t, g.handoff(t, c, tok))
	v, ok := g.web.signer.Verify(c.Value)
	if !ok {
		t.Fatal("the visitor cookie does not verify")
	}
	if _, err := g.eng.Claim(ctx, g.room, v, tok, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	r := g.do(t, "POST", "/api/rooms/"+g.room+"/passes/redeem", `{"pass":"`+p+`"}`, g.keyed(g.apiKey), nil)
	var e response.Error
	r.json(t, &e)
	if r.status != http.StatusServiceUnavailable || e.Code != "pass_busy" || r.header.Get("Retry-After") == "" {
		t.Fatalf("redeem of a busy pass: %d %s", r.status, r.body)
	}
	enter := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, nil)
	if enter.status != http.StatusServiceUnavailable || cookieOf(enter, gatemode.RetryCookie) == nil {
		t.Fatalf("enter with a busy pass: %d, retry cookie %v", enter.status, cookieOf(enter, gatemode.RetryCookie))
	}
}

var (
	retryGetForm = regexp.MustCompile(`<form method="get" action="">`)
	repostForm   = regexp.MustCompile(`<form method="post" action="/_waitingroom/enter">\s*<input type="hidden" name="pass" value="([^"]*)">\s*<input type="hidden" name="next" value="([^"]*)">`)
)

// TestGateRetryPostsAgain: the "please retry" pages of the gate's POST
// routes never offer a GET of a POST-only route: the enter page posts the
// same pass and next again, the hand-off page leads back to the room.
func TestGateRetryPostsAgain(t *testing.T) {
	t.Parallel()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	sw := &switchable{dead: queue.New(dead, "wr:dead")}
	g := newClockedGateHarness(t, func(o *Options) {
		sw.Gates = o.Gates
		o.Gates = sw
	})
	p := g.newPass(t)
	c, tok := g.readyVisitor(t)
	sw.down.Store(true)
	r := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout?step=2"}}, map[string]string{"Accept-Language": "en"}, nil)
	m := repostForm.FindStringSubmatch(r.body)
	if r.status != 503 || m == nil || retryGetForm.MatchString(r.body) || html.UnescapeString(m[1]) != p || html.UnescapeString(m[2]) != "/checkout?step=2" {
		t.Fatalf("enter with Redis down: %d %.1500s", r.status, r.body)
	}
	r = g.handoff(t, c, tok)
	if r.status != 503 || retryGetForm.MatchString(r.body) || !strings.Contains(r.body, `href="/r/`+g.room+`"`) {
		t.Fatalf("hand-off with Redis down: %d %.1500s", r.status, r.body)
	}
	// The pass posted again once Redis is back lets the buyer in.
	sw.down.Store(false)
	r = g.form(t, gatemode.EnterPath, url.Values{"pass": {html.UnescapeString(m[1])}, "next": {html.UnescapeString(m[2])}}, nil, nil)
	if r.status != 303 || gateCookieOf(r) == nil {
		t.Fatalf("the retry: %d %.500s", r.status, r.body)
	}
}

// TestGateCookieSecure: wr_gate is Secure behind TLS as a trusted proxy
// says (X-Forwarded-Proto), never as any client says.
func TestGateCookieSecure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trusted bool
		proto   string
		secure  bool
	}{
		{"trusted proxy, https", true, "https", true},
		{"trusted proxy, http", true, "http", false},
		{"untrusted client, https", false, "https", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newClockedGateHarness(t, func(o *Options) {
				if tc.trusted {
					o.TrustedProxies = loopbackProxy
				}
			})
			r := g.form(t, gatemode.EnterPath, url.Values{"pass": {g.newPass(t)}}, map[string]string{"X-Forwarded-Proto": tc.proto}, nil)
			c := gateCookieOf(r)
			if r.status != 303 || c == nil || c.Secure != tc.secure {
				t.Fatalf("enter: %d, cookie %v", r.status, c)
			}
		})
	}
}

var stylesheet = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)"`)

// TestGateEnterPageAssets: the enter callback's pages, served on the
// shop's host, load their stylesheet from the waiting room's origin (the
// pass's issuer here, PUBLIC_URL when set), which their CSP allows.
func TestGateEnterPageAssets(t *testing.T) {
	t.Parallel()
	g := newClockedGateHarness(t, nil)
	p := g.newPass(t)
	g.form(t, gatemode.EnterPath, url.Values{"pass": {p}}, nil, nil)
	r := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}}, nil, nil)
	m := stylesheet.FindStringSubmatch(r.body)
	csp := r.header.Get("Content-Security-Policy")
	if r.status != http.StatusConflict || m == nil || !strings.HasPrefix(m[1], g.srv.URL+"/static/") || !strings.Contains(csp, "style-src "+g.srv.URL+";") {
		t.Fatalf("the used pass's page: %d, stylesheet %q, CSP %q", r.status, m, csp)
	}
	if resp, err := http.Get(m[1]); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the stylesheet: %v %v", resp, err)
	}
}
