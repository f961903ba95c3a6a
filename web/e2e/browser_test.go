package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/jmoiron/sqlx"
	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/config"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
	"waitingroom/web/app"
)

// chromium is the one headless Chromium the package's browser tests share:
// each test opens tabs in browser contexts (cookie jars) of its own in it,
// instead of starting a browser of its own. It starts at the first test
// that asks for it and stops when the tests are over (TestMain).
type chromium struct {
	once   sync.Once
	root   context.Context
	cancel func()
	err    error
}

// shared is the package's Chromium.
var shared chromium

// start starts Chromium at path as this machine allows it (no sandbox as
// root, none of the background traffic a closed network refuses).
func (c *chromium) start(path, profile string) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Tabs in the background keep their timers and their frames:
		// every test's tab is one of many.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(420, 760),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	root, cancelRoot := chromedp.NewContext(alloc)
	c.root = root
	c.cancel = func() { cancelRoot(); cancelAlloc() }
	c.err = chromedp.Do(root) // starts the browser
}

// stop ends Chromium, if it started, and removes its profile.
func (c *chromium) stop() {
	if c.cancel != nil {
		c.cancel()
	}
}

// browser returns a context in the package's Chromium, started at the
// first call; tabs made from it WithNewBrowserContext have cookie jars of
// their own, and close when t ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := servicetest.Chromium(t)
	shared.once.Do(func() {
		profile, err := os.MkdirTemp("", "e2e-chromium-")
		if err != nil {
			shared.err = err
			return
		}
		shared.start(path, profile)
		stop := shared.cancel
		shared.cancel = func() { stop(); os.RemoveAll(profile) }
	})
	if shared.err != nil {
		t.Fatalf("start chromium: %v", shared.err)
	}
	ctx, cancel := chromedp.NewContext(shared.root)
	t.Cleanup(cancel)
	return ctx
}

