package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"waitingroom/web/request"

	"waitingroom/server/room"
	"waitingroom/web/response"
	"waitingroom/web/sse"
)

func TestRoomPageIsSharedAndCacheable(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	h := newHarness(t, nil)
	set := room.Defaults(h.room)
	set.Rate = 10
	set.Title = `Sale <script>alert("x")</script> & more`
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	h := newClockedHarness(t, nil)
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
		if c.Name == request.CookieName {
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
			h.credit(t, h.room, 20*time.Millisecond)
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

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// postForm posts form to path with cookie c, without following redirects.
func (h *harness) postForm(t *testing.T, path string, form url.Values, c *http.Cookie, lang string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", h.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if h.forwardedFor != "" {
		req.Header.Set("X-Forwarded-For", h.forwardedFor)
	}
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestJoinWithoutJavaScriptKeepsUTM posts the room page's join form as a
// browser without JavaScript does (to the page's own address, with its
// query string): the status page it lands on carries the utm_* fields, and
// its order form posts them.
func TestJoinWithoutJavaScriptKeepsUTM(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 5, nil)
	page := h.do(t, "GET", "/r/"+h.room, "", nil, nil)
	// The join form has no action: it posts to the address it came from.
	if !strings.Contains(page.body, `<form id="wr-join" class="join" method="post">`) {
		t.Fatalf("the join form does not post to the page's own address:\n%s", page.body)
	}
	resp := h.postForm(t, "/r/"+h.room+"?utm_source=news&utm_campaign=bf&utm_evil=x&other=1", nil, nil, "")
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || loc != "/r/"+h.room+"/status?utm_campaign=bf&utm_source=news" {
		t.Fatalf("join: %d to %q, want the status page with the utm fields", resp.StatusCode, loc)
	}
	c := reply{header: resp.Header}.cookie()
	h.admitNext(t, freshToken(t))
	st := h.do(t, "GET", loc, "", nil, c)
	for _, want := range []string{`name="utm_source" value="news"`, `name="utm_campaign" value="bf"`, "Buy now", `max="5"`} {
		if !strings.Contains(st.body, want) {
			t.Errorf("status page lacks %s:\n%s", want, st.body)
		}
	}
	if strings.Contains(st.body, "utm_evil") {
		t.Error("an unknown utm field was carried")
	}
}

// TestPagesWithoutJavaScript reads the shared page as a browser without
// JavaScript shows it: no "connecting", no lead line (its script shows the
// one of the state), one heading, the join button, no "keep this page
// open" (it is not true before joining), prices in the
// currency of the language, the quantity bounded by the stock and the
// room's per-buyer limit, and Korean that breaks between words.
func TestPagesWithoutJavaScript(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 7, func(s *room.Settings) { s.MaxPerBuyer, s.ShopURL = 2, "https://shop.example/sale" })
	tests := []struct {
		lang  string
		wants []string
		not   []string
	}{
		{"en", []string{"₩129,000", "Buy now", `max="2"`, "At most 2 per buyer", "Join the line", `href="https://shop.example/sale"`},
			[]string{"Connecting", "Continue to order", "a few at a time"}},
		{"ko", []string{"129,000원", "구매하기", `max="2"`, "1인당 최대 2개", "줄 서기"}, []string{"연결 중", "몇 명씩"}},
	}
	for _, tt := range tests {
		r := h.do(t, "GET", "/r/"+h.room, "", map[string]string{"Accept-Language": tt.lang}, nil)
		// Visible without JavaScript: everything outside hidden elements
		// and the texts for the script.
		visible := regexp.MustCompile(`(?s)<script.*?</script>|<(form|div|p)[^>]* hidden[^>]*>.*?</(form|div|p)>`).ReplaceAllString(r.body, "")
		for _, w := range tt.wants {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s: the page lacks %q", tt.lang, w)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(visible, n) {
				t.Errorf("%s: without JavaScript the page shows %q", tt.lang, n)
			}
		}
		if strings.Count(visible, "<h1") != 1 || strings.Contains(visible, "<h2") {
			t.Errorf("%s: headings without JavaScript: want one h1 only:\n%s", tt.lang, visible)
		}
		if strings.Contains(visible, "wr-keep") {
			t.Errorf("%s: the page promises a place before the buyer joined", tt.lang)
		}
	}
	css := h.do(t, "GET", h.web.assets.url("app.css"), "", nil, nil)
	if !strings.Contains(css.body, ":lang(ko){word-break:keep-all") {
		t.Error("Korean text does not break between words")
	}
}

