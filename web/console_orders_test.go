package web

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/operator"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/salelog"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/web/console"
)

// The console finds its order database and campaign counts by the
// methods of what serve passes as Orders and Rooms.
var (
	_ console.Orders         = (*order.Service)(nil)
	_ console.Orders         = (*salelog.Orders)(nil)
	_ console.CampaignCounts = (*queue.Engine)(nil)
)

// ordersConsole is a server whose orders, console sessions and audit log
// are in one fresh PostgreSQL schema, with an operator signed in.
type ordersConsole struct {
	*harness
	db     *store.DB
	orders *order.Service
	log    *audit.Log
	client *http.Client
	csrf   string
}

func newOrdersConsole(t *testing.T) *ordersConsole { return newOrdersConsoleWith(t, nil) }

// newClockedOrdersConsole is newOrdersConsole on the fake clock of
// newClockedHarness.
func newClockedOrdersConsole(t *testing.T) *ordersConsole {
	t.Helper()
	return ordersConsoleOn(t, newClockedHarness, nil)
}

// newOrdersConsoleWith serves wrap(the order service) as the console's
// orders.
func newOrdersConsoleWith(t *testing.T, wrap func(*order.Service) console.Orders) *ordersConsole {
	t.Helper()
	return ordersConsoleOn(t, newHarness, wrap)
}

// ordersConsoleOn is newOrdersConsoleWith on the harness that start
// returns.
func ordersConsoleOn(t *testing.T, start func(*testing.T, func(*Options)) *harness, wrap func(*order.Service) console.Orders) *ordersConsole {
	t.Helper()
	db := storetest.Migrated(t, store.Postgres)
	ops, err := operator.New(db, testOperators)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	oc := &ordersConsole{db: db, log: audit.New(db)}
	oc.harness = start(t, func(o *Options) {
		oc.orders = order.NewService(order.NewStore(db.DB, 0), o.Queue.(order.Gate), 0, quiet).WithClock(o.Clock)
		withOrderService(o, oc.orders)
		o.Operators, o.Audit = ops, oc.log
		if wrap != nil {
			o.ConsoleOrders = wrap(oc.orders)
		}
	})
	oc.client, oc.csrf = signIn(t, oc.srv, testAdminToken)
	return oc
}