// waitText waits until the rank line reads want.
func waitText(want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.getElementById("wr-rank").textContent === %q`, want),
		chromedp.WithPollingTimeout(15*time.Second))
}

// startServer runs the real server (serve) on the test Redis, in the
// database kept for whole servers, and returns a client of that database.
func startServer(t *testing.T, tick time.Duration, args ...string) (string, *queue.Engine, redis.UniversalClient) {
	t.Helper()
	return startServerOn(t, nil, tick, args...)
}

// startServerOn is startServer on clk (the real clock when nil): the
// server decides by it, and so does the engine it returns. The server
// keeps to a Redis namespace of its own (unless args name one): the
// servers of a namespace share its rooms' ticks, so that another test's
// server would tick this test's rooms, with its own clock, settings and
// metrics.
func startServerOn(t *testing.T, clk *servicetest.JumpClock, tick time.Duration, args ...string) (string, *queue.Engine, redis.UniversalClient) {
	t.Helper()
	url := servicetest.RedisURLDB(t, servicetest.ServerDB)
	rdb := servicetest.RedisAt(t, url)
	if !slices.Contains(args, "-redis-namespace") {
		args = append(args, "-redis-namespace", ownNamespace(t, rdb))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dbURL := servicetest.PostgresURL(t)
	metrics := freeAddr(t)
	// Rooms join without a proof of work unless args say otherwise.
	cfg, err := config.Parse(append([]string{"-tick", tick.String(), "-redis-url", url, "-database-url", dbURL, "-metrics-addr", metrics,
		"-challenge-default", "off"}, args...),
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var on clockwork.Clock // nil: the real clock, and the scripts on Redis' TIME
	if clk != nil {
		on = clk
	}
	go func() {
		done <- app.ServeOn(ctx, cfg, repoAssets(), ln, on, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + ln.Addr().String()
	waitHealthy(t, base)
	orderDBs.Store(topTest(t), dbURL)
	metricsURLs.Store(base, "http://"+metrics+"/metrics")
	ns := cfg.RedisNamespace
	if ns == "" {
		ns = queue.DefaultNamespace(rdb)
	}
	eng := queue.New(rdb, ns)
	if clk != nil {
		eng.SetClock(clk.Now)
	}
	return base, eng, rdb
}

// jumpTo moves clk, the clock of a server whose room ticks (seen through
// eng), to at, in steps of at most 20 s, each once the room has ticked
// four times since the last or sleeps with nothing due. A page still there is marked as seen every
// 30 s of the clock, at the first tick after its mark is due, so between
// two marks it goes at most about 51 s unseen: under the least time
// (60 s) after which a buyer counts as away. Only a buyer whose page is
// closed goes unseen.
func jumpTo(t *testing.T, clk *servicetest.JumpClock, eng *queue.Engine, room string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	for d := clk.Until(at); d > 0; d = clk.Until(at) {
		clk.Jump(min(d, 20*time.Second))
		first, err := eng.Snapshot(ctx, room)
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			s, err := eng.Snapshot(ctx, room)
			if err != nil {
				t.Fatal(err)
			}
			if s.Tick >= first.Tick+4 {
				break
			}
			// A quiet room sleeps: its ticks stop until it is woken or
			// until its wakeAt, which it must have passed.
			asleep, wakeAt, err := eng.Sleeping(ctx, room)
			if err != nil {
				t.Fatal(err)
			}
			if asleep && (wakeAt.IsZero() || wakeAt.After(clk.Now())) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("room %s did not tick after a jump of the clock (tick %d)", room, s.Tick)
			}
		}
	}
}

// orderDBs maps each top-level test to the order database (a schema of
// its own) of the last server it ran, so that tests marked t.Parallel
// add products to their own server's database.
var orderDBs sync.Map

// topTest is the name of t's top-level test.
func topTest(t testing.TB) string {
	name, _, _ := strings.Cut(t.Name(), "/")
	return name
}

// orderDB returns the order database of the last server t's top-level
// test ran.
func orderDB(t testing.TB) string {
	t.Helper()
	u, ok := orderDBs.Load(topTest(t))
	if !ok {
		t.Fatal("no server started by " + topTest(t))
	}
	return u.(string)
}

// metricsURLs maps the base URL of each server startServer ran to its
// private metrics URL.
var metricsURLs sync.Map

// metricsURL returns the metrics URL of the server startServer ran at base.
func metricsURL(base string) string {
	u, _ := metricsURLs.Load(base)
	s, _ := u.(string)
	return s
}

// addProduct puts a product in room once the server's migrations have run.
func addProduct(t *testing.T, room, name string, price, stock int64) int64 {
	t.Helper()
	db, err := sqlx.Open("postgres", orderDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int64
	deadline := time.Now().Add(10 * time.Second)
	for {
		err = db.QueryRowx(`INSERT INTO products (room, name, price, stock) VALUES ($1, $2, $3, $4) RETURNING id`, room, name, price, stock).Scan(&id)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // migrations still running
	}
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestBrowserWaitsAndGetsIn opens a room as three visitors (separate
// browser profiles) at one admission per second, watches the last one's
// rank fall without a reload, and sees every visitor reach READY with the
// order form carrying a token. Screenshots land in artifacts/e2e.
func TestBrowserWaitsAndGetsIn(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel() // alongside the whole-event test's long wait (see there)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title = "Black Friday"
	// The line forms first: at the floor rate nobody is let in for 100 s
	// (a paused room would say it is paused instead of showing ranks).
	set.Rate = room.MinRate
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	addProduct(t, name, "Limited sneakers", 129000, 2)
	shots := servicetest.ArtifactDir(t, "e2e")
	shot := func(tab context.Context, file string) {
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100)) // 100 gives a PNG
		if err != nil {
			t.Fatalf("screenshot %s: %v", file, err)
		}
		if err := os.WriteFile(filepath.Join(shots, file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	var tabs []context.Context
	for i := range 3 {
		tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		tctx, tcancel := context.WithTimeout(tab, 60*time.Second)
		t.Cleanup(tcancel)
		want := []string{"You are next", "1 person ahead of you", "2 people ahead of you"}[i]
		err := chromedp.Do(tctx,
			chromedp.Navigate(base+"/r/"+name+"?utm_source=e2e"),
			chromedp.WaitVisible(chromedp.ID("wr-progress")),
			waitText(want),
			// A marker that a reload would wipe out.
			chromedp.Evaluate[chromedp.Void](`window.__noReload = 42`),
		)
		if err != nil {
			text, _ := chromedp.Run(tctx, chromedp.Text(chromedp.ID("wr-rank")))
			t.Fatalf("visitor %d: %v (rank text %q)", i+1, err, text)
		}
		tabs = append(tabs, tctx)
	}
	shot(tabs[2], "1-waiting-third.png")

	set.Rate = 1
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	// The third visitor watches the line move, live.
	if err := chromedp.Do(tabs[2], waitText("1 person ahead of you")); err != nil {
		t.Fatalf("the rank did not move without a reload: %v", err)
	}
	shot(tabs[2], "2-moving-third.png")

	for i, tab := range tabs {
		if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
			t.Fatalf("visitor %d never saw the order form: %v", i+1, err)
		}
		token, err := chromedp.Run(tab, chromedp.Value(chromedp.ID("wr-token")))
		if err != nil {
			t.Fatal(err)
		}
		utm, err := chromedp.Run(tab, chromedp.Evaluate[string](`(document.querySelector('#wr-order input[name="utm_source"]')||{}).value || ""`))
		if err != nil {
			t.Fatal(err)
		}
		marker, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.__noReload || 0`))
		if err != nil {
			t.Fatal(err)
		}
		if len(token) != 43 {
			t.Fatalf("visitor %d: order form token %q", i+1, token)
		}
		if marker != 42 {
			t.Fatalf("visitor %d: the page reloaded", i+1)
		}
		if utm != "e2e" {
			t.Fatalf("visitor %d: utm_source %q not carried to the order form", i+1, utm)
		}
		shot(tab, fmt.Sprintf("3-ready-visitor-%d.png", i+1))
	}
	st, _ := eng.Stats(ctx, name)
	if st.Admitted != 3 || st.Issued != 3 {
		t.Fatalf("room stats %+v: want 3 tickets, 3 admitted", st)
	}

	// The first visitor orders: the confirmation page shows the order.
	if err := chromedp.Do(tabs[0],
		chromedp.Click(chromedp.CSS("#wr-order button")),
		chromedp.WaitVisible(chromedp.CSS(".order-id")),
	); err != nil {
		t.Fatalf("placing the order: %v", err)
	}
	confirmation, err := chromedp.Run(tabs[0], chromedp.Text(chromedp.CSS("main")))
	if err != nil || !strings.Contains(confirmation, "Your order is placed") || !strings.Contains(confirmation, "Limited sneakers") {
		t.Fatalf("confirmation page: %q %v", confirmation, err)
	}
	shot(tabs[0], "5-order-confirmed.png")
	// The second takes the last pair: the room is sold out.
	if err := chromedp.Do(tabs[1],
		chromedp.Click(chromedp.CSS("#wr-order button")),
		chromedp.WaitVisible(chromedp.CSS(".order-id")),
	); err != nil {
		t.Fatalf("second order: %v", err)
	}
	// The third is told it is sold out, clearly, on an error page.
	if err := chromedp.Do(tabs[2], chromedp.Click(chromedp.CSS("#wr-order button")),
		chromedp.WaitVisible(chromedp.CSS("main.error"))); err != nil {
		t.Fatalf("third order: %v", err)
	}
	msg, _ := chromedp.Run(tabs[2], chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(msg, "sold out") {
		t.Fatalf("the third buyer was not told it is sold out: %q", msg)
	}
	shot(tabs[2], "6-sold-out.png")
	if st, _ := eng.Stats(ctx, name); !st.SoldOut || st.Consumed != 2 {
		t.Fatalf("after the sale: %+v", st)
	}
	entries, _ := os.ReadDir(shots)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Logf("screenshots in %s: %s", shots, strings.Join(names, ", "))
}