// TestOrderOverPerBuyerLimit: the room's maxPerBuyer caps one buyer's
// total across passes. An order over it is refused with 400 over_limit and
// how many are left, in the visitor's language, before the pass is claimed:
// the pass still orders.
func TestOrderOverPerBuyerLimit(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 10, func(s *room.Settings) { s.MaxPerBuyer = 2 })
	path := "/api/rooms/" + h.room + "/orders"
	c, tok := h.admitted(t)
	steps := []struct {
		name     string
		readmit  bool // a new pass for the same buyer first
		quantity string
		form     bool // the order form, in Korean; else JSON, in English
		status   int
		left     int    // JSON over_limit's left
		says     string // in the answer
	}{
		{name: "JSON over the limit", quantity: "3", status: 400, left: 2, says: "may still order 2"},
		{name: "form over the limit", quantity: "3", form: true, status: 400, says: "2개 더 주문"},
		{name: "the same pass within the limit", quantity: "2", status: 201},
		{name: "a new pass once the limit is reached", readmit: true, quantity: "1", status: 400, left: 0, says: "already ordered 2"},
		{name: "the form once the limit is reached", quantity: "1", form: true, status: 400, says: "최대 수량인 2개를 이미"},
	}
	for _, st := range steps {
		if st.readmit {
			tok = h.readmit(t, c)
		}
		if st.form {
			resp := h.postForm(t, "/r/"+h.room+"/order", url.Values{"entry_token": {tok}, "quantity": {st.quantity}}, c, "ko")
			if body := readBody(t, resp); resp.StatusCode != st.status || !strings.Contains(body, st.says) {
				t.Fatalf("%s: %d, want %d saying %q:\n%s", st.name, resp.StatusCode, st.status, st.says, body)
			}
			continue
		}
		r := h.do(t, "POST", path, `{"quantity":`+st.quantity+`}`, map[string]string{"X-Entry-Token": tok, "Accept-Language": "en"}, c)
		if r.status != st.status {
			t.Fatalf("%s: %d %s, want %d", st.name, r.status, r.body, st.status)
		}
		if st.status != 400 {
			continue
		}
		var e response.LimitError
		r.json(t, &e)
		if e.Code != "over_limit" || e.Limit != 2 || e.Left != st.left || !strings.Contains(e.Message, st.says) {
			t.Fatalf("%s: %s, want over_limit with %d left saying %q", st.name, r.body, st.left, st.says)
		}
	}
}

// TestErrorPagesSayWhatHappened: every error page has a heading in words,
// never an HTTP status, in the visitor's language, and links back to the
// room's shop; an expired pass offers to rejoin.
func TestErrorPagesSayWhatHappened(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 1, func(s *room.Settings) { s.ShopURL = "https://shop.example/" })
	c, tok := h.admitted(t)
	expiredTok := freshToken(t)
	tests := []struct {
		name, method, path string
		form               url.Values
		lang               string
		status             int
		heading            string
		wants              []string
	}{
		{"unknown room", "GET", "/r/no-such-room-x", nil, "en", 404, "This link does not lead to a waiting room", nil},
		{"unknown room (ko)", "GET", "/r/no-such-room-x", nil, "ko", 404, "이 링크의 대기실을 찾을 수 없습니다", nil},
		{"bad room name", "GET", "/r/Bad_Name", nil, "en", 400, "This link does not lead to a waiting room", nil},
		{"unknown order", "GET", "/r/" + h.room + "/orders/AAAAAAAAAAAAAAAAAAAAAA", nil, "en", 404, "There is nothing here",
			[]string{`href="https://shop.example/"`}},
		{"expired pass", "POST", "/r/" + h.room + "/order", url.Values{"entry_token": {expiredTok}}, "en", 401, "Your pass has expired",
			[]string{"Join the line again", `action="/r/` + h.room + `"`, `href="https://shop.example/"`}},
		{"expired pass (ko)", "POST", "/r/" + h.room + "/order", url.Values{"entry_token": {expiredTok}}, "ko", 401, "입장권이 만료되었습니다",
			[]string{"다시 줄 서기", "쇼핑몰로 돌아가기"}},
		{"bad order", "POST", "/r/" + h.room + "/order", url.Values{"entry_token": {tok}, "quantity": {"x"}}, "en", 400, "Something went wrong",
			[]string{`href="https://shop.example/"`}},
		{"more than the stock", "POST", "/r/" + h.room + "/order", url.Values{"entry_token": {tok}, "quantity": {"2"}}, "en", 409, "Your order was not placed",
			[]string{"Only 1 left", `href="https://shop.example/"`}},
	}
	numeric := regexp.MustCompile(`<h1>\s*\d{3}\s*</h1>|class="code"`)
	for _, tt := range tests {
		var status int
		var body string
		if tt.method == "GET" {
			r := h.do(t, "GET", tt.path, "", map[string]string{"Accept-Language": tt.lang}, c)
			status, body = r.status, r.body
		} else {
			resp := h.postForm(t, tt.path, tt.form, c, tt.lang)
			status, body = resp.StatusCode, readBody(t, resp)
		}
		if status != tt.status || !strings.Contains(body, "<h1>"+tt.heading+"</h1>") || numeric.MatchString(body) {
			t.Errorf("%s: %d, want %d with the heading %q:\n%s", tt.name, status, tt.status, tt.heading, body)
		}
		for _, w := range tt.wants {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the page lacks %q", tt.name, w)
			}
		}
	}
}

