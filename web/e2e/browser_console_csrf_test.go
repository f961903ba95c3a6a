package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jmoiron/sqlx"

	"waitingroom/server/queue"
	"waitingroom/server/servicetest"
)

// consolePosts returns every console route that takes a POST, as
// web/routes.go (the one list of routes) names them, so that a new form
// is attacked as soon as it is routed.
func consolePosts(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "web/routes.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	// "POST /admin/…", and a pattern without a method (it takes a POST
	// too) but for the catch-all "/admin/" (a 404 page).
	for _, m := range regexp.MustCompile(`\{"(POST )?(/admin/[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		if m[2] != "/admin/" {
			out = append(out, m[2])
		}
	}
	// The contract's console forms (ISSUE11.md): the parse must see them.
	for _, want := range []string{"/admin/signin", "/admin/signout", "/admin/rooms/new", "/admin/rooms/{room}/settings",
		"/admin/rooms/{room}/action", "/admin/rooms/{room}/delete", "/admin/rooms/{room}/products",
		"/admin/rooms/{room}/products/{id}", "/admin/orders/{id}/cancel"} {
		if !slices.Contains(out, want) {
			t.Fatalf("web/routes.go has no POST %s (the routes read: %q)", want, out)
		}
	}
	return out
}

// consoleState is everything a console form can change: a room's
// settings in Redis, its products, its orders, the console's sessions and
// the audit log's record of changes.
type consoleState struct {
	Settings, Rooms string
	Products        []string
	Orders          []string
	Sessions        int
	Changes         int
}

func readConsoleState(t *testing.T, eng *queue.Engine, db *sqlx.DB, name string) consoleState {
	t.Helper()
	ctx := context.Background()
	var st consoleState
	set, err := eng.Room(ctx, name)
	if err != nil {
		t.Fatalf("room %s: %v", name, err)
	}
	b, _ := json.Marshal(set)
	st.Settings = string(b)
	rooms, err := eng.Rooms(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rooms)
	st.Rooms = strings.Join(rooms, ",")
	for q, dst := range map[string]*[]string{
		`SELECT concat_ws('|', id, name, price, currency, stock, image_url) FROM products WHERE room = $1 ORDER BY id`: &st.Products,
		`SELECT concat_ws('|', public_id, status, quantity) FROM orders WHERE room = $1 ORDER BY id`:                   &st.Orders,
	} {
		if err := db.Select(dst, q, name); err != nil {
			t.Fatal(err)
		}
	}
	// Sale events (sale.*) are the sale's own, written in the background.
	if err := db.Get(&st.Changes, `SELECT count(*) FROM audit_log WHERE action NOT LIKE 'sale.%'`); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&st.Sessions, `SELECT count(*) FROM admin_sessions`); err != nil {
		t.Fatal(err)
	}
	return st
}

// buyOnce enters room name with a client of its own, waits for its turn
// and orders one of product; it returns the order's number.
func buyOnce(t *testing.T, base, name string, product int64) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	p := getPosition(t, c, "POST", base+"/api/rooms/"+name+"/queue")
	for deadline := time.Now().Add(10 * time.Second); p.EntryToken == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		p = getPosition(t, c, "GET", base+"/api/rooms/"+name+"/queue/position")
	}
	if p.EntryToken == nil {
		t.Fatalf("the buyer was not admitted: %+v", p)
	}
	code, body := status(t, c, "POST", base+"/api/rooms/"+name+"/orders", fmt.Sprintf(`{"productId":%d,"quantity":1}`, product),
		map[string]string{"X-Entry-Token": *p.EntryToken})
	var o struct{ OrderID string }
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &o) != nil || o.OrderID == "" {
		t.Fatalf("order: %d %s", code, body)
	}
	return o.OrderID
}

// TestBrowserConsoleCrossSiteFormsChangeNothing attacks every console
// POST route that web/routes.go lists. First as another site would: a
// page on localhost auto-submits a form to the console on 127.0.0.1 in
// the operator's own browser, each form carrying the operator's real CSRF
// token (as if it had leaked) and fields that would change something.
// Each is refused with the console's 403 page. Then as a client holding
// the operator's session cookie but not the CSRF token: each POST without
// it, or with a wrong one, is refused with 403. The room's settings, its
// products and orders, the sessions and the audit log stay as they were;
// the same form with the right token does change the room (the check can
// fail).
func TestBrowserConsoleCrossSiteFormsChangeNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel() // alongside the whole-event test's long wait (see there)
	alloc := browser(t)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ServerDB))
	ns := ownNamespace(t, rdb)
	base, _, _ := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken, "-redis-namespace", ns)
	waitReady(t, base)
	eng := queue.New(rdb, ns)
	db, err := sqlx.Open("postgres", orderDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	routes := consolePosts(t)

	// The operator's room, product and one order.
	const name = "csrf-target"
	op := stateTab(t, alloc, "en", "light")
	signInConsole(t, op, base)
	createConsoleRoom(t, op, base, name, "Cross-site target")
	addConsoleProduct(t, op, base, name, "Linen shirt", "39000", "10")
	var product int64
	if err := db.Get(&product, `SELECT id FROM products WHERE room = $1`, name); err != nil {
		t.Fatal(err)
	}
	orderID := buyOnce(t, base, name, product)

	// The fields each form would change the room with; the settings form
	// as the console fills it, with another title.
	openPage(t, op, base+"/admin/rooms/"+name+"/settings")
	raw, err := chromedp.Run(op, chromedp.Evaluate[string](`new URLSearchParams(new FormData(document.querySelector("form.room-form"))).toString()`))
	if err != nil {
		t.Fatal(err)
	}
	settings, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	csrf := settings.Get("csrf")
	if len(csrf) < 16 {
		t.Fatalf("the settings form carries no CSRF token: %q", raw)
	}
	settings.Del("csrf")
	settings.Set("title", "Forged")
	newRoom := url.Values{}
	for k, v := range settings {
		newRoom[k] = v
	}
	newRoom.Set("name", "forged-room")
	// A route missing here (a new form) is posted with the token alone.
	fields := map[string]url.Values{
		"/admin/signin":                     {"token": {consoleToken}},
		"/admin/rooms/new":                  newRoom,
		"/admin/rooms/{room}/settings":      settings,
		"/admin/rooms/{room}/action":        {"action": {"close"}},
		"/admin/rooms/{room}/delete":        {"confirm": {name}},
		"/admin/rooms/{room}/products":      {"name": {"Forged"}, "price": {"1"}, "currency": {"KRW"}, "stock": {"1"}},
		"/admin/rooms/{room}/products/{id}": {"op": {"delete"}},
		"/admin/orders/{id}/cancel":         {"room": {name}},
	}
	target := func(route string) string {
		p := strings.ReplaceAll(route, "{room}", name)
		switch {
		case strings.HasPrefix(route, "/admin/rooms/{room}/products/{id}"):
			p = strings.ReplaceAll(p, "{id}", strconv.FormatInt(product, 10))
		case strings.HasPrefix(route, "/admin/orders/{id}"):
			p = strings.ReplaceAll(p, "{id}", orderID)
		}
		if strings.Contains(p, "{") {
			t.Fatalf("route %s has a parameter this test cannot fill: teach target() its value", route)
		}
		return p
	}
	withCSRF := func(route, token string) url.Values {
		v := url.Values{}
		for k, vs := range fields[route] {
			v[k] = vs
		}
		if route != "/admin/signin" && token != "" {
			v.Set("csrf", token)
		}
		return v
	}

	before := readConsoleState(t, eng, db, name)
	t.Logf("%d console POST routes; state before: %+v", len(routes), before)

	// The other site's pages, one per route.
	pages := map[string]string{}
	for i, route := range routes {
		var b strings.Builder
		fmt.Fprintf(&b, `<!DOCTYPE html><html><body><form id="f" method="post" action="%s">`, html.EscapeString(base+target(route)))
		for k, vs := range withCSRF(route, csrf) {
			for _, v := range vs {
				fmt.Fprintf(&b, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(v))
			}
		}
		b.WriteString(`</form><script>document.getElementById("f").submit()</script></body></html>`)
		pages["/"+strconv.Itoa(i)] = b.String()
	}
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, pages[r.URL.Path])
	}))
	t.Cleanup(evil.Close)
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)
	refused := `location.origin === ` + strconv.Quote(base) + ` && document.readyState === "complete" && ` +
		`!!document.querySelector('section.error[data-status="403"]')`
	for i, route := range routes {
		err := chromedp.Do(op, chromedp.Navigate(evilURL+"/"+strconv.Itoa(i)))
		// The page navigates on by itself: evaluate until it has landed.
		for deadline := time.Now().Add(10 * time.Second); err == nil; time.Sleep(50 * time.Millisecond) {
			if ok, evalErr := chromedp.Run(op, chromedp.Evaluate[bool](refused)); evalErr == nil && ok {
				break
			}
			if time.Now().After(deadline) {
				err = errors.New("no 403 within 10 s")
			}
		}
		if err != nil {
			text, _ := chromedp.Run(op, chromedp.Evaluate[string](`location.href + " " + document.body.innerText`))
			t.Fatalf("the other site's POST %s was not refused: %v (page: %q)", route, err, text)
		}
	}
	shotIn(t, op, "console", "cross-site-refused", 1280, 800)
	if after := readConsoleState(t, eng, db, name); !sameState(before, after) {
		t.Fatalf("the other site's forms changed the console's state:\nbefore %+v\nafter  %+v", before, after)
	}
	// The operator is still signed in.
	openPage(t, op, base+"/admin/rooms")
	if loc, _ := chromedp.Run(op, chromedp.Location()); !strings.HasSuffix(loc, "/admin/rooms") {
		t.Fatalf("the operator was signed out: at %s", loc)
	}

	// A client with a session cookie of its own, without the form's token.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values) (int, string) {
		resp, err := c.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/admin/signin", url.Values{"token": {consoleToken}}); code != http.StatusSeeOther {
		t.Fatalf("sign-in of the client: %d %s", code, body)
	}
	before = readConsoleState(t, eng, db, name) // one session more
	for _, route := range routes {
		if route == "/admin/signin" {
			continue // a sign-in has no session to forge
		}
		for _, token := range []string{"", strings.Repeat("A", len(csrf)), csrf + "x"} {
			code, body := post(target(route), withCSRF(route, token))
			if code != http.StatusForbidden || !strings.Contains(body, `data-status="403"`) {
				t.Fatalf("POST %s with the session cookie and CSRF token %q: %d, want the 403 page\n%s", route, token, code, body)
			}
		}
	}
	if after := readConsoleState(t, eng, db, name); !sameState(before, after) {
		t.Fatalf("forms without their CSRF token changed the console's state:\nbefore %+v\nafter  %+v", before, after)
	}

	// The check itself: the operator's own settings form, with its token,
	// changes the title and writes the audit log.
	openPage(t, op, base+"/admin/rooms/"+name+"/settings")
	setValues(t, op, "settings", [][2]string{{"#f-title", "Changed by the operator"}})
	submitForm(t, op, "settings", "form.room-form button[type=submit]", "/admin/rooms/"+name+"/settings")
	if after := readConsoleState(t, eng, db, name); sameState(before, after) || !strings.Contains(after.Settings, "Changed by the operator") ||
		after.Changes != before.Changes+1 {
		t.Fatalf("the operator's own form did not change the room:\nbefore %+v\nafter  %+v", before, after)
	}
}

func sameState(a, b consoleState) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
