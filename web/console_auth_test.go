package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"waitingroom/server/audit"
	"waitingroom/server/operator"
	"waitingroom/server/store"
	"waitingroom/web/console"
)

// consoleCookieOf returns the wr_admin cookie c's jar holds for srv.
func consoleCookieOf(t *testing.T, c *http.Client, srv *httptest.Server) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(srv.URL + "/admin/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == console.SessionCookie {
			return ck
		}
	}
	t.Fatal("no wr_admin cookie")
	return nil
}

func postForm(t *testing.T, c *http.Client, u string, f url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func noRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func TestConsoleSignIn(t *testing.T) {
	h, db := newConsoleHarness(t, func(o *Options) { o.TrustedProxies = loopbackProxy })
	ops := operatorsOf(t, db)
	if err := ops.Add(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		form   url.Values
		hdr    map[string]string
		who    string
		secure bool
	}{
		{"token", url.Values{"token": {testAdminToken}}, nil, "admin", false},
		{"operator", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}, nil, "alice", false},
		{"behind a trusted TLS proxy", url.Values{"token": {testAdminToken}}, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7"}, "admin", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", tt.form, tt.hdr)
			if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/rooms" {
				t.Fatalf("sign-in: %d → %q %.200s", resp.StatusCode, resp.Header.Get("Location"), body)
			}
			var ck *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == console.SessionCookie {
					ck = c
				}
			}
			if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/admin" ||
				ck.MaxAge != 12*60*60 || ck.Secure != tt.secure || len(ck.Value) != 43 {
				t.Fatalf("cookie %+v", ck)
			}
			if strings.Contains(resp.Header.Get("Set-Cookie"), testAdminToken) {
				t.Fatal("the token is in the cookie")
			}
			want := tt.who
			if want == "admin" {
				want = adminSessionOperator(testAdminToken) // the token's fingerprint
			}
			sess, err := ops.Session(context.Background(), ck.Value)
			if err != nil || sess.Operator != want {
				t.Fatalf("session %+v %v, want operator %q", sess, err, want)
			}
		})
	}
	// An untrusted client cannot claim TLS: its cookie is not Secure (it
	// would be dropped over plain HTTP).
	noProxy, _ := newConsoleHarness(t, nil)
	resp, _ := postForm(t, noRedirects(), noProxy.srv.URL+"/admin/signin", url.Values{"token": {testAdminToken}}, map[string]string{"X-Forwarded-Proto": "https"})
	if c := resp.Cookies(); len(c) != 1 || c[0].Secure {
		t.Fatalf("untrusted X-Forwarded-Proto: %+v", c)
	}
	// Every sign-in is in the audit log, without the secret.
	entries, err := audit.New(db).List(context.Background(), audit.Filter{})
	if err != nil || len(entries) != 3 {
		t.Fatalf("audit %+v %v", entries, err)
	}
	if e := entries[1]; e.Action != "operator.signin" || e.Actor != "alice" || e.New != "password" {
		t.Fatalf("audit entry %+v", e)
	}
}

func TestConsoleWrongSignInIsThrottled(t *testing.T) {
	h, db := newConsoleHarness(t, func(o *Options) { o.TrustedProxies = loopbackProxy })
	if err := operatorsOf(t, db).Add(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	withSigninClock(h) // the failures' times stand still: Retry-After is the whole window
	try := func(client string, f url.Values) (*http.Response, string) {
		return postForm(t, noRedirects(), h.srv.URL+"/admin/signin", f, map[string]string{"X-Forwarded-For": client, "Accept-Language": "ko"})
	}
	wrong := []url.Values{
		{"name": {"alice"}, "password": {"wrong password!"}},
		{"name": {"nobody"}, "password": {"correct horse battery"}},
		{"token": {"guess"}},
		{"name": {"alice"}, "password": {strings.Repeat("x", 300)}},
	}
	for i := range adminFailures {
		resp, body := try("192.0.2.1", wrong[i%len(wrong)])
		if resp.StatusCode != 401 || len(resp.Cookies()) != 0 || !strings.Contains(body, "맞지 않습니다") || !strings.Contains(body, `lang="ko"`) {
			t.Fatalf("failure %d: %d %v %.300s", i, resp.StatusCode, resp.Cookies(), body)
		}
		if strings.Contains(body, "wrong password!") {
			t.Fatal("the password is echoed")
		}
	}
	for _, f := range []url.Values{wrong[0], {"name": {"alice"}, "password": {"correct horse battery"}}, {"token": {testAdminToken}}} {
		resp, body := try("192.0.2.1", f)
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != 429 || len(resp.Cookies()) != 0 || secs < 50 || secs > 60 || !strings.Contains(body, "로그인 실패가 너무 많습니다") {
			t.Fatalf("after %d failures: %d Retry-After %d %.300s", adminFailures, resp.StatusCode, secs, body)
		}
	}
	// The admin API shares the count.
	if r := h.do(t, "GET", "/api/admin/rooms/"+h.room, "", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + testAdminToken}, nil); r.status != 429 {
		t.Fatalf("admin API after console failures: %d", r.status)
	}
	if resp, _ := try("192.0.2.2", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); resp.StatusCode != 303 {
		t.Fatalf("another client: %d", resp.StatusCode)
	}
}

