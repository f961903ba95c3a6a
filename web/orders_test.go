package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/web/response"
)

// orderHarness is a server with a real order database (a fresh PostgreSQL
// schema) and one product of the given stock in its room, on the fake
// clock of newClockedHarness.
type orderHarness struct {
	*harness
	db      *store.DB
	product int64
}

func newOrderHarness(t *testing.T, stock int64, set func(*room.Settings)) *orderHarness {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := store.Open(context.Background(), servicetest.PostgresURL(t), 4, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), os.DirFS("../migrations")); err != nil {
		t.Fatal(err)
	}
	var svc *order.Service
	h := newClockedHarness(t, func(o *Options) {
		svc = order.NewService(order.NewStore(db.DB, 0), o.Queue.(order.Gate), 0, quiet).WithClock(o.Clock)
		withOrderService(o, svc)
	})
	if set != nil {
		s, _ := h.eng.Room(context.Background(), h.room)
		set(&s)
		h.eng.SaveRoom(context.Background(), h.room, s)
	}
	oh := &orderHarness{harness: h, db: db}
	if err := db.QueryRowx(`INSERT INTO products (room, name, price, stock) VALUES ($1, 'Sneakers', 129000, $2) RETURNING id`, h.room, stock).Scan(&oh.product); err != nil {
		t.Fatal(err)
	}
	return oh
}

// admitted returns the cookie and token of a freshly admitted visitor.
func (h *orderHarness) admitted(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	c := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil).cookie()
	return c, h.readmit(t, c)
}

// readmit enters the visitor of cookie c again and returns their new pass.
func (h *orderHarness) readmit(t *testing.T, c *http.Cookie) string {
	t.Helper()
	h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, c)
	h.admitNext(t, freshToken(t))
	var p struct {
		Status     string  `json:"status"`
		EntryToken *string `json:"entryToken"`
	}
	h.do(t, "GET", "/api/rooms/"+h.room+"/queue/position", "", nil, c).json(t, &p)
	if p.EntryToken == nil {
		t.Fatalf("visitor not admitted: %+v", p)
	}
	return *p.EntryToken
}

func freshToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 43)
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range b {
		b[i] = alphabet[(time.Now().UnixNano()+int64(i*7919))%64]
	}
	b[42] = 'A'
	return string(b)
}

func TestOrderAPI(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 3, nil)
	path := "/api/rooms/" + h.room + "/orders"
	c, tok := h.admitted(t)
	other, otherTok := h.admitted(t)
	steps := []struct {
		name   string
		body   string
		hdr    map[string]string
		cookie *http.Cookie
		status int
		code   string
	}{
		{"no token", `{"quantity":1}`, nil, c, 401, "token_missing"},
		{"no cookie", `{"quantity":1}`, map[string]string{"X-Entry-Token": tok}, nil, 401, "token_invalid"},
		{"forged token", `{"quantity":1}`, map[string]string{"X-Entry-Token": strings.Repeat("x", 43)}, c, 401, "token_invalid"},
		{"someone else's token", `{"quantity":1}`, map[string]string{"X-Entry-Token": otherTok}, c, 401, "token_invalid"},
		{"bad JSON", `{"quantity":"one"}`, map[string]string{"X-Entry-Token": tok}, c, 400, "bad_json"},
		{"unknown field", `{"qty":1}`, map[string]string{"X-Entry-Token": tok}, c, 400, "bad_json"},
		{"bad quantity", `{"quantity":11}`, map[string]string{"X-Entry-Token": tok}, c, 400, "bad_quantity"},
		{"unknown product", `{"productId":999999}`, map[string]string{"X-Entry-Token": tok}, c, 400, "product_not_found"},
		{"more than the stock", `{"quantity":4}`, map[string]string{"X-Entry-Token": tok}, c, 409, "insufficient_stock"},
		{"placed (productId may be left out)", `{"quantity":2,"utm":{"source":"mail"}}`, map[string]string{"X-Entry-Token": tok}, c, 201, ""},
		{"replay", `{"quantity":1}`, map[string]string{"X-Entry-Token": tok}, c, 409, "token_used"},
		{"second buyer takes the last", `{"quantity":1}`, map[string]string{"X-Entry-Token": otherTok}, other, 201, ""},
	}
	for _, st := range steps {
		r := h.do(t, "POST", path, st.body, st.hdr, st.cookie)
		if r.status != st.status {
			t.Fatalf("%s: %d %s, want %d", st.name, r.status, r.body, st.status)
		}
		if st.code != "" {
			var e response.Error
			r.json(t, &e)
			if e.Code != st.code || e.Message == "" {
				t.Fatalf("%s: %s, want code %s", st.name, r.body, st.code)
			}
			continue
		}
		var o struct {
			OrderID             string
			ProductID, Quantity int64
		}
		r.json(t, &o)
		// orderId is the public order number: 16 random bytes, not the
		// database's sequential id.
		if len(o.OrderID) != 22 || !order.ValidPublicID(o.OrderID) || o.ProductID != h.product {
			t.Fatalf("%s: %s", st.name, r.body)
		}
	}
	var stock int64
	h.db.Get(&stock, `SELECT stock FROM products WHERE id = $1`, h.product)
	if stock != 0 {
		t.Fatalf("stock %d after 3 sold", stock)
	}
	if st, _ := h.eng.Stats(context.Background(), h.room); !st.SoldOut {
		t.Fatal("room not flagged sold out")
	}
	var ps []order.Product
	r := h.do(t, "GET", "/api/rooms/"+h.room+"/products", "", nil, nil)
	r.json(t, &ps)
	if r.status != 200 || len(ps) != 1 || ps[0].Name != "Sneakers" || ps[0].Price != 129000 || ps[0].Stock != 0 {
		t.Fatalf("products: %d %s", r.status, r.body)
	}
	if !strings.Contains(r.body, `"id":`) || !strings.Contains(r.body, `"stock":0`) {
		t.Fatalf("products JSON names: %s", r.body)
	}
}