// TestConfirmationShowsTheOrder: the price the order was placed at,
// quantity, total in the currency, the next steps and the link back to
// the shop.
func TestConfirmationShowsTheOrder(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 5, func(s *room.Settings) { s.ShopURL = "https://shop.example/" })
	c, tok := h.admitted(t)
	resp := h.postForm(t, "/r/"+h.room+"/order", url.Values{"entry_token": {tok}, "quantity": {"2"}}, c, "")
	loc := resp.Header.Get("Location")
	// The order keeps the price it was placed at.
	if _, err := h.db.Exec(`UPDATE products SET price = 1 WHERE id = $1`, h.product); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		lang  string
		wants []string
	}{
		{"en", []string{"₩129,000", "₩258,000", "Total", "Keep this order number", `href="https://shop.example/"`, ">2<"}},
		{"ko", []string{"129,000원", "258,000원", "합계", "쇼핑몰로 돌아가기"}},
	} {
		r := h.do(t, "GET", loc, "", map[string]string{"Accept-Language": tt.lang}, c)
		for _, w := range tt.wants {
			if r.status != 200 || !strings.Contains(r.body, w) {
				t.Errorf("%s confirmation: %d, lacks %q", tt.lang, r.status, w)
			}
		}
	}
}

// TestStatusPageSaysPaused: without JavaScript, a paused room says so,
// with no estimate of the wait.
func TestStatusPageSaysPaused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	set, _ := h.eng.Room(context.Background(), h.room)
	set.Paused = true
	h.eng.SaveRoom(context.Background(), h.room, set)
	c := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil).cookie()
	r := h.do(t, "GET", "/r/"+h.room+"/status", "", nil, c)
	if !strings.Contains(r.body, "The line is paused") || strings.Contains(r.body, "Estimated wait") || !strings.Contains(r.body, `http-equiv="refresh"`) {
		t.Fatalf("paused status page:\n%s", r.body)
	}
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// TestStatusPageSaysEachState reads the no-JavaScript status page in each
// state whose words depend on the room or the moment: a paused line says
// the buyer's own place; a pass says its real time, counts down and
// refreshes at its end, after which the page says that it ran out (and
// offers to join again); the pre-queue past its opening says the places
// are being drawn, never "drawn in 0 s".
func TestStatusPageSaysEachState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		set  func(s *room.Settings)
		// then changes the room once the visitor entered.
		then func(s *room.Settings)
		// ahead enters someone first; ready admits the visitor; left
		// takes them out of the line.
		ahead, ready, left bool
		// passOver is the pass_over parameter's offset from now (0: none).
		passOver time.Duration
		lang     string
		wants    []string
		refuses  []string
	}{
		{name: "paused", set: func(s *room.Settings) { s.Paused = true }, ahead: true, lang: "en",
			wants: []string{"The line is paused", "1 person ahead of you"}, refuses: []string{"Estimated wait"}},
		{name: "paused (ko)", set: func(s *room.Settings) { s.Paused = true }, ahead: true, lang: "ko",
			wants: []string{"대기열이 잠시 멈췄습니다", "내 앞에 1명이 있습니다"}},
		{name: "a 30 s pass", set: func(s *room.Settings) { s.TokenTTLSeconds = 30 }, ready: true, lang: "en",
			wants:   []string{"Your entry pass is valid for 30 s", "Your pass is valid for about 3", `http-equiv="refresh" content="3`, "status?pass_over="},
			refuses: []string{"a few minutes"}},
		{name: "a 30 s pass (ko)", set: func(s *room.Settings) { s.TokenTTLSeconds = 30 }, ready: true, lang: "ko",
			wants: []string{"입장권은 30초 동안 유효합니다", `http-equiv="refresh"`}, refuses: []string{"몇 분"}},
		{name: "a 5 min pass", ready: true, lang: "en", wants: []string{"Your entry pass is valid for 5 min"}},
		{name: "the pass ran out", set: func(s *room.Settings) { s.TokenTTLSeconds = 30 }, passOver: -time.Second, left: true, lang: "en",
			wants:   []string{"Your pass has expired", "Passes are held for 30 s", "Join the line again"},
			refuses: []string{"You are not in the line", `http-equiv="refresh"`}},
		{name: "the pass ran out (ko)", set: func(s *room.Settings) { s.TokenTTLSeconds = 30 }, passOver: -time.Second, left: true, lang: "ko",
			wants: []string{"입장권이 만료되었습니다", "입장권은 30초 동안만", "다시 줄 서기"}},
		{name: "a pass that has not ended", passOver: time.Minute, left: true, lang: "en",
			wants: []string{"You are not in the line"}, refuses: []string{"expired"}},
		{name: "a pass that ended long ago", passOver: -2 * time.Hour, left: true, lang: "en",
			wants: []string{"You are not in the line"}, refuses: []string{"expired"}},
		{name: "the draw is due", set: prequeueOpen, then: drawDue, lang: "en",
			wants: []string{"You are in the pre-queue", "Drawing places now…"}, refuses: []string{"drawn in"}},
		{name: "the draw is due (ko)", set: prequeueOpen, then: drawDue, lang: "ko",
			wants: []string{"지금 순서를 추첨하고 있습니다…"}, refuses: []string{"추첨까지"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := newHarness
			if tt.ready {
				start = newClockedHarness // the test moves the clock for the admission's credit
			}
			h := start(t, nil)
			change := func(f func(s *room.Settings)) {
				set, err := h.eng.Room(ctx, h.room)
				if err != nil {
					t.Fatal(err)
				}
				f(&set)
				if err := h.eng.SaveRoom(ctx, h.room, set); err != nil {
					t.Fatal(err)
				}
			}
			if tt.set != nil {
				change(tt.set)
			}
			if tt.ahead {
				h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
			}
			c := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil).cookie()
			if tt.left {
				h.do(t, "DELETE", "/api/rooms/"+h.room+"/queue", "", nil, c)
			}
			if tt.then != nil {
				change(tt.then)
			}
			if tt.ready {
				h.admitNext(t, freshToken(t))
			}
			path := "/r/" + h.room + "/status"
			if tt.passOver != 0 {
				path += "?pass_over=" + strconv.FormatInt(time.Now().Add(tt.passOver).UnixMilli(), 10)
			}
			r := h.do(t, "GET", path, "", map[string]string{"Accept-Language": tt.lang}, c)
			for _, w := range tt.wants {
				if !strings.Contains(r.body, w) {
					t.Errorf("the status page lacks %q:\n%s", w, r.body)
				}
			}
			for _, w := range tt.refuses {
				if strings.Contains(r.body, w) {
					t.Errorf("the status page says %q:\n%s", w, r.body)
				}
			}
		})
	}
}