// TestBrowserFallsBackToPolling refuses the browser's SSE stream (the
// per-IP cap is 1 and another client holds the slot): the page must poll
// the JSON API instead and still reach READY.
func TestBrowserFallsBackToPolling(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-sse-max-per-ip", "1")
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = room.MinRate // the line holds, its ranks shown (not paused)
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	// Another client from this address holds the one SSE slot.
	resp, err := http.Get(base + "/r/" + name + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("holding stream: %d", resp.StatusCode)
	}
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"/r/"+name),
		waitText("1 person ahead of you"),
		chromedp.Poll[chromedp.Void](`document.getElementById("wr-conn").textContent.indexOf("checking every few seconds") >= 0`,
			chromedp.WithPollingTimeout(15*time.Second)),
	); err != nil {
		t.Fatalf("the page did not fall back to polling: %v", err)
	}
	set.Rate = 1
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
		t.Fatalf("polling never reached READY: %v", err)
	}
	token, err := chromedp.Run(tab, chromedp.Value(chromedp.ID("wr-token")))
	if err != nil || len(token) != 43 {
		t.Fatalf("token %q, %v", token, err)
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err == nil {
		os.WriteFile(filepath.Join(servicetest.ArtifactDir(t, "e2e"), "4-ready-by-polling.png"), png, 0o644)
	}
}