// product adds a product to room and returns its id.
func (oc *ordersConsole) product(t *testing.T, room, name string, price int64, currency string, stock int64) int64 {
	t.Helper()
	var id int64
	err := oc.db.QueryRowx(`INSERT INTO products (room, name, price, currency, stock) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		room, name, price, currency, stock).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// placed writes an order straight into the database.
type placed struct {
	id, room, visitor, status string
	product, quantity, price  int64
	currency                  string
	utm                       order.UTM
	at                        time.Time
}

func (oc *ordersConsole) place(t *testing.T, p placed) {
	t.Helper()
	if p.status == "" {
		p.status = order.StatusPlaced
	}
	if p.visitor == "" {
		p.visitor = "visitor-" + p.id
	}
	if p.at.IsZero() {
		p.at = time.Now()
	}
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	_, err := oc.db.Exec(`INSERT INTO orders (room, product_id, visitor, quantity, entry_token_hash, utm_source, utm_medium,
		utm_campaign, utm_term, utm_content, gclid, fbclid, ttclid, public_id, unit_price, currency, status, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		p.room, p.product, p.visitor, p.quantity, order.TokenHash(p.id), null(p.utm.Source), null(p.utm.Medium),
		null(p.utm.Campaign), null(p.utm.Term), null(p.utm.Content), null(p.utm.Gclid), null(p.utm.Fbclid), null(p.utm.Ttclid), p.id, p.price, p.currency, p.status, p.at)
	if err != nil {
		t.Fatal(err)
	}
}

// get fetches path with the operator's session.
func (oc *ordersConsole) get(t *testing.T, path string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", oc.srv.URL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := oc.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func orderID(n int) string { return fmt.Sprintf("console-order-%08d", n) }

// listed returns the order numbers a page lists, in order.
var orderCode = regexp.MustCompile(`<code>(console-order-\d{8})</code>`)

func listed(body string) []string {
	ids := []string{}
	for _, m := range orderCode.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestConsoleOrdersFilters(t *testing.T) {
	t.Parallel()
	oc := newOrdersConsole(t)
	other := oc.room + "-b"
	shoes := oc.product(t, oc.room, "운동화", 129000, "KRW", 10)
	hat := oc.product(t, other, "Hat", 1250, "USD", 10)
	base := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC) // 10:00 in Seoul
	insta := order.UTM{Source: "instagram", Medium: "social", Campaign: "bf-2026"}
	oc.place(t, placed{id: orderID(1), room: oc.room, product: shoes, quantity: 2, price: 129000, currency: "KRW", utm: insta, at: base})
	oc.place(t, placed{id: orderID(2), room: oc.room, product: shoes, quantity: 1, price: 129000, currency: "KRW", at: base.Add(time.Hour)})
	oc.place(t, placed{id: orderID(3), room: oc.room, product: shoes, quantity: 1, price: 129000, currency: "KRW", utm: insta,
		status: order.StatusCancelled, at: base.Add(2 * time.Hour)})
	oc.place(t, placed{id: orderID(4), room: other, product: hat, quantity: 3, price: 1250, currency: "USD",
		utm: order.UTM{Source: "newsletter", Medium: "email", Campaign: "bf-2026"}, at: base.Add(3 * time.Hour)})

	for _, tt := range []struct {
		name  string
		query url.Values
		want  []string
	}{
		{"a room", url.Values{"room": {oc.room}}, []string{orderID(3), orderID(2), orderID(1)}},
		{"another room", url.Values{"room": {other}}, []string{orderID(4)}},
		{"from, Seoul time", url.Values{"room": {oc.room}, "from": {"2026-11-27T11:00"}}, []string{orderID(3), orderID(2)}},
		{"from, a second late", url.Values{"room": {oc.room}, "from": {"2026-11-27T10:00:01"}}, []string{orderID(3), orderID(2)}},
		{"to, Seoul time", url.Values{"room": {oc.room}, "to": {"2026-11-27T11:00"}}, []string{orderID(1)}},
		{"from and to in UTC", url.Values{"tz": {"UTC"}, "from": {"2026-11-27T02:00"}, "to": {"2026-11-27T04:00"}}, []string{orderID(3), orderID(2)}},
		{"placed", url.Values{"room": {oc.room}, "status": {"placed"}}, []string{orderID(2), orderID(1)}},
		{"cancelled", url.Values{"status": {"cancelled"}}, []string{orderID(3)}},
		{"campaign", url.Values{"utm_campaign": {"bf-2026"}}, []string{orderID(4), orderID(3), orderID(1)}},
		{"source and status", url.Values{"utm_source": {"instagram"}, "status": {"placed"}}, []string{orderID(1)}},
		{"medium", url.Values{"utm_medium": {"email"}}, []string{orderID(4)}},
		{"no match", url.Values{"utm_source": {"tiktok"}}, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := oc.get(t, "/admin/orders?"+tt.query.Encode(), nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, body)
			}
			if got := listed(body); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("listed %v, want %v", got, tt.want)
			}
		})
	}

	// The row: its time in Seoul with the offset, the prices, the UTM.
	_, body := oc.get(t, "/admin/orders?room="+oc.room+"&status=placed", nil)
	for _, want := range []string{"27 Nov 2026, 10:00:00 (UTC+09:00)", "₩129,000", "₩258,000", "운동화", "instagram", "bf-2026",
		"Asia/Seoul (UTC+09:00)", `href="/admin/orders.csv?room=` + oc.room + `&amp;status=placed"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(body, "visitor-") {
		t.Error("the page shows a visitor id")
	}
	_, body = oc.get(t, "/admin/orders?room="+oc.room, map[string]string{"Accept-Language": "ko"})
	for _, want := range []string{"2026. 11. 27. 10:00:00 (UTC+09:00)", "129,000원", "주문 취소"} {
		if !strings.Contains(body, want) {
			t.Errorf("the Korean page lacks %q", want)
		}
	}

	// Bad input is a clear message, never a 500.
	for _, tt := range []struct {
		name  string
		query string
		says  string
	}{
		{"garbage time", "from=yesterday", "The From time could not be read"},
		{"impossible date", "to=2026-02-31T10:00", "The To time could not be read"},
		{"huge year", "from=99999-01-01T00:00", "The From time could not be read"},
		{"to before from", "from=2026-11-27T10:00&to=2026-11-27T09:00", "must come after the start"},
		{"status", "status=shipped", "Pick placed or cancelled"},
		{"room", "room=Bad%20Room", "A room name is"},
		{"long source", "utm_source=" + strings.Repeat("a", 201), "utm_source is at most 200 bytes"},
		{"control in campaign", "utm_campaign=a%0Ab", "utm_campaign is at most 200 bytes"},
		{"page", "after=-4", "page position is not valid"},
		{"page not a number", "after=abc", "page position is not valid"},
		{"zone", "tz=Mars/Olympus", "time zone is unknown"},
		{"zone path", "tz=../../etc/passwd", "time zone is unknown"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := oc.get(t, "/admin/orders?"+tt.query, nil)
			if resp.StatusCode != 400 || !strings.Contains(body, tt.says) || !strings.Contains(body, `role="alert"`) {
				t.Fatalf("%d, want 400 saying %q: %.400s", resp.StatusCode, tt.says, body)
			}
			resp, body = oc.get(t, "/admin/orders.csv?"+tt.query, nil)
			if resp.StatusCode != 400 || !strings.Contains(body, tt.says) {
				t.Fatalf("CSV: %d, want 400 saying %q", resp.StatusCode, tt.says)
			}
		})
	}

	// Without a session: to the sign-in.
	for _, path := range []string{"/admin/orders", "/admin/orders.csv", "/admin/attribution", "/admin/audit"} {
		resp, err := noRedirects().Get(oc.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/admin/signin?next=") {
			t.Fatalf("%s without a session: %d %s", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

// TestConsoleOrdersPaging: the next-page link walks every order once.
func TestConsoleOrdersPaging(t *testing.T) {
	t.Parallel()
	oc := newOrdersConsole(t)
	p := oc.product(t, oc.room, "p", 1000, "KRW", 10)
	n := console.OrdersPageSize + 7
	for i := range n {
		oc.place(t, placed{id: orderID(i), room: oc.room, product: p, quantity: 1, price: 1000, currency: "KRW"})
	}
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`)
	path := "/admin/orders?room=" + oc.room
	var seen []string
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		resp, body := oc.get(t, path, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		seen = append(seen, listed(body)...)
		path = ""
		if m := next.FindStringSubmatch(body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
			if !strings.Contains(path, "room="+oc.room) {
				t.Fatalf("the next page lost the filter: %s", path)
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("%d orders over the pages, want %d", len(seen), n)
	}
	for i, id := range seen {
		if id != orderID(n-1-i) {
			t.Fatalf("order %d is %s, want %s", i, id, orderID(n-1-i))
		}
	}
}

func TestConsoleOrdersCSV(t *testing.T) {
	t.Parallel()
	oc := newOrdersConsole(t)
	p := oc.product(t, oc.room, "=cmd|' /C calc'!A0", 1250, "USD", 10)
	k := oc.product(t, oc.room, "운동화", 129000, "KRW", 10)
	at := time.Date(2026, 11, 27, 1, 2, 3, 0, time.UTC)
	oc.place(t, placed{id: orderID(1), room: oc.room, product: p, quantity: 3, price: 1250, currency: "USD", at: at,
		utm: order.UTM{Source: "@evil", Medium: "email", Campaign: "블프", Term: "+1", Content: "-x", Gclid: "Cj0KCQ-x_1"}})
	oc.place(t, placed{id: orderID(2), room: oc.room, product: k, quantity: 2, price: 129000, currency: "KRW", at: at.Add(time.Second),
		utm: order.UTM{Fbclid: "IwAR_y"}})
	oc.place(t, placed{id: orderID(3), room: oc.room + "-other", product: k, quantity: 1, price: 129000, currency: "KRW", at: at})

	resp, body := oc.get(t, "/admin/orders.csv?room="+oc.room, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if cd := resp.Header.Get("Content-Disposition"); !regexp.MustCompile(`^attachment; filename="orders-` + oc.room + `-\d{8}-\d{6}\.csv"$`).MatchString(cd) {
		t.Fatalf("Content-Disposition %q", cd)
	}
	if !strings.HasPrefix(body, "\ufeff") {
		t.Fatalf("no UTF-8 BOM: %q", body[:min(len(body), 10)])
	}
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || strings.Join(recs[0], ",") != strings.Join(order.CSVHeader, ",") {
		t.Fatalf("records %q", recs)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	krw, usd := recs[1], recs[2]
	for _, c := range []struct {
		rec         []string
		field, want string
	}{
		{krw, "order_id", orderID(2)}, {krw, "product", "운동화"}, {krw, "unit_price", "129000"}, {krw, "amount", "258000"},
		{krw, "currency", "KRW"}, {krw, "quantity", "2"}, {krw, "utm_source", ""},
		{usd, "order_id", orderID(1)}, {usd, "created_at", "2026-11-27T01:02:03Z"}, {usd, "status", "placed"},
		{usd, "unit_price", "12.50"}, {usd, "amount", "37.50"}, {usd, "currency", "USD"},
		{usd, "product", "'=cmd|' /C calc'!A0"}, {usd, "utm_source", "'@evil"}, {usd, "utm_medium", "email"},
		{usd, "utm_campaign", "블프"}, {usd, "utm_term", "'+1"}, {usd, "utm_content", "'-x"},
		{usd, "gclid", "Cj0KCQ-x_1"}, {usd, "fbclid", ""}, {krw, "fbclid", "IwAR_y"}, {krw, "gclid", ""},
	} {
		if got := c.rec[col[c.field]]; got != c.want {
			t.Errorf("%s of %s is %q, want %q", c.field, c.rec[0], got, c.want)
		}
	}
	if strings.Contains(body, "visitor-") {
		t.Error("the export names a visitor")
	}
	// The list shows the click ids; an order with a click id alone is not
	// "Direct".
	_, page := oc.get(t, "/admin/orders?room="+oc.room, nil)
	if !strings.Contains(page, `<small class="utm-extra click-id">gclid=Cj0KCQ-x_1</small>`) ||
		!strings.Contains(page, `<small class="utm-extra click-id">fbclid=IwAR_y</small>`) {
		t.Fatalf("the orders list lacks the click ids: %.4000s", page)
	}
	// The page's export link carries its filters.
	resp, body = oc.get(t, "/admin/orders.csv?utm_campaign=%EB%B8%94%ED%94%84", nil)
	if resp.StatusCode != 200 || strings.Count(body, "\n") != 2 || !strings.Contains(body, orderID(1)) {
		t.Fatalf("filtered export: %d %q", resp.StatusCode, body)
	}
}

func TestConsoleCancelOrder(t *testing.T) {
	t.Parallel()
	oc := newOrdersConsole(t)
	ctx := context.Background()
	p := oc.product(t, oc.room, "Sneakers", 129000, "KRW", 0)
	oc.place(t, placed{id: orderID(1), room: oc.room, product: p, quantity: 2, price: 129000, currency: "KRW"})
	if err := oc.eng.SetSoldOut(ctx, oc.room, true); err != nil {
		t.Fatal(err)
	}
	stock := func() (n int64) {
		t.Helper()
		if err := oc.db.Get(&n, `SELECT stock FROM products WHERE id = $1`, p); err != nil {
			t.Fatal(err)
		}
		return n
	}
	status := func() (s string) {
		t.Helper()
		if err := oc.db.Get(&s, `SELECT status FROM orders WHERE public_id = $1`, orderID(1)); err != nil {
			t.Fatal(err)
		}
		return s
	}
	u := oc.srv.URL + "/admin/orders/" + orderID(1) + "/cancel"
	back := url.Values{"room": {oc.room}, "status": {"placed"}}.Encode()
	form := func(csrf string) url.Values { return url.Values{"csrf": {csrf}, "room": {oc.room}, "back": {back}} }

	// Refused: no token, a wrong one, another site (even with the token),
	// no session.
	for _, tt := range []struct {
		name   string
		client *http.Client
		form   url.Values
		hdr    map[string]string
	}{
		{"no csrf", oc.client, url.Values{"room": {oc.room}}, nil},
		{"wrong csrf", oc.client, form("not-the-token"), nil},
		{"cross-site", oc.client, form(oc.csrf), map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}},
		{"no session", noRedirects(), form(oc.csrf), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postForm(t, tt.client, u, tt.form, tt.hdr)
			if resp.StatusCode != 403 {
				t.Fatalf("%d, want 403: %.300s", resp.StatusCode, body)
			}
			if status() != order.StatusPlaced || stock() != 0 {
				t.Fatal("a refused cancel changed the order")
			}
		})
	}

	resp, body := postForm(t, oc.client, u, form(oc.csrf), nil)
	if resp.StatusCode != 303 {
		t.Fatalf("cancel: %d %.300s", resp.StatusCode, body)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Path != "/admin/orders" || loc.Query().Get("room") != oc.room || loc.Query().Get("status") != "placed" ||
		loc.Query().Get("cancelled") != orderID(1) {
		t.Fatalf("back to %s", loc)
	}
	if status() != order.StatusCancelled || stock() != 2 {
		t.Fatalf("after the cancel: %s, stock %d", status(), stock())
	}
	if st, err := oc.eng.Stats(ctx, oc.room); err != nil || st.SoldOut {
		t.Fatalf("the restock did not reopen the room: %+v %v", st, err)
	}
	_, page := oc.get(t, loc.String(), nil)
	if !strings.Contains(page, "Order "+orderID(1)+" is cancelled") {
		t.Fatalf("no notice after the cancel: %.500s", page)
	}
	entries, err := oc.log.List(ctx, audit.Filter{Room: oc.room})
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit: %+v %v", entries, err)
	}
	if e := entries[0]; e.Action != "order.cancel" || e.Actor != "admin" || e.Target != orderID(1) || e.Old != "placed" || e.New != "cancelled" {
		t.Fatalf("audit entry %+v", e)
	}

	// Twice: refused, clearly, and nothing moves.
	resp, body = postForm(t, oc.client, u, form(oc.csrf), nil)
	if resp.StatusCode != 409 || !strings.Contains(body, "was already cancelled") || stock() != 2 {
		t.Fatalf("second cancel: %d, stock %d: %.300s", resp.StatusCode, stock(), body)
	}
	for _, tt := range []struct {
		name, path string
		form       url.Values
		status     int
	}{
		{"unknown order", "/admin/orders/" + orderID(99) + "/cancel", form(oc.csrf), 404},
		{"another room", "/admin/orders/" + orderID(1) + "/cancel", url.Values{"csrf": {oc.csrf}, "room": {"other-room"}}, 404},
		{"bad room", "/admin/orders/" + orderID(1) + "/cancel", url.Values{"csrf": {oc.csrf}, "room": {"<b>"}}, 400},
		{"bad order number", "/admin/orders/a%20b/cancel", form(oc.csrf), 404},
	} {
		resp, body := postForm(t, oc.client, oc.srv.URL+tt.path, tt.form, nil)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %d, want %d: %.200s", tt.name, resp.StatusCode, tt.status, body)
		}
	}
	if entries, _ := oc.log.List(ctx, audit.Filter{Room: oc.room}); len(entries) != 1 {
		t.Fatalf("a refused cancel was audited: %+v", entries)
	}
}

