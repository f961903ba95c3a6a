package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestBrowserSoldOutKeepsThePlace: a buyer in line when the room sells
// out reads that it is sold out for now and that they keep their place;
// the page keeps its stream, and after the restock it reaches its turn
// without a reload.
func TestBrowserSoldOutKeepsThePlace(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = room.MinRate // nobody is let in for 100 s
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	addProduct(t, name, "Limited sneakers", 129000, 1)
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tab, tcancel := context.WithTimeout(tab, 60*time.Second)
	t.Cleanup(tcancel)
	if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name), waitText("You are next"),
		chromedp.Evaluate[chromedp.Void](`window.__noReload = 42`)); err != nil {
		t.Fatalf("join: %v", err)
	}
	if err := eng.SetSoldOut(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	keep := fmt.Sprintf(`document.getElementById("wr-detail").textContent.includes(%q)`, "you keep your place")
	if err := chromedp.Do(tab, waitText("Sold out"),
		chromedp.Poll[chromedp.Void](keep, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		text, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("wr-status")))
		t.Fatalf("sold out: %v (%q)", err, text)
	}
	set.Rate = 1
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	if err := eng.SetSoldOut(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
		text, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("wr-status")))
		t.Fatalf("the restock did not reach the page: %v (%q)", err, text)
	}
	if marker, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.__noReload || 0`)); err != nil || marker != 42 {
		t.Fatalf("the page reloaded (%d, %v)", marker, err)
	}
}
