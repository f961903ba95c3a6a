package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// eventAway is how long the whole-event test's buyer stays away: the
// 3 minutes, unless WR_EVENT_AWAY or -event.away says otherwise
// (`make test` keeps it shorter, `make drill` runs the 3 minutes). It must
// exceed the minimum abandonAfterSeconds (60 s) with room to spare, so that
// the buyer's turn passes while they are away.
var eventAway = flag.Duration("event.away", defaultEventAway(), "how long the whole-event browser test's buyer stays away (at least 80s; default $WR_EVENT_AWAY or 3m)")

func defaultEventAway() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("WR_EVENT_AWAY")); err == nil {
		return d
	}
	return 3 * time.Minute
}

// eventBuyer is one buyer of the whole-event test: a browser profile of
// their own (holder keeps it, and its cookie, while their tab is closed)
// and the tab showing the room.
type eventBuyer struct {
	holder context.Context
	tab    context.Context
	close  context.CancelFunc
	ticket int64
	place  int
}

// drawAnswer is GET /api/rooms/{room}/draw.
type drawAnswer struct {
	Commitment string  `json:"commitment"`
	Done       bool    `json:"done"`
	Seed       string  `json:"seed"`
	Tickets    []int64 `json:"tickets"`
}

// placeText is what the waiting page says at drawn place p (1-based),
// before anyone is let in.
func placeText(p int) string {
	switch p {
	case 1:
		return "You are next"
	case 2:
		return "1 person ahead of you"
	}
	return fmt.Sprintf("%d people ahead of you", p-1)
}