// prequeueOpen sets a room whose pre-queue is open, an hour before its
// opening.
func prequeueOpen(s *room.Settings) {
	pq, op := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	s.PrequeueAt, s.OpensAt = &pq, &op
}

// drawDue sets a room whose pre-queue opened a minute ago and whose
// opening (the draw) was due a second ago.
func drawDue(s *room.Settings) {
	pq, op := time.Now().Add(-time.Minute), time.Now().Add(-time.Second)
	s.PrequeueAt, s.OpensAt = &pq, &op
}

// TestEveryInstanceFollowsASettingsChange changes a room through one
// instance and reads it through another on the same Redis: the change
// shows there within one tick (the default tick is a second; the room
// page is cached for pageCacheTTL, a second too).
func TestEveryInstanceFollowsASettingsChange(t *testing.T) {
	t.Parallel()
	const tick = time.Second
	cases := []struct {
		name   string
		change string
		// seen reports whether instance B shows the change.
		seen func(t *testing.T, b string, room string) bool
	}{
		{"title on the room page", `{"title":"After the change"}`, func(t *testing.T, b, room string) bool {
			return strings.Contains(getBody(t, b+"/r/"+room), "After the change")
		}},
		{"closed refuses a join", `{"mode":"closed"}`, func(t *testing.T, b, room string) bool {
			resp, err := http.Post(b+"/api/rooms/"+room+"/queue", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode != http.StatusOK
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newHarness(t, nil)
			b := startInstance(t, a.rdb, a.eng, a.room, tick, false, sse.Options{})
			if tc.seen(t, b.url, a.room) {
				t.Fatalf("instance B shows the change before it was made")
			}
			changed := time.Now()
			if r := a.do(t, "PUT", "/api/admin/rooms/"+a.room, tc.change, map[string]string{"Authorization": "Bearer " + testAdminToken}, nil); r.status != http.StatusOK {
				t.Fatalf("PUT through instance A: %d %s", r.status, r.body)
			}
			for !tc.seen(t, b.url, a.room) {
				if time.Since(changed) > tick+pageCacheTTL/2 {
					t.Fatalf("instance B did not follow the change within one tick")
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("instance B followed in %v", time.Since(changed).Round(time.Millisecond))
		})
	}
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
