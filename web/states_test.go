package web

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/web/response"
)

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// postForm posts form to path with cookie c, without following redirects.
func (h *harness) postForm(t *testing.T, path string, form url.Values, c *http.Cookie, lang string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", h.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
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
	h.eng.Admit(context.Background(), h.room, time.Second, nil)
	time.Sleep(5 * time.Millisecond)
	h.eng.Admit(context.Background(), h.room, time.Second, []string{freshToken(t)})
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
			h := newHarness(t, nil)
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
				h.eng.Admit(ctx, h.room, time.Second, nil)
				time.Sleep(5 * time.Millisecond)
				h.eng.Admit(ctx, h.room, time.Second, []string{freshToken(t)})
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