// TestBrowserStreamComesBack: the page's stream is refused with 503 (as
// while the server gets Redis back), so the page polls; once streams are
// taken again, the page goes back to the stream on its own and stops
// polling.
func TestBrowserStreamComesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = room.MinRate // the line holds, its ranks shown
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	// In front of the server: streams refused while refuse is set; the
	// streams let through and the position polls are counted.
	var refuse atomic.Bool
	var refused, polls atomic.Int64
	refuse.Store(true)
	opened := make(chan time.Time, 1)
	target, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/events") && refuse.Load():
			refused.Add(1)
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":"unavailable","message":"stub"}`, http.StatusServiceUnavailable)
			return
		case strings.HasSuffix(r.URL.Path, "/events"):
			select {
			case opened <- time.Now():
			default:
			}
		case strings.HasSuffix(r.URL.Path, "/queue/position"):
			polls.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	ahead, _ := visitor.NewID()
	if _, err := eng.Enter(context.Background(), name, ahead); err != nil {
		t.Fatal(err)
	}
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 90*time.Second)
	defer cancelT()
	// The page runs on a page clock, and counts its position polls itself.
	withPageClock(t, tab)
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.__polls = 0;
	  var realFetch = window.fetch;
	  window.fetch = function (u, o) { if (/\/queue\/position$/.test(String(u))) window.__polls++; return realFetch.call(this, u, o); };`}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab,
		chromedp.Navigate(front.URL+"/r/"+name),
		waitText("1 person ahead of you"),
		chromedp.Poll[chromedp.Void](`document.getElementById("wr-conn").textContent.indexOf("checking every few seconds") >= 0`,
			chromedp.WithPollingTimeout(15*time.Second)),
	); err != nil {
		t.Fatalf("the page did not fall back to polling: %v", err)
	}
	// The page polls, and tries the stream again meanwhile.
	waitUntil(t, 20*time.Second, "a poll and a second refused stream", func() bool { return polls.Load() > 0 && refused.Load() >= 2 })
	back := time.Now()
	refuse.Store(false)
	var at time.Time
	select {
	case at = <-opened:
	case <-time.After(45 * time.Second):
		t.Fatalf("the page never went back to the stream (%d refused, %d polls)", refused.Load(), polls.Load())
	}
	if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](`document.getElementById("wr-conn").textContent === ""`,
		chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Fatalf("the page still says it polls: %v", err)
	}
	// The page polls every second or so at this rank: four seconds of its
	// clock, with every timer due meanwhile run, and no poll asked, show
	// that polling stopped.
	pagePolls := func() int {
		n, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.__polls`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := pagePolls()
	if n == 0 {
		t.Fatal("the page counted none of its polls: the count cannot tell that polling stopped")
	}
	tickPage(t, tab, 4*time.Second)
	if more := pagePolls() - n; more > 0 {
		t.Fatalf("the page polled %d times after its stream came back", more)
	}
	t.Logf("back on the stream %v after streams were taken again (%d refused, %d polls)",
		at.Sub(back).Round(time.Millisecond), refused.Load(), polls.Load())
}

