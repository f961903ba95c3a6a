package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"waitingroom/server/audit"
	"waitingroom/server/servicetest"
	"waitingroom/web/console"
)

func TestConsoleAudit(t *testing.T) {
	t.Parallel()
	oc := newOrdersConsole(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	long := strings.Repeat("가", 100) + "END"
	for _, e := range []audit.Entry{
		{At: at, Actor: "ann", Room: oc.room, Action: "product.update", Target: "42",
			Old: `{"name":"<script>alert(1)</script>","price":100,"stock":3}`, New: `{"name":"Shoes","price":200,"stock":3}`},
		{At: at.Add(time.Minute), Actor: "<b>bob</b>", Room: oc.room, Action: "room.update", Target: "title", Old: long, New: "short"},
		{At: at.Add(2 * time.Minute), Actor: "admin", Room: "other-room", Action: "order.cancel", Target: "abc", Old: "placed", New: "cancelled"},
	} {
		if err := oc.log.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := oc.get(t, "/admin/audit?room="+oc.room, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d: %.300s", resp.StatusCode, body)
	}
	for _, want := range []string{
		"27 Nov 2026, 10:00:00 (UTC+09:00)", "27 Nov 2026, 10:01:00 (UTC+09:00)",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;bob&lt;/b&gt;", "product.update",
		`<code class="field">name</code>`, `<code class="field">price</code>`, "<details", long,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "<b>bob", `<code class="field">stock</code>`, "other-room</td>", "order.cancel"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page has %q", bad)
		}
	}
	if strings.Index(body, "room.update") > strings.Index(body, "product.update") {
		t.Error("not newest first")
	}
	// The long value's row shows its start; the whole is in the <details>.
	if m := regexp.MustCompile(`<summary>(가+)…</summary>`).FindStringSubmatch(body); m == nil || len([]rune(m[1])) != console.AuditShort {
		t.Errorf("the long value is not cut to %d characters", console.AuditShort)
	}

	_, body = oc.get(t, "/admin/audit?tz=America/New_York", nil)
	for _, want := range []string{"26 Nov 2026, 20:00:00 (UTC-05:00)", "order.cancel", "other-room", "America/New_York (UTC-05:00)"} {
		if !strings.Contains(body, want) {
			t.Errorf("all rooms in New York time: the page lacks %q", want)
		}
	}
	_, body = oc.get(t, "/admin/audit", map[string]string{"Accept-Language": "ko"})
	if !strings.Contains(body, "2026. 11. 27. 10:02:00 (UTC+09:00)") || !strings.Contains(body, "변경 기록") {
		t.Errorf("the Korean page: %.300s", body)
	}

	for _, q := range []string{"room=Bad%20Room", "before=-1", "before=x", "tz=Nowhere/Land"} {
		resp, body := oc.get(t, "/admin/audit?"+q, nil)
		if resp.StatusCode != 400 || !strings.Contains(body, `role="alert"`) {
			t.Errorf("%s: %d, want 400 with a message", q, resp.StatusCode)
		}
	}
}

func TestConsoleAuditPaging(t *testing.T) {
	t.Parallel()
	oc := newOrdersConsole(t)
	ctx := context.Background()
	n := console.AuditPageSize + 5
	for i := range n {
		if err := oc.log.Record(ctx, audit.Entry{Actor: "ann", Room: oc.room, Action: "room.update", Target: fmt.Sprintf("entry-%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	target := regexp.MustCompile(`entry-(\d{3})`)
	older := regexp.MustCompile(`href="([^"]+)" rel="next"`)
	path := "/admin/audit?room=" + oc.room + "&tz=Europe/Paris"
	var seen []string
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		_, body := oc.get(t, path, nil)
		for _, m := range target.FindAllStringSubmatch(body, -1) {
			seen = append(seen, m[1])
		}
		path = ""
		if m := older.FindStringSubmatch(body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
			if !strings.Contains(path, "room="+oc.room) || !strings.Contains(path, "tz=Europe%2FParis") {
				t.Fatalf("the older page lost the filters: %s", path)
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("%d entries over the pages, want %d", len(seen), n)
	}
	for i, s := range seen {
		if want := fmt.Sprintf("%03d", n-1-i); s != want {
			t.Fatalf("entry %d is %s, want %s", i, s, want)
		}
	}
}

// TestAuditPageShowsProductPrices: a product added and repriced through the
// admin API reads "$19.99 → $24.99" on the audit page.
func TestAuditPageShowsProductPrices(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	r := rc.do(t, "POST", "/api/admin/rooms/"+rc.room+"/products", `{"name":"Cap","price":1999,"currency":"USD","stock":5}`, auth, nil)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var p struct{ ID int64 }
	r.json(t, &p)
	if r := rc.do(t, "PUT", "/api/admin/rooms/"+rc.room+"/products/"+strconv.FormatInt(p.ID, 10), `{"price":2499}`, auth, nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	_, page := rc.get(t, "/admin/audit", "en")
	for _, s := range []string{"$19.99", "$24.99"} {
		if !strings.Contains(page, s) {
			t.Fatalf("audit page lacks %q: %s", s, page)
		}
	}
	if strings.Contains(page, ">2499<") || strings.Contains(page, ">1999<") || strings.Contains(page, `<span class="value old">USD</span>`) {
		t.Fatalf("audit page shows minor units: %s", page)
	}
}

// TestAuditPageFitsAPhone: the audit log, with a long URL and a long
// title among its changes, fits a 390 px wide phone in headless Chromium:
// the values wrap instead of widening the page. And on a desktop.
func TestAuditPageFitsAPhone(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	long := "https://shop.example.com/" + strings.Repeat("averyveryverylongpathsegmentwithoutanybreaks", 8)
	if r := rc.do(t, "PUT", "/api/admin/rooms/"+rc.room, `{"shopURL":"`+long+`","title":"`+strings.Repeat("W", 150)+`"}`, auth, nil); r.status != 200 {
		t.Fatal(r.body)
	}
	if r := rc.do(t, "POST", "/api/admin/rooms/"+rc.room+"/products", `{"name":"`+strings.Repeat("Longproductname", 12)+`","price":1999,"currency":"USD","stock":5,"imageURL":"`+long+`"}`, auth, nil); r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	status, page := rc.get(t, "/admin/audit", "en")
	if status != 200 || !strings.Contains(page, "averyveryverylong") {
		t.Fatalf("audit page: %d %s", status, page)
	}
	// The page, with the console's style sheet, from a server of its own
	// (the browser has no console session).
	css, err := os.ReadFile("../static/console.css")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(page, `<link rel="stylesheet"`)
	if i < 0 {
		t.Fatal("no style sheet link on the page")
	}
	page = page[:i] + "<style>" + string(css) + "</style>" + page[i+strings.Index(page[i:], ">")+1:]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	}))
	defer srv.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(servicetest.Chromium(t)),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	tab, cancelTime := context.WithTimeout(tab, 30*time.Second)
	defer cancelTime()
	for _, vw := range []int64{390, 1024} {
		if err := chromedp.Do(tab, chromedp.EmulateViewport(vw, 844), chromedp.Navigate(srv.URL)); err != nil {
			t.Fatal(err)
		}
		width, err := chromedp.Run(tab, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if width > vw {
			wide, _ := chromedp.Run(tab, chromedp.Evaluate[string](`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 8).map(e => e.tagName + "." + e.className).join(" ")`))
			t.Fatalf("scrollWidth %d > %d at %d px: %s", width, vw, vw, wide)
		}
	}
}
