package gate

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

const (
	testRoom   = "t-gate"
	testAPIKey = "test-api-key-0123456789"
	// replacedJTI is a jti the fake does not know, as waitingroom does
	// not once a newer pass of the same buyer replaced it.
	replacedJTI = "replaced-jti"
)

// signingKey is a test Ed25519 key with its kid.
type signingKey struct {
	kid  string
	priv ed25519.PrivateKey
}

func newKey(t *testing.T, kid string) signingKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, priv: priv}
}

// fakeRoom is a stand-in waitingroom implementing the contract's JSON:
// JWKS, gate settings, redeem (single-use jti), renew and end.
type fakeRoom struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	keys     []signingKey // listed in the JWKS
	aud      string
	failOpen bool
	down     string            // "": up; "503": every answer 503
	refuse   map[string]int    // endpoint name → status of its every answer (see refusal)
	used     map[string]string // jti → the session id it opened
	oldAPI   bool              // refuses the redeem's session field, as waitingroom did before it had one
	noRoom   bool              // the gate settings answer 404 room_not_found
	lagging  int               // redeems still to answer only after lag, though applied at once
	lag      time.Duration
	sessions map[string]string // id → subject
	calls    map[string]int
	passes   []string                 // every pass handed out, to check the logs
	reports  []report                 // the reports of the handlers' times received
	held     map[string]chan struct{} // endpoint name → closed when its held calls may go on (see hold)
	holding  map[string]int           // calls held now, by endpoint name
	inflight int                      // calls being answered now
	probeSaw int                      // the most calls being answered when a gate settings call (the probe) came
}

func newFakeRoom(t *testing.T, keys ...signingKey) *fakeRoom {
	f := &fakeRoom{t: t, keys: keys, used: map[string]string{}, sessions: map[string]string{}, calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRoom) set(fn func(f *fakeRoom)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// hold makes the calls to the endpoint name wait, from now until release
// is called: a waitingroom busy with them for as long as the test needs.
func (f *fakeRoom) hold(name string) (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	if f.held == nil {
		f.held, f.holding = map[string]chan struct{}{}, map[string]int{}
	}
	f.held[name] = ch
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.held, name)
			f.mu.Unlock()
			close(ch)
		})
	}
}

// heldNow is the number of calls to the endpoint name held now.
func (f *fakeRoom) heldNow(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holding[name]
}