// TestBrowserWholeEvent drives one scheduled sale as its buyers see it, in
// real Chromium against the real server, Redis and PostgreSQL: the
// countdown before the pre-queue, four buyers (profiles of their own) in
// the pre-queue with no rank, the draw at opening with each page showing
// its drawn place, the draw checked by `wrload verify-draw` (each buyer's
// ticket at the place their page shows), a buyer whose tab is closed for
// -event.away (3 minutes) and whose turn passes meanwhile, the next buyer's
// pass countdown and order, the returning buyer let in at the first tick
// with a free slot ahead of the line, the sell-out on the waiting pages,
// and "sale ended" for a visitor after closing. Screenshots go to
// artifacts/e2e/event.
//
// The server runs on a servicetest.JumpClock, and the first buyer's page
// on a page clock. The countdown to the pre-queue is jumped on both: the
// page joins by itself when its own countdown ends. The pre-queue, the
// absence and the close, which the pages follow through their streams and
// their server's time, are jumped on the server's clock (jumpTo).
func TestBrowserWholeEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	// Parallel: its minutes of waiting overlap the other long tests (make
	// test-long runs them from the start, beside the rest of web/e2e; each
	// has its own server, rooms and order database, and the drills their
	// own Redis and proxies).
	t.Parallel()
	if *eventAway < 80*time.Second {
		t.Fatalf("-event.away %v: at least 80s (the away threshold is 60 s)", *eventAway)
	}
	alloc := browser(t)
	clk := servicetest.NewJumpClock()
	base, eng, rdb := startServerOn(t, clk, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	ctx := context.Background()
	shots := filepath.Join(servicetest.ArtifactDir(t, "e2e"), "event")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	snap := func(tab context.Context, file string) {
		t.Helper()
		png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", file, err)
		}
		if err := os.WriteFile(filepath.Join(shots, file), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(tab context.Context, what, js string, within time.Duration) {
		t.Helper()
		if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(within))); err != nil {
			text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: %v\npage: %s", what, err, text)
		}
	}
	getDraw := func() drawAnswer {
		t.Helper()
		resp, err := http.Get(base + "/api/rooms/" + name + "/draw")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var d drawAnswer
		if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET draw: %d %v", resp.StatusCode, err)
		}
		return d
	}

	newBuyer := func() *eventBuyer {
		holder, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		if err := chromedp.Do(holder, chromedp.Navigate("about:blank")); err != nil {
			t.Fatal(err)
		}
		return &eventBuyer{holder: holder}
	}
	// The buyers' profiles are made before the schedule is set: on a
	// loaded machine, four took past the pre-queue's start (a CI run).
	buyers := []*eventBuyer{newBuyer(), newBuyer(), newBuyer(), newBuyer()}

	// The schedule: the pre-queue in 12 s, the opening 24 s later; the
	// close is set when the sale is over.
	began := time.Now()
	prequeueAt := clk.Now().Add(12 * time.Second).Truncate(time.Second)
	opensAt := prequeueAt.Add(24 * time.Second)
	closesAt := opensAt.Add(*eventAway + 10*time.Minute) // moved to the end of the sale below
	set := room.Defaults(name)
	set.Title, set.ShopURL, set.MaxPerBuyer = "Midnight drop", "https://shop.example/drop", 1
	set.PrequeueAt, set.OpensAt, set.ClosesAt = &prequeueAt, &opensAt, &closesAt
	// One pass at a time, and at first one admission per 100 s: the line
	// holds until the test raises the rate. Away after 60 s unseen.
	set.Rate, set.MaxActive = room.MinRate, 1
	set.AbandonAfterSeconds, set.ReturnWithinSeconds = room.MinAbandon, room.DefaultReturnWithin
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	addProduct(t, name, "Limited sneakers", 129000, 2)

	// newTab opens a new tab in the buyer's profile; navigate opens the
	// room in it, and any goroutine may call it. open is navigate for the
	// test's own.
	newTab := func(b *eventBuyer) {
		tab, cancel := chromedp.NewContext(b.holder)
		tab, cancelT := context.WithTimeout(tab, *eventAway+3*time.Minute)
		b.tab, b.close = tab, func() { cancelT(); cancel() }
		t.Cleanup(b.close)
	}
	navigate := func(b *eventBuyer) error {
		newTab(b)
		return chromedp.Do(b.tab, chromedp.Navigate(base+"/r/"+name))
	}
	open := func(b *eventBuyer) {
		if err := navigate(b); err != nil {
			t.Fatal(err)
		}
	}

	// Before the pre-queue: the opening time and a countdown, no join. This
	// page runs on a page clock, moved with the server's to the pre-queue.
	newTab(buyers[0])
	withPageClock(t, buyers[0].tab)
	if err := chromedp.Do(buyers[0].tab, chromedp.Navigate(base+"/r/"+name)); err != nil {
		t.Fatal(err)
	}
	wait(buyers[0].tab, "before the pre-queue", rankIs("Not open yet")+` && document.getElementById("wr-count").textContent.indexOf("Opens in") === 0`, 10*time.Second)
	if clk.Now().After(prequeueAt) {
		t.Fatalf("the countdown showed only after prequeueAt (the machine is too slow for this schedule)")
	}
	snap(buyers[0].tab, "1-countdown.png")
	commitment := getDraw().Commitment
	if len(commitment) != 64 {
		t.Fatalf("no commitment published before opening: %q", commitment)
	}

	// At prequeueAt: the first page joins by itself, the others arrive.
	// The server's clock goes first, and the page's as far and a second
	// more: the page never asks before the server's pre-queue is open. The
	// others arrive together: a page takes seconds to load on a busy
	// machine, and three loaded one after another ate the pre-queue.
	ahead := clk.Until(prequeueAt)
	jumpTo(t, clk, eng, name, prequeueAt)
	tickPage(t, buyers[0].tab, ahead+time.Second)
	errs := make(chan error, len(buyers)-1)
	for _, b := range buyers[1:] {
		go func() { errs <- navigate(b) }()
	}
	for range buyers[1:] {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range buyers {
		wait(b.tab, fmt.Sprintf("buyer %d in the pre-queue", i+1), rankIs("You are in the pre-queue")+
			` && /\d/.test(document.getElementById("wr-eta").textContent)`, 15*time.Second)
		eta, _ := chromedp.Run(b.tab, chromedp.Text(chromedp.ID("wr-eta")))
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(eta, "Your ticket number: "), " (to check the draw)"), 10, 64)
		if err != nil {
			t.Fatalf("buyer %d: ticket line %q", i+1, eta)
		}
		b.ticket = n
		body, _ := chromedp.Run(b.tab, chromedp.Text(chromedp.CSS("main")))
		if strings.Contains(body, "ahead of you") || strings.Contains(body, "You are next") {
			t.Fatalf("buyer %d: the pre-queue page shows a rank: %q", i+1, body)
		}
	}
	if clk.Now().After(opensAt) {
		t.Fatalf("the pre-queue was checked only after opensAt (the machine is too slow for this schedule)")
	}
	snap(buyers[1].tab, "2-prequeue.png")

	// At opensAt: the draw. Each page shows its drawn place.
	jumpTo(t, clk, eng, name, opensAt)
	var d drawAnswer
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if d = getDraw(); d.Done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the draw was not done 10 s after opening")
		}
	}
	if d.Commitment != commitment || len(d.Tickets) != len(buyers) {
		t.Fatalf("draw %+v: want the commitment %s published before opening and %d tickets", d, commitment, len(buyers))
	}
	for i, b := range buyers {
		for p, tk := range d.Tickets {
			if tk == b.ticket {
				b.place = p + 1
			}
		}
		if b.place == 0 {
			t.Fatalf("buyer %d's ticket %d is not in the draw %v", i+1, b.ticket, d.Tickets)
		}
		wait(b.tab, fmt.Sprintf("buyer %d's drawn place %d", i+1, b.place), rankIs(placeText(b.place)), 10*time.Second)
	}
	byPlace := make([]*eventBuyer, len(buyers)+1)
	for _, b := range buyers {
		byPlace[b.place] = b
	}
	snap(byPlace[1].tab, "3-drawn-first.png")
	snap(byPlace[4].tab, "3-drawn-last.png")

	// The buyer drawn first closes their tab: away when their turn comes.
	away := byPlace[1]
	away.close()
	leftAt := clk.Now()

	// Meanwhile, each buyer checks the draw with verify-draw, all at once:
	// their ticket at the place their page showed.
	verified := make(chan error, len(buyers))
	for _, b := range buyers {
		go func() {
			cmd := exec.Command("go", "run", "./k6/cmd/wrload", "verify-draw", "-url", base, "-room", name,
				"-commitment", commitment, "-ticket", strconv.FormatInt(b.ticket, 10))
			cmd.Dir = repoRoot
			out, err := cmd.CombinedOutput()
			want := fmt.Sprintf("ticket %d drew place %d of %d", b.ticket, b.place, len(buyers))
			if err != nil || !strings.Contains(string(out), "verify-draw: OK") || !strings.Contains(string(out), want) {
				err = fmt.Errorf("verify-draw for ticket %d: %v\n%s(want %q)", b.ticket, err, out, want)
			}
			verified <- err
		}()
	}
	for range buyers {
		if err := <-verified; err != nil {
			t.Fatal(err)
		}
	}

	// Past the away threshold, the operator raises the rate: the turn of
	// the buyer away goes to the next present buyer, who sees the pass
	// countdown.
	jumpTo(t, clk, eng, name, leftAt.Add(time.Duration(room.MinAbandon)*time.Second+10*time.Second))
	set.Rate = 1
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	second := byPlace[2]
	wait(second.tab, "the second drawn buyer's turn", `!document.getElementById("wr-order").hidden && /^Your pass is valid for [0-9]+:[0-9]{2}$/.test(document.getElementById("wr-count").textContent)`, 10*time.Second)
	snap(second.tab, "4-pass-countdown.png")
	wait(byPlace[3].tab, "the third drawn buyer is next", rankIs("You are next"), 10*time.Second)
	wait(byPlace[4].tab, "the fourth drawn buyer moved up", rankIs("1 person ahead of you"), 10*time.Second)
	if st, _ := eng.Stats(ctx, name); st.PassedOver != 1 || st.Away != 1 || st.Admitted != 1 {
		t.Fatalf("after the away buyer's turn: %+v; want 1 passed over, 1 away, 1 admitted", st)
	}

	// The away buyer comes back after the full absence.
	jumpTo(t, clk, eng, name, leftAt.Add(*eventAway))
	open(away)
	t.Logf("the buyer drawn first came back after %v", clk.Since(leftAt).Round(time.Second))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if st, _ := eng.Stats(ctx, name); st.Returning == 1 {
			break
		}
		if time.Now().After(deadline) {
			st, _ := eng.Stats(ctx, name)
			t.Fatalf("the returning buyer was not seen back: %+v", st)
		}
	}
	snap(away.tab, "5-returned.png")

	// The second buyer orders: the confirmation. Their slot frees, and the
	// returning buyer is let in at the next tick, ahead of the third.
	if err := chromedp.Do(second.tab, chromedp.Click(chromedp.CSS("#wr-order button")), chromedp.WaitVisible(chromedp.CSS(".order-id"))); err != nil {
		t.Fatalf("the second buyer's order: %v", err)
	}
	ordered := time.Now()
	conf, _ := chromedp.Run(second.tab, chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(conf, "Your order is placed") || !strings.Contains(conf, "₩129,000") {
		t.Fatalf("confirmation page: %q", conf)
	}
	snap(second.tab, "6-confirmation.png")
	wait(away.tab, "the returning buyer let in", `!document.getElementById("wr-order").hidden && /^Your pass is valid for/.test(document.getElementById("wr-count").textContent)`, 30*time.Second)
	t.Logf("the returning buyer was let in %v after the slot freed", time.Since(ordered).Round(time.Millisecond))
	if r, _ := chromedp.Run(byPlace[3].tab, chromedp.Text(chromedp.ID("wr-rank"))); r != "You are next" {
		t.Fatalf("the third drawn buyer shows %q while the returning buyer is let in", r)
	}
	snap(away.tab, "7-returned-let-in.png")

	// The returning buyer takes the last pair: the waiting pages say sold out.
	if err := chromedp.Do(away.tab, chromedp.Click(chromedp.CSS("#wr-order button")), chromedp.WaitVisible(chromedp.CSS(".order-id"))); err != nil {
		t.Fatalf("the returning buyer's order: %v", err)
	}
	for _, p := range []int{3, 4} {
		wait(byPlace[p].tab, fmt.Sprintf("sold out on place %d's page", p), rankIs("Sold out"), 10*time.Second)
	}
	snap(byPlace[4].tab, "8-sold-out.png")
	if st, _ := eng.Stats(ctx, name); !st.SoldOut || st.Consumed != 2 || st.Returned != 1 || st.Unaccounted() != 0 {
		t.Fatalf("after the sale: %+v", st)
	}

	// The operator closes the sale two seconds from now; after closesAt, a
	// new visitor is told the sale has ended. (A close set at the start
	// would race the steps above on a slow machine.)
	if clk.Now().After(closesAt) {
		t.Fatalf("the sale ran past closesAt %s", closesAt)
	}
	closesAt = clk.Now().Add(2 * time.Second)
	set.ClosesAt = &closesAt
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	jumpTo(t, clk, eng, name, closesAt.Add(500*time.Millisecond))
	late := newBuyer()
	open(late)
	wait(late.tab, "a visitor after closing", rankIs("This sale has ended"), 10*time.Second)
	snap(late.tab, "9-sale-ended.png")
	t.Logf("the whole event took %v, the clock jumped %v; screenshots in %s", time.Since(began).Round(time.Second), clk.Ahead().Round(time.Second), shots)
}
