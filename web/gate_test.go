package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
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
	keys := testPassKeys(t)
	h := newHarness(t, func(o *Options) {
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
	ctx := context.Background()
	q := "/api/rooms/" + g.room + "/queue"
	c := g.do(t, "POST", q, "", nil, nil).cookie()
	g.eng.Admit(ctx, g.room, time.Second, nil)
	time.Sleep(20 * time.Millisecond)
	if a, err := g.eng.Admit(ctx, g.room, time.Second, []string{randomToken(t)}); err != nil || len(a.Visitors) != 1 {
		t.Fatalf("admit: %+v %v", a, err)
	}
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
	g := newGateHarness(t, nil)
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
	g := newGateHarness(t, nil)
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
	g := newGateHarness(t, nil)
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

func gateCookieOf(r reply) *http.Cookie { return cookieOf(r, GateCookie) }

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
	g := newGateHarness(t, nil)
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
		{"a made-up session", &http.Cookie{Name: GateCookie, Value: g.room + "." + strings.Repeat("C", 22)}, "", 401},
		{"malformed", &http.Cookie{Name: GateCookie, Value: "garbage"}, "", 401},
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
			g := newGateHarness(t, func(o *Options) {
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
			forged := &http.Cookie{Name: GateCookie, Value: g.room + "." + strings.Repeat("Z", 22)}
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
