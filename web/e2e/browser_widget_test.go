package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jmoiron/sqlx"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// hostPage serves a shop's landing page with the widget's one-line
// snippet, on its own loopback port; it is reached as localhost, another
// site than the room's 127.0.0.1. It counts the widget's size messages
// and keeps its console warnings.
func hostPage(t *testing.T, base, roomName string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Spring drop</title></head>
<body style="font-family:system-ui,sans-serif;max-width:34rem;margin:1.5rem auto;padding:0 1rem">
<h1>Spring drop</h1>
<p>Air Runner 1 in three new colours, 300 pairs. The line opens on this page.</p>
<script>window.__sizes = 0; addEventListener("message", function (e) { if (e.data && e.data.type === "wr-widget-size") window.__sizes++; });
window.__warns = []; var warn = console.warn; console.warn = function (m) { window.__warns.push(String(m)); warn.apply(console, arguments); };</script>
<script src="` + base + `/static/embed.js" data-room="` + roomName + `" async></script>
</body></html>`
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return "http://localhost:" + fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// TestBrowserWidgetOnAnotherSite embeds the room's widget in a shop's
// page on another site: the widget counts down, turns to open live, and
// its button opens the room in a new tab, where the buyer waits, gets in
// and buys; the order carries the shop page's UTMs and ad click id. A
// page on an origin the room does not list cannot frame the widget: a
// plain link to the room takes the frame's place, and the console says
// what to add. Sold out, the widget says so and offers no button.
func TestBrowserWidgetOnAnotherSite(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	// Two widget streams per address (the shop's page and the console's
	// preview); a third viewer (below) is refused its stream and polls.
	// The server's clock jumps to the opening once the widget has shown
	// its countdown and the console its preview (jumpTo).
	clk := servicetest.NewJumpClock()
	base, eng, rdb := startServerOn(t, clk, 250*time.Millisecond, "-sse-max-per-ip", "2", "-admin-token", consoleToken)
	name := servicetest.RoomName(t, rdb)
	shop := hostPage(t, base, name)
	stranger := hostPage(t, base, name)
	set := room.Defaults(name)
	set.Title = "Spring drop"
	set.Rate = 1
	opens := clk.Now().Add(15 * time.Second)
	set.OpensAt = &opens
	set.EmbedOrigins = []string{shop}
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	addProduct(t, name, "Spring sneakers", 99000, 5)

	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 90*time.Second)
	defer cancelT()
	if err := chromedp.Do(tab, chromedp.Navigate(shop+"/?utm_source=news&utm_campaign=spring&gclid=Cj0-spring.1"),
		chromedp.WaitVisible(chromedp.CSS("iframe"))); err != nil {
		t.Fatal(err)
	}
	widget := frameTarget(t, tab, base+"/r/"+name+"/widget")
	// The countdown, from the server's clock.
	if err := chromedp.Do(widget, chromedp.Poll[chromedp.Void](
		`/^Opens in 00:00:(0\d|1[0-5])$/.test(document.getElementById("wr-w-state").textContent)`,
		chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		text, _ := chromedp.Run(widget, chromedp.Text(chromedp.ID("wr-w-state")))
		t.Fatalf("no countdown: %v (state %q)", err, text)
	}
	if err := chromedp.Do(widget, chromedp.Evaluate[chromedp.Void](`window.__noReload = 7`)); err != nil {
		t.Fatal(err)
	}
	widgetShot(t, tab, "widget-1-countdown.png")
	if os.Getenv("WR_DOCS_SHOTS") == "1" { // the README's picture of the widget
		err := chromedp.Do(tab, chromedp.EmulateViewport(500, 250))
		var shot []byte
		if err == nil {
			shot, err = chromedp.Run(tab, chromedp.CaptureScreenshot())
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(repoRoot, "docs/widget.png"), shot, 0o644)
		}
		if err != nil {
			t.Fatalf("docs shot: %v", err)
		}
	}
	// A site the room does not list cannot frame it (CSP frame-ancestors;
	// meanwhile the countdown runs).
	other, cancelO := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	defer cancelO()
	other, cancelOT := context.WithTimeout(other, 15*time.Second)
	defer cancelOT()
	if err := chromedp.Do(other, chromedp.Navigate(stranger+"/?utm_source=x"), chromedp.Poll[chromedp.Void](
		`!document.querySelector("iframe") && !!document.querySelector("a.wr-widget-link")`,
		chromedp.WithPollingTimeout(12*time.Second))); err != nil {
		t.Fatalf("no plain link in place of the refused widget: %v", err)
	}
	if n, err := chromedp.Run(other, chromedp.Evaluate[int](`window.__sizes`)); err != nil || n != 0 {
		t.Fatalf("a page on an unlisted origin framed the widget (%d size messages, %v)", n, err)
	}
	type plainLink struct {
		Href, Text string
		Warns      []string
	}
	plain, err := chromedp.Run(other, chromedp.Evaluate[plainLink](`(function (a) { return {href: a.href, text: a.textContent, warns: window.__warns}; })(document.querySelector("a.wr-widget-link"))`))
	if err != nil {
		t.Fatal(err)
	}
	if plain.Href != base+"/r/"+name+"?utm_source=x" || plain.Text != "Go to the sale" {
		t.Fatalf("the plain link is %q %q", plain.Href, plain.Text)
	}
	if len(plain.Warns) != 1 || !strings.Contains(plain.Warns[0], stranger) || !strings.Contains(plain.Warns[0], "embed origins") {
		t.Fatalf("the console warnings %q do not name %s and the embed origins", plain.Warns, stranger)
	}
	// The listed shop's widget, framed, kept its frame.
	if n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("iframe").length + document.querySelectorAll("a.wr-widget-link").length * 10`)); err != nil || n != 1 {
		t.Fatalf("the listed shop's page lost its widget (%d, %v)", n, err)
	}
	// The console's embed page shows the snippet and a live preview,
	// which its own CSP and the widget's let it frame (meanwhile the
	// countdown runs).
	op, cancelOp := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	defer cancelOp()
	// A bound on a hung tab, not a timing: the op tab lives until the
	// last axe check, which a loaded CI machine reached after 20 s.
	op, cancelOpT := context.WithTimeout(op, 90*time.Second)
	defer cancelOpT()
	waitReady(t, base)
	signInConsole(t, op, base)
	openPage(t, op, base+"/admin/rooms/"+name+"/embed")
	if err := chromedp.Do(op, chromedp.Poll[chromedp.Void](
		`(function (f) { var d = f && f.contentDocument, s = d && d.getElementById("wr-w-state"); return !!s && s.textContent !== ""; })(document.getElementById("embed-preview"))`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the console's preview of the widget: %v", err)
	}
	widgetShot(t, op, "widget-3-console-embed.png")
	// It turns to open live, without a reload.
	jumpTo(t, clk, eng, name, opens)
	if err := chromedp.Do(widget, chromedp.Poll[chromedp.Void](
		`document.getElementById("wr-w-state").textContent === "Open now" && window.__noReload === 7`,
		chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		text, _ := chromedp.Run(widget, chromedp.Text(chromedp.ID("wr-w-state")))
		t.Fatalf("the widget did not turn to open live: %v (state %q)", err, text)
	}
	// Sized to its content by postMessage.
	sized, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.__sizes > 0 && document.querySelector("iframe").style.height !== "140px"`))
	if err != nil || !sized {
		t.Fatalf("the frame was not sized to the widget: %v", err)
	}
	link, _ := chromedp.Run(widget, chromedp.Evaluate[string](`document.getElementById("wr-w-go").href`))
	widgetShot(t, tab, "widget-2-open.png")

	// A real click at the button, through the host page.
	box, err := chromedp.Run(tab, chromedp.Evaluate[[]float64](`(function () { var r = document.querySelector("iframe").getBoundingClientRect(); return [r.left, r.top]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	in, err := chromedp.Run(widget, chromedp.Evaluate[[]float64](`(function () { var r = document.getElementById("wr-w-go").getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.MouseClickXY(box[0]+in[0], box[1]+in[1])); err != nil {
		t.Fatal(err)
	}
	buyer := pageTarget(t, tab, base+"/r/"+name)
	if err := chromedp.Do(buyer, chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
		u, _ := chromedp.Run(buyer, chromedp.Evaluate[string](`location.href`))
		t.Fatalf("the buyer never got in (at %s, link %s): %v", u, link, err)
	}
	if err := chromedp.Do(buyer, chromedp.Click(chromedp.CSS("#wr-order button")), chromedp.WaitVisible(chromedp.CSS(".order-id"))); err != nil {
		t.Fatalf("placing the order: %v", err)
	}
	db, err := sqlx.Open("postgres", orderDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var utm struct {
		Source   *string `db:"utm_source"`
		Campaign *string `db:"utm_campaign"`
		Gclid    *string `db:"gclid"`
	}
	if err := db.Get(&utm, `SELECT utm_source, utm_campaign, gclid FROM orders WHERE room = $1`, name); err != nil {
		t.Fatal(err)
	}
	if deref(utm.Source) != "news" || deref(utm.Campaign) != "spring" || deref(utm.Gclid) != "Cj0-spring.1" {
		t.Fatalf("the order's attribution is %v, %v, %v; want news, spring, Cj0-spring.1", deref(utm.Source), deref(utm.Campaign), deref(utm.Gclid))
	}

	// Where the stream is refused (the shop's widget and the console's
	// preview hold this address's two), the widget polls its status
	// instead.
	poller, cancelP := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	defer cancelP()
	poller, cancelPT := context.WithTimeout(poller, 15*time.Second)
	defer cancelPT()
	if err := chromedp.Do(poller, chromedp.Navigate(shop+"/?utm_source=poll"), chromedp.WaitVisible(chromedp.CSS("iframe"))); err != nil {
		t.Fatal(err)
	}
	polled := frameTarget(t, poller, base+"/r/"+name+"/widget?utm_source=poll")
	if err := chromedp.Do(polled, chromedp.Poll[chromedp.Void](
		`performance.getEntriesByType("resource").some(function (e) { return e.name.indexOf("/widget/status") >= 0; }) &&
		 document.getElementById("wr-w-state").textContent === "Open now"`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the widget did not fall back to polling: %v", err)
	}
	// Sold out, the widget says so and offers no button.
	if err := eng.SetSoldOut(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	sold, cancelS := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	defer cancelS()
	sold, cancelST := context.WithTimeout(sold, 30*time.Second)
	defer cancelST()
	if err := chromedp.Do(sold, chromedp.Navigate(shop+"/?utm_source=sold"), chromedp.WaitVisible(chromedp.CSS("iframe"))); err != nil {
		t.Fatal(err)
	}
	soldWidget := frameTarget(t, sold, base+"/r/"+name+"/widget?utm_source=sold")
	if err := chromedp.Do(soldWidget, chromedp.Poll[chromedp.Void](
		`document.getElementById("wr-w-state").textContent === "Sold out" && document.getElementById("wr-w-go").hidden &&
		 document.getElementById("wr-w-go").getBoundingClientRect().height === 0`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		text, _ := chromedp.Run(soldWidget, chromedp.Text(chromedp.ID("wr-w-state")))
		t.Fatalf("the sold-out widget: %v (state %q)", err, text)
	}
	widgetShot(t, sold, "widget-4-sold-out.png")
	// Last, as it may skip where axe-core is missing (it fails in CI).
	axe := axeSource(t)
	axeCheck(t, widget, axe, "widget page")
	axeCheck(t, op, axe, "console embed page")
}

// widgetShot saves a screenshot of tab under artifacts/e2e.
func widgetShot(t *testing.T, tab context.Context, file string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(servicetest.ArtifactDir(t, "e2e"), file), png, 0o644)
	}
	if err != nil {
		t.Logf("screenshot %s: %v", file, err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// frameTarget attaches to the cross-site iframe of tab whose URL starts
// with prefix (Chromium runs it in its own process, as its own target).
func frameTarget(t *testing.T, tab context.Context, prefix string) context.Context {
	return attachTarget(t, tab, "iframe", prefix)
}

// pageTarget attaches to the tab whose URL starts with prefix.
func pageTarget(t *testing.T, tab context.Context, prefix string) context.Context {
	return attachTarget(t, tab, "page", prefix)
}

func attachTarget(t *testing.T, tab context.Context, kind, prefix string) context.Context {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		infos, err := chromedp.Targets(tab)
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range infos {
			if info.Type == kind && strings.HasPrefix(info.URL, prefix) {
				c, cancel := chromedp.NewContext(tab, chromedp.WithTargetID(info.TargetID))
				t.Cleanup(cancel)
				// A bound on a hung frame: the test checks it with axe at
				// its end, past 30 s on a loaded CI machine.
				c, cancelT := context.WithTimeout(c, 90*time.Second)
				t.Cleanup(cancelT)
				return c
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s target at %s", kind, prefix)
	return nil
}
