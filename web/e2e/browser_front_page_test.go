package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestBrowserFrontPage opens the front page in both languages: it lists a
// listed room and links it, with no serious accessibility violation, and
// the room page it leads to loads its icon.
func TestBrowserFrontPage(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe := axeSource(t)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title, set.ShopName, set.Listed, set.DefaultLanguage = "겨울 한정판 "+name, "Seoul Sneaker Lab", true, "ko"
	opens := time.Now().Add(72 * time.Hour)
	set.OpensAt = &opens
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.DeleteRoom(context.Background(), name) })
	for _, lang := range []string{"en", "ko"} {
		tab := stateTab(t, alloc, lang, "light")
		link := `a[href="/r/` + name + `"]`
		if err := chromedp.Do(tab, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(link))); err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		axeCheck(t, tab, axe, "front-"+lang)
		text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, set.Title) || !strings.Contains(text, "Seoul Sneaker Lab") {
			t.Errorf("%s: the front page lacks the room:\n%s", lang, text)
		}
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(link)), chromedp.WaitVisible(chromedp.CSS("#wr h1"))); err != nil {
			t.Fatalf("%s: follow the link: %v", lang, err)
		}
		icon, err := chromedp.Run(tab, chromedp.Evaluate[string](`fetch(document.querySelector('link[rel=icon]').href).then(r => r.status + " " + r.headers.get("content-type"))`, chromedp.EvalAwaitPromise))
		if err != nil || icon != "200 image/x-icon" {
			t.Errorf("%s: the room page's icon answered %q (%v)", lang, icon, err)
		}
	}
}