// failingExport is the order service with an export that fails, after
// writing some bytes or none.
type failingExport struct {
	*order.Service
	midway bool
}

func (f failingExport) ExportOrders(ctx context.Context, flt order.OrderFilter, w io.Writer) error {
	if !f.midway {
		return order.ErrUnavailable
	}
	if _, err := io.WriteString(w, strings.Join(order.CSVHeader, ",")+"\n"); err != nil {
		return err
	}
	return errors.New("the database went away")
}

// TestConsoleOrdersCSVFailures: an export that fails before its first
// byte is an error page; one that fails midway is cut off, never a short
// file that looks whole.
func TestConsoleOrdersCSVFailures(t *testing.T) {
	t.Parallel()
	before := newOrdersConsoleWith(t, func(s *order.Service) console.Orders { return failingExport{Service: s} })
	resp, body := before.get(t, "/admin/orders.csv", nil)
	if resp.StatusCode != 503 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "try again") {
		t.Fatalf("an export that could not start: %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	midway := newOrdersConsoleWith(t, func(s *order.Service) console.Orders { return failingExport{Service: s, midway: true} })
	// The connection is cut: before the headers (the rows were still
	// buffered) or within the body.
	resp, err := midway.client.Get(midway.srv.URL + "/admin/orders.csv")
	if err == nil {
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Fatal("an export cut short read as a whole file")
		}
	}
}
