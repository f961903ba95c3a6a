package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/servicetest"
)

// TestBrowserShareLink: an operator builds a share link in the console
// (axe-core checks the page in English and Korean, and it fits a phone),
// and a buyer who follows the short link lands on the room with the
// link's UTM values, buys, and the console's attribution and orders pages
// say which campaign and which link content sold it; an unknown short
// link is a clear page.
func TestBrowserShareLink(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe := axeSource(t)
	alloc := browser(t)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ServerDB))
	base, _, _ := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken, "-redis-namespace", ownNamespace(t, rdb))
	waitReady(t, base)
	const name = "share-e2e"
	op := stateTab(t, alloc, "en", "light")
	signInConsole(t, op, base)
	createConsoleRoom(t, op, base, name, "Share")
	addConsoleProduct(t, op, base, name, "Spring tee", "39000", "5")
	openPage(t, op, base+"/admin/rooms/"+name+"/share")
	axeCheck(t, op, axe, "share")
	setValues(t, op, "share link", [][2]string{{"#f-utm_source", "kakao"}, {"#f-utm_medium", "social"},
		{"#f-utm_campaign", "spring"}, {"#f-utm_content", "banner-top"}})
	submitForm(t, op, "share link", "form.share-form button[type=submit]", "/admin/rooms/"+name+"/share?created=")
	short, err := chromedp.Run(op, chromedp.Evaluate[string](`document.querySelector("td.short-url a").href`))
	if err != nil || !strings.HasPrefix(short, base+"/s/") {
		t.Fatalf("short link %q: %v", short, err)
	}
	axeCheck(t, op, axe, "share-listed")
	consoleShots(t, op, "share")

	ko := stateTab(t, alloc, "ko", "dark")
	signInConsole(t, ko, base)
	openPage(t, ko, base+"/admin/rooms/"+name+"/share")
	axeCheck(t, ko, axe, "share-ko")
	consoleShots(t, ko, "share-ko")

	buyer := stateTab(t, alloc, "ko", "light")
	openPage(t, buyer, short)
	loc, err := chromedp.Run(buyer, chromedp.Location())
	want := base + "/r/" + name + "?" + url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}, "utm_campaign": {"spring"}, "utm_content": {"banner-top"}}.Encode()
	if err != nil || loc != want {
		t.Fatalf("the short link led to %q (%v), want %q", loc, err, want)
	}
	// The buyer gets in and buys; the console says which campaign sold it.
	if err := chromedp.Do(buyer, chromedp.WaitVisible(chromedp.ID("wr-order")), chromedp.Click(chromedp.CSS("#wr-order button")),
		chromedp.WaitVisible(chromedp.CSS(".order-id"))); err != nil {
		t.Fatalf("the buyer from the short link could not buy: %v\npage: %s", err, pageText(t, buyer))
	}
	openPage(t, op, base+"/admin/attribution?room="+name)
	sold, err := chromedp.Run(op, chromedp.Evaluate[string](`(function () {
		var rows = document.querySelectorAll("table.attribution tbody tr.campaign");
		for (var i = 0; i < rows.length; i++) {
			var c = rows[i].cells;
			if (c[0].textContent.trim() === "kakao" && c[2].textContent.trim() === "spring") {
				return rows[i].querySelector(".joined").textContent.trim() + "/" + rows[i].querySelector(".orders").textContent.trim();
			}
		}
		return "";
	})()`))
	if err != nil || sold != "1/1" {
		t.Fatalf("the attribution page's kakao/spring row: joined/orders %q (%v), want 1/1\n%s", sold, err, pageText(t, op))
	}
	openPage(t, op, base+"/admin/orders?room="+name)
	if text := pageText(t, op); !strings.Contains(text, "banner-top") {
		t.Errorf("the orders page does not show the link's utm_content:\n%s", text)
	}
	resp, err := chromedp.Run(buyer, chromedp.NavigateResponse(base+"/s/Nope9999"))
	if err != nil || resp.Status != 404 || !strings.Contains(pageText(t, buyer), "존재하지 않거나 삭제된") {
		t.Fatalf("unknown short link: %v %v %q", resp, err, pageText(t, buyer))
	}
	axeCheck(t, buyer, axe, "share-404-ko")
}
