package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/servicetest"
)

// TestAuditPageFitsAPhone: the audit log, with a long URL and a long
// title among its changes, fits a 390 px wide phone in headless Chromium:
// the values wrap instead of widening the page. And on a desktop.
func TestAuditPageFitsAPhone(t *testing.T) {
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