func (f *fakeRoom) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeRoom) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	prefix := "/api/rooms/" + testRoom
	var name string
	switch {
	case r.URL.Path == "/.well-known/jwks.json":
		name = "jwks"
	case r.URL.Path == prefix+"/gate":
		name = "gate"
	case r.URL.Path == prefix+"/passes/redeem":
		name = "redeem"
	case strings.HasPrefix(r.URL.Path, prefix+"/sessions/") && strings.HasSuffix(r.URL.Path, "/renew"):
		name = "renew"
	case strings.HasPrefix(r.URL.Path, prefix+"/sessions/") && strings.HasSuffix(r.URL.Path, "/end"):
		name = "end"
	case r.URL.Path == prefix+"/gate/report":
		name = "report"
	default:
		writeJSON(w, 404, map[string]string{"error": "not_found"})
		return
	}
	f.mu.Lock()
	f.calls[name]++
	status, refused := f.refuse[name]
	if name == "gate" {
		f.probeSaw = max(f.probeSaw, f.inflight)
	}
	f.inflight++
	held := f.held[name]
	if held != nil {
		f.holding[name]++
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	if held != nil {
		select {
		case <-held:
		case <-r.Context().Done():
		}
		f.mu.Lock()
		f.holding[name]--
		f.mu.Unlock()
		if r.Context().Err() != nil {
			return // the caller gave up
		}
	}
	if down == "503" {
		writeJSON(w, 503, map[string]string{"error": "unavailable"})
		return
	}
	if refused {
		refusal(w, status)
		return
	}
	if name != "jwks" && name != "gate" && r.Header.Get("Authorization") != "Bearer "+testAPIKey {
		writeJSON(w, 401, map[string]string{"error": "api_key_invalid"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch name {
	case "jwks":
		var set jose.JSONWebKeySet
		for _, k := range f.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: "EdDSA", Use: "sig"})
		}
		writeJSON(w, 200, set)
	case "gate":
		if f.noRoom {
			writeJSON(w, 404, map[string]string{"error": "room_not_found"})
			return
		}
		writeJSON(w, 200, map[string]any{"room": testRoom, "roomURL": f.srv.URL + "/r/" + testRoom, "failOpen": f.failOpen,
			"sessionSeconds": 600, "sessionMode": "idle", "audience": f.aud})
	case "redeem":
		var body struct{ Pass, Session string }
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<10))
		if f.oldAPI {
			dec.DisallowUnknownFields()
		}
		if err := dec.Decode(&body); err != nil || f.oldAPI && body.Session != "" {
			writeJSON(w, 400, map[string]string{"error": "bad_json"})
			return
		}
		if body.Session != "" && (len(body.Session) != 22 || !validSessionID(body.Session)) {
			writeJSON(w, 400, map[string]string{"error": "bad_request"})
			return
		}
		tok, err := jwt.ParseSigned(body.Pass, []jose.SignatureAlgorithm{jose.EdDSA})
		var c passClaims
		if err == nil {
			set := jose.JSONWebKeySet{}
			for _, k := range f.keys {
				set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid})
			}
			err = tok.Claims(set, &c)
		}
		if err != nil || c.Room != testRoom || c.ID == replacedJTI {
			writeJSON(w, 401, map[string]string{"error": "pass_invalid"})
			return
		}
		// Idempotent for the session id, as waitingroom: a retry with the id
		// that the pass opened, while that session lives, gets it again.
		id := body.Session
		if id == "" {
			id = randID()
		}
		if opened, used := f.used[c.ID]; used {
			if _, live := f.sessions[id]; opened != id || !live {
				writeJSON(w, 409, map[string]string{"error": "pass_used"})
				return
			}
		} else if _, taken := f.sessions[id]; taken {
			writeJSON(w, 409, map[string]string{"error": "pass_used"})
			return
		}
		f.used[c.ID] = id
		f.sessions[id] = "sub-" + c.Subject
		if f.lagging > 0 {
			// Applied, but answered too late for the gate's Timeout.
			f.lagging--
			f.mu.Unlock()
			select {
			case <-time.After(f.lag):
			case <-r.Context().Done():
			}
			f.mu.Lock()
		}
		writeJSON(w, 200, map[string]any{"session": map[string]any{"id": id, "room": testRoom, "subject": f.sessions[id],
			"expiresAt": time.Now().Add(10 * time.Minute).Format(time.RFC3339), "mode": "idle", "idleSeconds": 600}})
	case "renew":
		id := strings.Split(r.URL.Path, "/")[5]
		subject, ok := f.sessions[id]
		if !ok {
			writeJSON(w, 404, map[string]string{"error": "session_gone"})
			return
		}
		writeJSON(w, 200, map[string]any{"session": map[string]any{"id": id, "room": testRoom, "subject": subject,
			"expiresAt": time.Now().Add(10 * time.Minute).Format(time.RFC3339), "mode": "idle", "idleSeconds": 600}})
	case "end":
		delete(f.sessions, strings.Split(r.URL.Path, "/")[5])
		w.WriteHeader(204)
	case "report":
		var rep report
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<10))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rep); err != nil {
			writeJSON(w, 400, map[string]string{"error": "bad_report"})
			return
		}
		f.reports = append(f.reports, rep)
		w.WriteHeader(204)
	}
}

// refusal answers as waitingroom does when it refuses a call: 401
// api_key_invalid, 403, 404 gate_off, 429, 503, or (200) a malformed body.
func refusal(w http.ResponseWriter, status int) {
	codes := map[int]string{401: "api_key_invalid", 403: "forbidden", 404: "gate_off", 429: "too_many_requests", 503: "unavailable"}
	if status == http.StatusOK {
		writeJSON(w, 200, map[string]string{"unexpected": "shape"})
		return
	}
	writeJSON(w, status, map[string]string{"error": codes[status]})
}

func randID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// liveSessions lists the fake's live session ids.
func (f *fakeRoom) liveSessions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id := range f.sessions {
		ids = append(ids, id)
	}
	return ids
}

// passOpts describe a pass to sign.
type passOpts struct {
	room, aud, jti string
	exp, iat       time.Time
	noJTI          bool
}

// sign makes a pass with key k (its kid in the header).
func (f *fakeRoom) sign(k signingKey, p passOpts) string {
	f.t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		f.t.Fatal(err)
	}
	c := passClaims{Room: p.room, Claims: jwt.Claims{ID: p.jti, Subject: "visitor-hash", Audience: jwt.Audience{p.aud},
		Expiry: jwt.NewNumericDate(p.exp), IssuedAt: jwt.NewNumericDate(p.iat), Issuer: f.srv.URL}}
	s, err := jwt.Signed(sig).Claims(c).Serialize()
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.passes = append(f.passes, s)
	f.mu.Unlock()
	return s
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// env is a fake room, a shop guarded by a Gate, a browser with a cookie
// jar that follows no redirects, and a clock.
type env struct {
	t       *testing.T
	room    *fakeRoom
	key     signingKey
	gate    *Gate
	shop    *httptest.Server
	mux     *http.ServeMux // the shop's routes
	browser *http.Client
	clock   *clock
	logs    *syncBuffer
}

