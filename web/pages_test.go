package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
)

func TestRoomPageIsSharedAndCacheable(t *testing.T) {
	h := newHarness(t, nil)
	path := "/r/" + h.room
	visitorCookie := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil).cookie()
	before, _ := h.eng.Stats(context.Background(), h.room)

	variants := []struct {
		name   string
		path   string
		cookie *http.Cookie
	}{
		{"anonymous", path, nil},
		{"a visitor in line", path, visitorCookie},
		{"with utm parameters", path + "?utm_source=newsletter&utm_campaign=bf", nil},
	}
	var first string
	for _, v := range variants {
		r := h.do(t, "GET", v.path, "", map[string]string{"Accept-Language": "en-US"}, v.cookie)
		if r.status != 200 {
			t.Fatalf("%s: %d", v.name, r.status)
		}
		hd := r.header
		checks := map[string]string{
			"Cache-Control":          "public, max-age=10, stale-while-revalidate=30",
			"Vary":                   "Accept-Language, Accept-Encoding",
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "strict-origin-when-cross-origin",
			"Content-Language":       "en",
		}
		for k, want := range checks {
			if got := hd.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", v.name, k, got, want)
			}
		}
		if hd.Get("Set-Cookie") != "" {
			t.Errorf("%s: the shared page set a cookie", v.name)
		}
		if csp := hd.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q must allow only same-origin script files", v.name, csp)
		}
		if first == "" {
			first = r.body
		} else if r.body != first {
			t.Errorf("%s: the page bytes differ between visitors", v.name)
		}
	}
	after, _ := h.eng.Stats(context.Background(), h.room)
	if after.Issued != before.Issued {
		t.Fatalf("page loads took %d tickets; a bare GET must take none", after.Issued-before.Issued)
	}
	for _, want := range []string{`property="og:title"`, `name="twitter:card"`, `aria-live="polite"`, `<form id="wr-join" class="join" method="post">`,
		`name="entry_token"`, `<progress`} {
		if !strings.Contains(first, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(first) {
		t.Error("the page references a third-party URL")
	}
	if strings.Contains(first, "<script>") {
		t.Error("the page holds an inline script")
	}
}

func TestRoomPageLanguagesAndEscaping(t *testing.T) {
	h := newHarness(t, nil)
	set := room.Defaults(h.room)
	set.Rate = 10
	set.Title = `Sale <script>alert("x")</script> & more`
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pageCacheTTL + 50*time.Millisecond)
	tests := []struct {
		lang, wantLang, wantText string
	}{
		{"ko-KR,ko;q=0.9", "ko", "줄 서기"},
		{"en", "en", "Join the line"},
		{"fr", "en", "Join the line"},
	}
	for _, tt := range tests {
		r := h.do(t, "GET", "/r/"+h.room, "", map[string]string{"Accept-Language": tt.lang}, nil)
		if !strings.Contains(r.body, `<html lang="`+tt.wantLang+`"`) || !strings.Contains(r.body, tt.wantText) {
			t.Errorf("Accept-Language %q: page not in %s", tt.lang, tt.wantLang)
		}
		if strings.Contains(r.body, "<script>alert") || !strings.Contains(r.body, "Sale &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; more") {
			t.Errorf("the room title is not escaped in:\n%s", r.body)
		}
	}
}