// waitUntil polls cond every 50 ms until it holds, for at most d.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserCrossSiteFormsChangeNothing plays another site against an
// admitted buyer in real Chromium: no other site can change a buyer's
// state. A page on localhost (another site than the room's 127.0.0.1) auto-submits the join form, the
// JSON enter as a urlencoded form and as enctype=text/plain, and the order
// form with a guessed pass. Each is refused with 403, the buyer's wr_vid
// cookie is untouched, and the buyer then orders with the pass they held.
// The same browser also waits in a paused room, whose join and enter the
// other site posts too: it keeps its ticket and rank there.
func TestBrowserCrossSiteFormsChangeNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel() // alongside the whole-event test's long wait (see there)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title = "Cross-site"
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	addProduct(t, name, "Limited sneakers", 129000, 1)
	waitRoom := servicetest.RoomName(t, rdb)
	ws := room.Defaults(waitRoom)
	ws.Paused = true
	if err := eng.SaveRoom(ctx, waitRoom, ws); err != nil {
		t.Fatal(err)
	}

	// The other site's pages: each posts one form to the room at once.
	autoSubmit := func(action, enctype, field, value string) string {
		return `<!DOCTYPE html><html><body><form id="f" method="post" enctype="` + enctype + `" action="` + base + action + `">` +
			`<input type="hidden" name='` + field + `' value='` + value + `'></form>` +
			`<script>document.getElementById("f").submit()</script></body></html>`
	}
	attacks := map[string]string{
		"/join":       autoSubmit("/r/"+name+"/join", "application/x-www-form-urlencoded", "x", "1"),
		"/enter":      autoSubmit("/api/rooms/"+name+"/queue", "application/x-www-form-urlencoded", "x", "1"),
		"/enter-text": autoSubmit("/api/rooms/"+name+"/queue", "text/plain", `{"x":"`, `"}`),
		"/order":      autoSubmit("/r/"+name+"/order", "application/x-www-form-urlencoded", "entry_token", strings.Repeat("A", 43)),
		// The paused room, where the same browser waits.
		"/join-waiting":  autoSubmit("/r/"+waitRoom+"/join", "application/x-www-form-urlencoded", "x", "1"),
		"/enter-waiting": autoSubmit("/api/rooms/"+waitRoom+"/queue", "text/plain", `{"x":"`, `"}`),
	}
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, attacks[r.URL.Path])
	}))
	t.Cleanup(evil.Close)
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)

	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tab, cancelT := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(cancelT)
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name), chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
		t.Fatalf("the buyer was not admitted: %v", err)
	}
	token, err := chromedp.Run(tab, chromedp.Value(chromedp.ID("wr-token")))
	if err != nil || len(token) != 43 {
		t.Fatalf("token %q, %v", token, err)
	}
	cookie := func() string {
		res, err := chromedp.Call(tab, network.GetCookies, network.GetCookiesParams{URLs: []string{base}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Cookies {
			if c.Name == "wr_vid" {
				return c.Value
			}
		}
		return ""
	}
	before := cookie()
	if before == "" {
		t.Fatal("the buyer has no wr_vid cookie")
	}
	// place is the browser's visitor's place in the paused room, as the
	// JSON API tells it with the browser's cookie: enter, or position.
	place := func(method, path string) string {
		req, _ := http.NewRequest(method, base+"/api/rooms/"+waitRoom+path, nil)
		req.AddCookie(&http.Cookie{Name: "wr_vid", Value: before})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p struct {
			Status       string
			Rank, Ticket int64
		}
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s place in the paused room: %d %v", method, resp.StatusCode, err)
		}
		return fmt.Sprintf("%s, rank %d, ticket %d", p.Status, p.Rank, p.Ticket)
	}
	waiting := place("POST", "/queue")

	// The refusal: the JSON error, or the HTML error page's 403.
	refused := `location.origin !== ` + strconv.Quote(evilURL) + ` && document.readyState === "complete" && ` +
		`(document.body.innerText.indexOf("cross_site") >= 0 || (document.querySelector("main.error") || {dataset: {}}).dataset.status === "403")`
	for _, path := range []string{"/join", "/enter", "/enter-text", "/order", "/join-waiting", "/enter-waiting"} {
		err := chromedp.Do(tab, chromedp.Navigate(evilURL+path))
		// The page navigates on by itself: evaluate until it has landed.
		for deadline := time.Now().Add(10 * time.Second); err == nil; time.Sleep(50 * time.Millisecond) {
			if ok, evalErr := chromedp.Run(tab, chromedp.Evaluate[bool](refused)); evalErr == nil && ok {
				break
			}
			if time.Now().After(deadline) {
				err = errors.New("no refusal within 10 s")
			}
		}
		if err != nil {
			text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`location.href + " " + document.body.innerText`))
			t.Fatalf("the other site's %s was not refused with 403: %v (page: %q)", path, err, text)
		}
		if path == "/join" {
			png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
			if err == nil {
				os.WriteFile(filepath.Join(servicetest.ArtifactDir(t, "e2e"), "7-cross-site-join-refused.png"), png, 0o644)
			}
		}
		if after := cookie(); after != before {
			t.Fatalf("the other site's %s replaced the buyer's cookie", path)
		}
	}
	if st, _ := eng.Stats(ctx, name); st.Issued != 1 || st.Admitted != 1 || st.Consumed != 0 {
		t.Fatalf("the refused posts changed the line: %+v", st)
	}
	if now := place("GET", "/queue/position"); now != waiting || !strings.HasPrefix(now, "WAITING") {
		t.Fatalf("the waiting buyer was %s before the other site's posts, %s after", waiting, now)
	}
	if st, _ := eng.Stats(ctx, waitRoom); st.Issued != 1 {
		t.Fatalf("the refused posts changed the paused room's line: %+v", st)
	}

	// Back on the room, the buyer holds the same pass, and orders with it.
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name), chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
		t.Fatalf("the buyer lost their turn: %v", err)
	}
	if again, _ := chromedp.Run(tab, chromedp.Value(chromedp.ID("wr-token"))); again != token {
		t.Fatalf("the buyer's pass changed from %q to %q", token, again)
	}
	if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#wr-order button")), chromedp.WaitVisible(chromedp.CSS(".order-id"))); err != nil {
		t.Fatalf("the buyer's order: %v", err)
	}
}