func TestOrderRateLimitedAnswers429(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 10, func(s *room.Settings) { s.OrderRate, s.OrderBurst = 0.01, 1 })
	path := "/api/rooms/" + h.room + "/orders"
	c1, t1 := h.admitted(t)
	c2, t2 := h.admitted(t)
	if r := h.do(t, "POST", path, `{}`, map[string]string{"X-Entry-Token": t1}, c1); r.status != 201 {
		t.Fatalf("first: %d %s", r.status, r.body)
	}
	r := h.do(t, "POST", path, `{}`, map[string]string{"X-Entry-Token": t2}, c2)
	if r.status != 429 || !strings.Contains(r.body, "rate_limited") {
		t.Fatalf("second: %d %s", r.status, r.body)
	}
	// The bucket refills at 0.01/s: the next slot is 100 s away, and the
	// answer says so.
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 90 || s > 100 {
		t.Fatalf("Retry-After %q, want the bucket's 100 s", r.header.Get("Retry-After"))
	}
}

// TestOrderFormFlow posts the page's order form: the confirmation page on
// success, and clear HTML errors (with a retry form where a retry can
// succeed) on failure.
func TestOrderFormFlow(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 1, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(c *http.Cookie, form url.Values) *http.Response {
		req, _ := http.NewRequest("POST", h.srv.URL+"/r/"+h.room+"/order", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c != nil {
			req.AddCookie(c)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	c, tok := h.admitted(t)
	c2, tok2 := h.admitted(t)
	resp := post(c, url.Values{"entry_token": {tok}, "quantity": {"1"}, "utm_source": {"insta"}})
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/r/"+h.room+"/orders/") ||
		len(strings.TrimPrefix(loc, "/r/"+h.room+"/orders/")) != 22 {
		t.Fatalf("order form: %d to %q, want the public order number", resp.StatusCode, loc)
	}
	conf := h.do(t, "GET", loc, "", nil, c)
	if conf.status != 200 || !strings.Contains(conf.body, "Your order is placed") || !strings.Contains(conf.body, "Sneakers") ||
		conf.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("confirmation: %d %s", conf.status, conf.body)
	}
	if other := h.do(t, "GET", loc, "", nil, c2); other.status != 404 {
		t.Fatalf("another visitor read the confirmation: %d", other.status)
	}
	var src string
	h.db.Get(&src, `SELECT utm_source FROM orders WHERE room = $1`, h.room)
	if src != "insta" {
		t.Fatalf("utm_source %q", src)
	}

	tests := []struct {
		name      string
		cookie    *http.Cookie
		form      url.Values
		status    int
		text      string // in the page, or the Location of a 303
		wantRetry bool
	}{
		// The form sent twice (a double click, the back button) shows the
		// order the first one placed.
		{"sent twice", c, url.Values{"entry_token": {tok}}, 303, loc, false},
		{"another's used token", c2, url.Values{"entry_token": {tok}}, 401, "not valid", false},
		{"sold out", c2, url.Values{"entry_token": {tok2}}, 409, "sold out", false},
		{"no cookie", nil, url.Values{"entry_token": {tok2}}, 401, "not valid", false},
		{"bad quantity", c2, url.Values{"entry_token": {tok2}, "quantity": {"abc"}}, 400, "not valid", false},
	}
	for _, tt := range tests {
		resp := post(tt.cookie, tt.form)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tt.status == http.StatusSeeOther {
			if resp.StatusCode != tt.status || resp.Header.Get("Location") != tt.text {
				t.Fatalf("%s: %d to %q, want %d to %q", tt.name, resp.StatusCode, resp.Header.Get("Location"), tt.status, tt.text)
			}
			continue
		}
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.text) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d, want %d with %q:\n%s", tt.name, resp.StatusCode, tt.status, tt.text, body)
		}
		if hasRetry := strings.Contains(string(body), `name="entry_token"`); hasRetry != tt.wantRetry {
			t.Fatalf("%s: retry form present = %v", tt.name, hasRetry)
		}
	}
}

