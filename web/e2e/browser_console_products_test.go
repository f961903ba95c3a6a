package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/servicetest"
	"waitingroom/views"
)

// TestBrowserProductImageDidNotLoad: the console does not fetch a
// product's https:// image when it is saved; its page says so when the
// image does not load, in the operator's language, in place of a broken
// picture.
func TestBrowserProductImageDidNotLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel()
	alloc := browser(t)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ServerDB))
	base, _, _ := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken, "-redis-namespace", ownNamespace(t, rdb))
	waitReady(t, base)
	const name = "broken-image"
	op := stateTab(t, alloc, "en", "light")
	signInConsole(t, op, base)
	createConsoleRoom(t, op, base, name, "Broken image")
	// An https:// address that answers nothing: a closed port on loopback.
	openPage(t, op, base+"/admin/rooms/"+name+"/products")
	setValues(t, op, "new product", [][2]string{{"#f-name", "Linen shirt"}, {"#f-price", "39000"}, {"#f-currency", "KRW"},
		{"#f-stock", "10"}, {"#f-imageURL", "https://127.0.0.1:1/shirt.png"}})
	submitForm(t, op, "new product", "form.product-form button[type=submit]", "/admin/rooms/"+name+"/products")
	for _, lang := range []string{"en", "ko"} {
		tab := op
		if lang == "ko" {
			koTab, cancel := chromedp.NewContext(context.WithoutCancel(op)) // the same session
			t.Cleanup(cancel)
			tab = langTab(t, koTab, "ko", "light")
		}
		openPage(t, tab, base+"/admin/rooms/"+name+"/products")
		// Waited for by query, not by a script polled in one document: a
		// poll fails ("Cannot find context with specified id") when the
		// document it runs in is replaced under it, as the form's own
		// navigation can still do here.
		wait, cancel := context.WithTimeout(tab, 10*time.Second)
		err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS("tr[data-product] .img-broken")),
			chromedp.WaitNotPresent(chromedp.CSS("img.thumb")))
		cancel()
		var said string
		if err == nil {
			said, err = chromedp.Run(tab, chromedp.Text(chromedp.CSS("tr[data-product] .img-broken")))
		}
		if want := views.RoomsTextFor(lang).ImageBroken; err != nil || strings.TrimSpace(said) != want {
			t.Fatalf("%s: the list says %q (%v), want %q\npage: %s", lang, said, err, want, pageText(t, tab))
		}
	}
}