func TestConsoleSessionGuards(t *testing.T) {
	h, db := newConsoleHarness(t, nil)
	c, csrf := signIn(t, h.srv, testAdminToken)
	ck := consoleCookieOf(t, c, h.srv)
	var changes int
	page := h.web.console.Page(func(w http.ResponseWriter, r *http.Request, s console.Session) {
		fmt.Fprintf(w, "page of %s", s.Operator)
	})
	change := h.web.console.Change(func(w http.ResponseWriter, r *http.Request, s console.Session) {
		changes++
		fmt.Fprintf(w, "changed by %s: %s", s.Operator, r.PostForm.Get("v"))
	})
	serve := func(hf http.HandlerFunc, method, target, body string, withCookie bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if withCookie {
			r.AddCookie(ck)
		}
		w := httptest.NewRecorder()
		hf(w, r)
		return w
	}
	if w := serve(page, "GET", "/admin/rooms?x=1", "", true); w.Code != 200 || w.Body.String() != "page of admin" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("page: %d %q", w.Code, w.Body)
	}
	if w := serve(page, "GET", "/admin/rooms?x=1", "", false); w.Code != 303 || w.Header().Get("Location") != "/admin/signin?next=%2Fadmin%2Frooms%3Fx%3D1" {
		t.Fatalf("page without a session: %d %q", w.Code, w.Header().Get("Location"))
	}
	for _, tt := range []struct {
		name       string
		body       string
		withCookie bool
		want       int
	}{
		{"no csrf field", "v=1", true, 403},
		{"a wrong csrf field", "v=1&csrf=" + url.QueryEscape(csrf[:len(csrf)-1]+"x"), true, 403},
		{"an empty csrf field", "v=1&csrf=", true, 403},
		{"no session", "v=1&csrf=" + csrf, false, 403},
		{"too large", "csrf=" + csrf + "&v=" + strings.Repeat("a", 70<<10), true, 413},
		{"the session's csrf", "v=1&csrf=" + csrf, true, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := changes
			w := serve(change, "POST", "/admin/x", tt.body, tt.withCookie)
			if w.Code != tt.want {
				t.Fatalf("%d, want %d: %.300s", w.Code, tt.want, w.Body)
			}
			if tt.want != 200 {
				if changes != before {
					t.Fatal("the handler ran")
				}
				if !strings.Contains(w.Body.String(), `<h1>`) || strings.Contains(w.Body.String(), "<h1>"+strconv.Itoa(tt.want)) {
					t.Fatalf("not a console error page: %.300s", w.Body)
				}
			} else if changes != before+1 || w.Body.String() != "changed by admin: 1" {
				t.Fatalf("change: %q", w.Body)
			}
		})
	}
	// A CSRF token in the query string is not the form's.
	if w := serve(change, "POST", "/admin/x?csrf="+csrf, "v=1", true); w.Code != 403 {
		t.Fatalf("csrf in the query: %d", w.Code)
	}
	// An expired session is gone.
	if _, err := db.Exec(`UPDATE admin_sessions SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if w := serve(page, "GET", "/admin/rooms", "", true); w.Code != 303 || !strings.HasPrefix(w.Header().Get("Location"), "/admin/signin?next=") {
		t.Fatalf("expired session: %d %q", w.Code, w.Header().Get("Location"))
	}
	if w := serve(change, "POST", "/admin/x", "v=1&csrf="+csrf, true); w.Code != 403 || changes != 1 {
		t.Fatalf("expired session, change: %d", w.Code)
	}
	var left int
	db.Get(&left, `SELECT COUNT(*) FROM admin_sessions`)
	if left != 0 {
		t.Fatalf("%d expired sessions left", left)
	}
}

func TestConsoleSignOut(t *testing.T) {
	h, db := newConsoleHarness(t, nil)
	c, csrf := signIn(t, h.srv, testAdminToken)
	ck := consoleCookieOf(t, c, h.srv)
	live := func() bool {
		_, err := operatorsOf(t, db).Session(context.Background(), ck.Value)
		return err == nil
	}
	// Refused: without the csrf field, with a wrong one, from another site.
	for _, tt := range []struct {
		name string
		form url.Values
		hdr  map[string]string
	}{
		{"no csrf", url.Values{}, nil},
		{"wrong csrf", url.Values{"csrf": {"x" + csrf}}, nil},
		{"cross-site", url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"cross-origin, old browser", url.Values{"csrf": {csrf}}, map[string]string{"Origin": "https://evil.example"}},
	} {
		resp, body := postForm(t, c, h.srv.URL+"/admin/signout", tt.form, tt.hdr)
		if resp.StatusCode != 403 || !live() || !strings.Contains(body, "Nothing was changed") || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d live %v %.300s", tt.name, resp.StatusCode, live(), body)
		}
	}
	resp, _ := postForm(t, c, h.srv.URL+"/admin/signout", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/signin?signedout=1" || live() {
		t.Fatalf("sign-out: %d %q live %v", resp.StatusCode, resp.Header.Get("Location"), live())
	}
	if cs := resp.Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 || cs[0].Path != "/admin" {
		t.Fatalf("the cookie is not deleted: %+v", cs)
	}
	// The old cookie, replayed, opens nothing.
	req, _ := http.NewRequest("POST", h.srv.URL+"/admin/signout", strings.NewReader("csrf="+csrf))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(ck)
	r2, err := noRedirects().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 403 {
		t.Fatalf("replayed cookie: %d", r2.StatusCode)
	}
}

func TestConsoleNextStaysLocal(t *testing.T) {
	h, _ := newConsoleHarness(t, nil)
	for _, tt := range []struct{ next, want string }{
		{"", "/admin/rooms"},
		{"/admin/orders?room=a&page=2", "/admin/orders?room=a&page=2"},
		{"/admin/rooms/drop/settings", "/admin/rooms/drop/settings"},
		{"https://evil.example/admin/", "/admin/rooms"},
		{"//evil.example/admin/", "/admin/rooms"},
		{"/\\evil.example", "/admin/rooms"},
		{"/admin/\\evil", "/admin/rooms"},
		{"/admin/../r/x", "/admin/rooms"},
		{"/admin", "/admin/rooms"},
		{"/r/drop", "/admin/rooms"},
		{"javascript:alert(1)", "/admin/rooms"},
		{"/admin/\r\nSet-Cookie: x=1", "/admin/rooms"},
		{"/admin/" + strings.Repeat("a", 2000), "/admin/rooms"},
	} {
		resp, _ := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", url.Values{"token": {testAdminToken}, "next": {tt.next}}, nil)
		if got := resp.Header.Get("Location"); resp.StatusCode != 303 || got != tt.want {
			t.Errorf("next=%q: %d → %q, want %q", tt.next, resp.StatusCode, got, tt.want)
		}
	}
	// The page carries a local next into its forms, and drops another.
	for _, tt := range []struct {
		next string
		want bool
	}{{"/admin/audit", true}, {"https://evil.example", false}} {
		r := h.do(t, "GET", "/admin/signin?next="+url.QueryEscape(tt.next), "", nil, nil)
		if r.status != 200 || strings.Contains(r.body, `value="`+tt.next+`"`) != tt.want {
			t.Errorf("page with next=%q: %d %.400s", tt.next, r.status, r.body)
		}
	}
	for _, p := range []string{"/admin", "/admin/"} {
		resp, err := noRedirects().Get(h.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/rooms" {
			t.Fatalf("%s: %d %q", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

func TestConsoleSignInPage(t *testing.T) {
	withOperator, withOperatorDB := newConsoleHarness(t, func(o *Options) { o.AdminToken = "" })
	if err := operatorsOf(t, withOperatorDB).Add(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	neither, _ := newConsoleHarness(t, func(o *Options) { o.AdminToken = "" })
	tokenOnly, tokenOnlyDB := newConsoleHarness(t, nil)
	noDB := newHarness(t, nil)
	for _, tt := range []struct {
		name     string
		h        *harness
		lang     string
		want     []string
		wantNot  []string
		wantCode int
	}{
		{"token only", tokenOnly, "en", []string{`name="token"`, `lang="en"`, `href="#main"`, "/static/console."}, []string{`name="password"`, "/admin/orders"}, 200},
		{"operators, no token", withOperator, "en", []string{`name="password"`, `autocomplete="current-password"`}, []string{`name="token"`}, 200},
		{"neither", neither, "ko", []string{"콘솔 로그인이 설정되지 않았습니다", "waitingroom admin add-user", `lang="ko"`}, []string{"<form"}, 200},
		{"no database", noDB, "en", []string{"keeps its sessions in the database"}, []string{`name="token"`}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.h.do(t, "GET", "/admin/signin", "", map[string]string{"Accept-Language": tt.lang}, nil)
			if r.status != tt.wantCode || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %q", r.status, r.header.Get("Cache-Control"))
			}
			for _, s := range tt.want {
				if !strings.Contains(r.body, s) {
					t.Errorf("missing %q in %.600s", s, r.body)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(r.body, s) {
					t.Errorf("unexpected %q", s)
				}
			}
		})
	}
	// A session of the admin token ends with the token: a server without
	// one (on the same database) does not take it.
	tc, _ := signIn(t, tokenOnly.srv, testAdminToken)
	adminCookie := consoleCookieOf(t, tc, tokenOnly.srv)
	tokenGone := newHarness(t, func(o *Options) {
		o.Operators, o.Audit, o.AdminToken = operatorsOf(t, tokenOnlyDB), audit.New(tokenOnlyDB), ""
	})
	req, _ := http.NewRequest("GET", tokenGone.srv.URL+"/admin/signin", nil)
	req.AddCookie(adminCookie)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), "Signed in as") {
			t.Fatal("an admin session outlived ADMIN_TOKEN")
		}
	}
	// Without a token, the token field signs nobody in; the operator does.
	resp, _ := postForm(t, noRedirects(), withOperator.srv.URL+"/admin/signin", url.Values{"token": {testAdminToken}}, nil)
	if resp.StatusCode != 401 {
		t.Fatalf("token with ADMIN_TOKEN unset: %d", resp.StatusCode)
	}
	c, csrf := signInWith(t, withOperator.srv, url.Values{"name": {"alice"}, "password": {"correct horse battery"}})
	resp, err := c.Get(withOperator.srv.URL + "/admin/signin")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, s := range []string{"Signed in as alice", `href="/admin/orders"`, `href="/admin/audit"`, `action="/admin/signout"`, csrf} {
		if !strings.Contains(string(b), s) {
			t.Errorf("signed-in frame lacks %q", s)
		}
	}
	// An unknown console path is a console page, in words.
	for _, m := range []string{"GET", "POST"} {
		r := withOperator.do(t, m, "/admin/nope", "", map[string]string{"Accept-Language": "ko"}, nil)
		if r.status != 404 || !strings.Contains(r.body, "<h1>찾을 수 없음</h1>") || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s /admin/nope: %d %.300s", m, r.status, r.body)
		}
	}
	// The stylesheet is served.
	css := withOperator.do(t, "GET", withOperator.web.assets.url("console.css"), "", nil, nil)
	if css.status != 200 || !strings.Contains(css.body, ".skip") {
		t.Fatalf("console.css: %d", css.status)
	}
}

// TestConsoleAdminSessionEndsWithItsToken: a session opened with the
// admin token lasts only as long as the server has that token: a server
// restarted on the same database with another ADMIN_TOKEN (or none)
// refuses it; with the same token it keeps it.
func TestConsoleAdminSessionEndsWithItsToken(t *testing.T) {
	h, db := newConsoleHarness(t, nil)
	c, _ := signIn(t, h.srv, testAdminToken)
	ck := consoleCookieOf(t, c, h.srv)
	ops := operatorsOf(t, db)
	restarted := func(token string) *Server {
		return newHarness(t, func(o *Options) {
			o.Operators, o.Audit, o.AdminToken = ops, audit.New(db), token
		}).web
	}
	page := func(s *Server) string {
		r := httptest.NewRequest("GET", "/admin/rooms", nil)
		r.AddCookie(ck)
		w := httptest.NewRecorder()
		s.console.Page(func(w http.ResponseWriter, r *http.Request, sess console.Session) {
			fmt.Fprintf(w, "signed in as %s", sess.Operator)
		})(w, r)
		if w.Code == 303 {
			return "→ " + w.Header().Get("Location")
		}
		return w.Body.String()
	}
	for _, tt := range []struct {
		name, token, want string
	}{
		{"the same token", testAdminToken, "signed in as admin"},
		{"another token", strings.Repeat("b", 40), "→ /admin/signin?next=%2Fadmin%2Frooms"},
		{"no token", "", "→ /admin/signin?next=%2Fadmin%2Frooms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := page(restarted(tt.token)); got != tt.want {
				t.Fatalf("%q, want %q", got, tt.want)
			}
		})
	}
	// A session stored as a bare "admin" (before the token's fingerprint)
	// is refused too.
	secret, _, err := ops.StartSession(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	ck = &http.Cookie{Name: console.SessionCookie, Value: secret}
	if got := page(h.web); got != "→ /admin/signin?next=%2Fadmin%2Frooms" {
		t.Fatalf("a bare admin session: %q", got)
	}
}

// operatorsOf is the operator store of db, which a console harness's
// server signs in with.
func operatorsOf(t *testing.T, db *store.DB) *operator.Store {
	t.Helper()
	ops, err := operator.New(db)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// adminSessionOperator is the operator a session opened with token
// stores: "admin:" and the first 8 hex digits of the SHA-256 of the
// token's SHA-256.
func adminSessionOperator(token string) string {
	d := sha256.Sum256(digest(token))
	return "admin:" + hex.EncodeToString(d[:4])
}