func TestRoomPageErrors(t *testing.T) {
	h := newHarness(t, nil)
	tests := []struct {
		path   string
		status int
	}{
		{"/r/no-such-room-here", 404},
		{"/r/Bad_Name", 400},
		{"/r/" + strings.Repeat("a", 65) + "/status", 400},
	}
	for _, tt := range tests {
		r := h.do(t, "GET", tt.path, "", nil, nil)
		if r.status != tt.status || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(r.body, "<h1>") {
			t.Errorf("%s: %d %s, want an HTML %d page", tt.path, r.status, r.header.Get("Content-Type"), tt.status)
		}
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPageWeight fetches the page and every asset it names, gzipped, as a
// browser would (the proof-of-work solver too, which a room asking for one
// loads): the total must stay within 25 KB.
func TestPageWeight(t *testing.T) {
	h := newHarness(t, nil)
	gz := map[string]string{"Accept-Encoding": "gzip"}
	page := h.do(t, "GET", "/r/"+h.room, "", gz, nil)
	if page.header.Get("Content-Encoding") != "gzip" {
		t.Fatal("the page is not gzipped")
	}
	html := string(gunzip(t, []byte(page.body)))
	total := len(page.body)
	urls := regexp.MustCompile(`(?:src|href|data-solver)="(/static/[^"]+)"`).FindAllStringSubmatch(html, -1)
	if len(urls) != 3 {
		t.Fatalf("page names %d assets, want the script, the stylesheet and the solver", len(urls))
	}
	for _, m := range urls {
		if !regexp.MustCompile(`/static/(app|vendor/altcha/worker)\.[0-9a-f]{12}\.(js|css)$`).MatchString(m[1]) {
			t.Errorf("asset URL %s is not fingerprinted", m[1])
		}
		r := h.do(t, "GET", m[1], "", gz, nil)
		if r.status != 200 || r.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d, encoding %q", m[1], r.status, r.header.Get("Content-Encoding"))
		}
		if cc := r.header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", m[1], cc)
		}
		etag := r.header.Get("ETag")
		if etag == "" {
			t.Errorf("%s: no ETag", m[1])
		}
		if again := h.do(t, "GET", m[1], "", map[string]string{"If-None-Match": etag}, nil); again.status != http.StatusNotModified {
			t.Errorf("%s with If-None-Match: %d, want 304", m[1], again.status)
		}
		total += len(r.body)
	}
	t.Logf("page and assets, gzipped: %d bytes", total)
	if total > 25*1024 {
		t.Fatalf("page weighs %d bytes compressed, over the 25 KB budget", total)
	}
	if r := h.do(t, "GET", "/static/app.000000000000.js", "", nil, nil); r.status != 404 {
		t.Fatalf("an unknown fingerprint answered %d", r.status)
	}
}

// TestNoJavaScriptFlow walks the join form and the status page as a
// browser without JavaScript would.
func TestNoJavaScriptFlow(t *testing.T) {
	h := newHarness(t, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(cookie *http.Cookie) *http.Response {
		req, _ := http.NewRequest("POST", h.srv.URL+"/r/"+h.room+"/join", strings.NewReader(""))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	post(nil) // someone ahead
	resp := post(nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/r/"+h.room+"/status" {
		t.Fatalf("join: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("join set no visitor cookie")
	}
	steps := []struct {
		name   string
		cookie *http.Cookie
		admit  bool
		want   []string
		refuse []string
	}{
		{"waiting", cookie, false, []string{`http-equiv="refresh" content="1"`, "1 person ahead of you", "2 in line"}, []string{`name="entry_token"`}},
		{"no cookie", nil, false, []string{"You are not in the line.", `/join"`}, []string{`http-equiv="refresh"`}},
		// The pass's page refreshes once, at the pass's end.
		{"ready", cookie, true, []string{"It is your turn!", `name="entry_token" value="`, `http-equiv="refresh" content="30`, "pass_over="}, nil},
	}
	for _, st := range steps {
		if st.admit {
			h.eng.Admit(context.Background(), h.room, time.Second, nil)
			time.Sleep(20 * time.Millisecond)
			h.eng.Admit(context.Background(), h.room, time.Second, []string{strings.Repeat("A", 43), strings.Repeat("B", 42) + "A"})
		}
		r := h.do(t, "GET", "/r/"+h.room+"/status", "", nil, st.cookie)
		if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d, Cache-Control %q", st.name, r.status, r.header.Get("Cache-Control"))
		}
		for _, w := range st.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s: status page lacks %q", st.name, w)
			}
		}
		for _, w := range st.refuse {
			if strings.Contains(r.body, w) {
				t.Errorf("%s: status page holds %q", st.name, w)
			}
		}
		if st.admit && !strings.Contains(r.body, `value="`+strings.Repeat("B", 42)+`A"`) {
			t.Errorf("ready page does not carry the visitor's own token")
		}
	}
}