// shortTimeout is the Timeout of the tests of a waitingroom that answers
// too late: 300 ms.
func shortTimeout(o *Options) { o.Timeout = 300 * time.Millisecond }

// hangTimeout is the Timeout of the other tests, whose waitingroom
// answers: a bound that only catches a hang. A loaded machine may answer
// later than the gate's default (2 s), and a call that times out fails
// closed, or, three probes in a row, marks waitingroom down.
const hangTimeout = 30 * time.Second

func newEnv(t *testing.T, mod func(*Options)) *env {
	t.Helper()
	e := &env{t: t, key: newKey(t, "k1"), clock: &clock{t: time.Now()}, logs: &syncBuffer{}}
	e.room = newFakeRoom(t, e.key)
	mux := http.NewServeMux()
	e.shop, e.mux = httptest.NewServer(mux), mux
	t.Cleanup(e.shop.Close)
	e.room.aud = e.shop.URL
	opts := Options{RoomURL: e.room.srv.URL, Room: testRoom, APIKey: testAPIKey, Audience: e.shop.URL,
		Timeout: hangTimeout, Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if mod != nil {
		mod(&opts)
	}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	g.now = e.clock.Now
	g.probeGap = 10 * time.Millisecond
	e.gate = g
	shopPage := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "shop %s %s", r.Method, r.URL.Path) })
	mux.Handle("/", g.Protect(shopPage))
	mux.Handle("/whoami", g.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, ok := SessionFrom(r.Context())
		fmt.Fprintf(w, "%v %s %s %s", ok, s.Room, s.Subject, s.Mode)
	})))
	mux.HandleFunc("POST /done", func(w http.ResponseWriter, r *http.Request) {
		if err := g.End(w, r); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprint(w, "thanks")
	})
	jar, _ := cookiejar.New(nil)
	// Timeout: a bound for a loaded machine, not a latency target.
	e.browser = &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(e.checkLogs)
	return e
}

// checkLogs fails the test when the gate logged a pass, the API key or a
// session id.
func (e *env) checkLogs() {
	logs := e.logs.String()
	secrets := append([]string{testAPIKey}, e.room.passes...)
	secrets = append(secrets, e.room.liveSessions()...)
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			e.t.Errorf("the log holds a secret %.12s…:\n%s", s, logs)
		}
	}
}

// pass signs a valid pass for this env with a fresh jti.
func (e *env) pass(mod func(*passOpts)) string {
	now := e.clock.Now()
	p := passOpts{room: testRoom, aud: e.shop.URL, jti: randID(), iat: now, exp: now.Add(5 * time.Minute)}
	if mod != nil {
		mod(&p)
	}
	return e.room.sign(e.key, p)
}

// do sends one browser request to the shop.
func (e *env) do(method, path string, form url.Values, hdr ...string) *http.Response {
	e.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, e.shop.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.browser.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// enter posts a pass to EnterPath.
func (e *env) enter(pass, next string) *http.Response {
	e.t.Helper()
	return e.do(http.MethodPost, EnterPath, url.Values{"pass": {pass}, "next": {next}})
}

// mustEnter enters with a fresh valid pass and checks the 303.
func (e *env) mustEnter() {
	e.t.Helper()
	resp := e.enter(e.pass(nil), "/checkout")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/checkout" {
		e.t.Fatalf("enter: %d %s, want 303 /checkout", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return b.String()
}

// cookie sends a wr_gate cookie with the value v on every request of
// the browser.
func (e *env) cookie(v string) {
	e.browser.Jar.SetCookies(mustURL(e.t, e.shop.URL), []*http.Cookie{{Name: CookieName, Value: v, Path: "/"}})
}

// waitDown waits until the probe finds waitingroom down (or up).
func (e *env) waitDown(down bool) {
	e.t.Helper()
	waitFor(e.t, fmt.Sprintf("the probe to find waitingroom down=%v", down), func() bool { return e.gate.health.isDown() == down })
}

// waitProbed waits until no probe runs (the first request starts one).
func (e *env) waitProbed() {
	e.t.Helper()
	waitFor(e.t, "the probe to end", func() bool { return !e.gate.health.probingNow() })
}

// renewsRunning is the number of sessions whose renew runs now.
func (e *env) renewsRunning() int {
	c := e.gate.live
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, le := range c.m {
		if le.inflight != nil {
			n++
		}
	}
	return n
}

// waitFor polls cond for up to hangTimeout: a bound for a loaded machine,
// not a latency target (a condition that never holds still fails).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