func TestOrderWhenDatabaseDown(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	down, err := store.Open(context.Background(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1", 2, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	h := &orderHarness{harness: newHarness(t, func(o *Options) {
		withOrderService(o, order.NewService(order.NewStore(down.DB, 0), o.Queue.(order.Gate), 0, quiet))
	})}
	c, tok := h.admitted(t)
	r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{}`, map[string]string{"X-Entry-Token": tok}, c)
	if r.status != 503 || !strings.Contains(r.body, "unavailable") {
		t.Fatalf("database down: %d %s", r.status, r.body)
	}
	// The waiting room goes on: enters and the page still work.
	if e := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil); e.status != 200 {
		t.Fatalf("enter with the database down: %d", e.status)
	}
	if p := h.do(t, "GET", "/r/"+h.room, "", nil, nil); p.status != 200 {
		t.Fatalf("page with the database down: %d", p.status)
	}
	var raw map[string]any
	pr := h.do(t, "GET", "/api/rooms/"+h.room+"/products", "", nil, nil)
	if pr.status != 503 || json.Unmarshal([]byte(pr.body), &raw) != nil {
		t.Fatalf("products with the database down: %d %s", pr.status, pr.body)
	}
}

// TestTokenInUseSaysWhenToRetry: a 409 token_in_use carries Retry-After,
// the claim's remaining time, in JSON and on the order form's page.
func TestTokenInUseSaysWhenToRetry(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 10, nil)
	c, tok := h.admitted(t)
	vid, _, _ := strings.Cut(c.Value, ".")
	if _, err := h.eng.Claim(context.Background(), h.room, vid, tok, 20*time.Second); err != nil { // an order in flight
		t.Fatal(err)
	}
	r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{}`, map[string]string{"X-Entry-Token": tok}, c)
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); r.status != 409 || !strings.Contains(r.body, "token_in_use") || err != nil || s < 19 || s > 20 {
		t.Fatalf("JSON: %d %s, Retry-After %q; want 409 token_in_use, 20", r.status, r.body, r.header.Get("Retry-After"))
	}
	form := url.Values{"entry_token": {tok}}
	req, _ := http.NewRequest("POST", h.srv.URL+"/r/"+h.room+"/order", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != 409 || err != nil || s < 19 || s > 20 {
		t.Fatalf("form: %d, Retry-After %q; want 409, 20", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// TestLoopingBotsCannotStarveABuyer is the attack over HTTP: five
// admitted bots loop on {"productId":999999}, each with its own token,
// against an order bucket of 2 refilled at 1/s. Once every bot is paused
// (429 token_paused with a Retry-After of the pause), still looping, a
// real buyer orders on the first or second try.
func TestLoopingBotsCannotStarveABuyer(t *testing.T) {
	h := newOrderHarness(t, 10, func(s *room.Settings) { s.OrderRate, s.OrderBurst = 1, 2 })
	path := "/api/rooms/" + h.room + "/orders"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var paused, pausedBots atomic.Int64
	var pausedFor atomic.Value
	stopBots := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopBots()
	for range 5 {
		c, tok := h.admitted(t)
		wg.Go(func() {
			for first := true; ; {
				select {
				case <-stop:
					return
				default:
				}
				r := h.do(t, "POST", path, `{"productId":999999}`, map[string]string{"X-Entry-Token": tok}, c)
				if r.status == 429 && strings.Contains(r.body, "token_paused") {
					paused.Add(1)
					pausedFor.Store(r.header.Get("Retry-After"))
					if first {
						first = false
						pausedBots.Add(1)
					}
				}
			}
		})
	}
	c, tok := h.admitted(t)
	waitFor(t, func() bool { return pausedBots.Load() == 5 })
	var r reply
	for try := 1; try <= 2; try++ {
		r = h.do(t, "POST", path, `{}`, map[string]string{"X-Entry-Token": tok}, c)
		if r.status == 201 {
			break
		}
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err == nil {
			h.clock.Advance(time.Duration(s) * time.Second)
		}
	}
	stopBots()
	if r.status != 201 {
		t.Fatalf("the buyer, after two tries: %d %s", r.status, r.body)
	}
	// Retry-After is what is left of the 10 s pause when the bot asked,
	// by the harness's clock: 1 to 10 s.
	s, _ := pausedFor.Load().(string)
	if left, err := strconv.Atoi(s); paused.Load() == 0 || err != nil || left < 1 || left > 10 {
		t.Fatalf("bots paused %d times, Retry-After %v; want 429 token_paused with the 10 s pause's remaining time", paused.Load(), pausedFor.Load())
	}
}

// TestOrderFormDropsBadUTM: the order form's utm_* fields come from the
// page's address; one that is not a valid UTM value is dropped, and the
// order is placed with the valid ones.
func TestOrderFormDropsBadUTM(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, bad string }{
		{"too long", strings.Repeat("가", 100)}, // 300 bytes
		{"control character", "a\x00b"},
		{"bidirectional formatting", "a\u202eb"},
		{"isolate", "a\u2066b"},
		{"escape", "a\x1bb"},
		{"not UTF-8", "a\xffb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newOrderHarness(t, 1, nil)
			c, tok := h.admitted(t)
			form := url.Values{"entry_token": {tok}, "quantity": {"1"}, "utm_source": {"kakao"}, "utm_campaign": {tc.bad}, "utm_term": {tc.bad}}
			r := h.do(t, "POST", "/r/"+h.room+"/order", form.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, c)
			if r.status != http.StatusOK || !strings.Contains(r.body, "Your order is placed") {
				t.Fatalf("order form with a bad UTM value: %d %s", r.status, r.body)
			}
			var src, camp, term string
			if err := h.db.QueryRow(`SELECT utm_source, COALESCE(utm_campaign, ''), COALESCE(utm_term, '') FROM orders WHERE room = $1`, h.room).Scan(&src, &camp, &term); err != nil {
				t.Fatal(err)
			}
			if src != "kakao" || camp != "" || term != "" {
				t.Fatalf("stored utm %q %q %q, want the valid source only", src, camp, term)
			}
		})
	}
}

// TestOrderMoreThanLeft: an order for more than the stock left, while some
// is left, is 409 insufficient_stock saying how many are left, in the
// visitor's language, on the JSON API and on the page's order form, not
// "sold out"; the pass stays valid for a smaller order.
func TestOrderMoreThanLeft(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 3, nil)
	tests := []struct {
		name, lang string
		form       bool
		text       string
	}{
		{"JSON, English", "en", false, "Only 3 left"},
		{"JSON, Korean", "ko", false, "남은 수량이 3개뿐"},
		{"form, English", "en", true, "Only 3 left"},
		{"form, Korean", "ko", true, "남은 수량이 3개뿐"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, tok := h.admitted(t)
			hdr := map[string]string{"Accept-Language": tt.lang, "X-Entry-Token": tok}
			path, body := "/api/rooms/"+h.room+"/orders", `{"quantity":4}`
			if tt.form {
				hdr["Content-Type"] = "application/x-www-form-urlencoded"
				path, body = "/r/"+h.room+"/order", url.Values{"entry_token": {tok}, "quantity": {"4"}}.Encode()
			}
			r := h.do(t, "POST", path, body, hdr, c)
			if r.status != 409 || !strings.Contains(r.body, tt.text) || strings.Contains(strings.ToLower(r.body), "sold out") {
				t.Fatalf("order of 4 with 3 left: %d %s, want 409 with %q", r.status, r.body, tt.text)
			}
			if !tt.form {
				var e struct {
					Code    string `json:"error"`
					Message string `json:"message"`
					Left    int64  `json:"left"`
				}
				r.json(t, &e)
				if e.Code != "insufficient_stock" || e.Left != 3 {
					t.Fatalf("JSON: %s, want insufficient_stock with left 3", r.body)
				}
			}
		})
	}
	c, tok := h.admitted(t)
	if r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{"quantity":3}`, map[string]string{"X-Entry-Token": tok}, c); r.status != 201 {
		t.Fatalf("order of the 3 left: %d %s", r.status, r.body)
	}
}
