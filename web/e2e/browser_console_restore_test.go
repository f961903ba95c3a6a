package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/queue"
	"waitingroom/server/roomsync"
	"waitingroom/server/servicetest"
)

// TestBrowserConsoleRoomsSurviveRedisLoss: an operator creates a room in
// the console, adds its product and pauses it. Redis then loses every key
// of the deployment while the server runs. /readyz says the data was
// restored, the room comes back from the database with its settings (the
// pause too), the console still lists it with its product, the operator
// is still signed in (sessions live in the database), and the buyer's page
// is the room's again.
func TestBrowserConsoleRoomsSurviveRedisLoss(t *testing.T) {
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
	ctx := context.Background()

	const name = "kept-room"
	op := stateTab(t, alloc, "en", "light")
	signInConsole(t, op, base)
	createConsoleRoom(t, op, base, name, "Kept through a Redis loss")
	addConsoleProduct(t, op, base, name, "Linen shirt", "39000", "10")
	openPage(t, op, base+"/admin/rooms/"+name+"/settings")
	submitForm(t, op, "pause", `form.action:has(input[name="action"][value="pause"]) button`, "/admin/rooms/"+name+"/settings")
	set, err := eng.Room(ctx, name)
	if err != nil || !set.Paused || set.Title != "Kept through a Redis loss" {
		t.Fatalf("the console's room in Redis: %+v %v", set, err)
	}
	saved, _ := json.Marshal(set)

	// Redis loses the deployment's data.
	if n := dropNamespace(rdb, ns); n == 0 {
		t.Fatal("the deployment had no keys to lose")
	}
	if _, err := eng.Room(ctx, name); err == nil {
		t.Fatal("the room is still in Redis after its keys were deleted")
	}
	lost := time.Now()
	var checks map[string]string
	for code := 0; checks[roomsync.CheckData] != roomsync.Restored || code != 200; time.Sleep(100 * time.Millisecond) {
		if time.Since(lost) > 10*time.Second {
			t.Fatalf("/readyz did not say the data was restored within 10 s: %d %v", code, checks)
		}
		code, checks = readiness(t, base)
	}
	t.Logf("/readyz said %v %v after the loss", checks, time.Since(lost).Round(time.Millisecond))
	back, err := eng.Room(ctx, name)
	if err != nil {
		t.Fatalf("the room did not come back: %v", err)
	}
	if got, _ := json.Marshal(back); string(got) != string(saved) {
		t.Fatalf("the room came back as\n%s\nwant\n%s", got, saved)
	}

	// The console, with the same session: the room is listed, live, with
	// its product.
	openPage(t, op, base+"/admin/rooms")
	if loc, _ := chromedp.Run(op, chromedp.Location()); !strings.HasSuffix(loc, "/admin/rooms") {
		t.Fatalf("the operator was signed out by the loss: at %s", loc)
	}
	row, err := chromedp.Run(op, chromedp.Evaluate[string](`(document.querySelector('tr[data-room="`+name+`"]') || {innerText: ""}).innerText`))
	if err != nil || !strings.Contains(row, "Kept through a Redis loss") || !strings.Contains(row, "Paused") {
		t.Fatalf("the rooms list after the restore shows %q (%v), want the room, paused\npage: %s", row, err, pageText(t, op))
	}
	openPage(t, op, base+"/admin/rooms/"+name+"/products")
	if text := pageText(t, op); !strings.Contains(text, "Linen shirt") {
		t.Fatalf("the products page after the restore:\n%s", text)
	}
	shotIn(t, op, "console", "rooms-after-redis-loss", 1280, 800)
	buyer := stateTab(t, alloc, "en", "light")
	openPage(t, buyer, base+"/r/"+name)
	if err := chromedp.Do(buyer, chromedp.Poll[chromedp.Void](rankIs("The line is paused"), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the buyer's page after the restore: %v\npage: %s", err, pageText(t, buyer))
	}
}
