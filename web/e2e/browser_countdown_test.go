package e2e

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// countdownRecorder runs before the page's own script: it logs every
// position event the page's EventSource receives and every rank the page
// shows, in order, with the time.
const countdownRecorder = `
window.__log = [];
(function () {
  var ES = window.EventSource;
  function Wrapped(u, o) {
    var es = new ES(u, o);
    es.addEventListener("position", function (e) {
      try { var p = JSON.parse(e.data); window.__log.push(["event", performance.now(), p.rank, p.pace || 0, p.ticket]); } catch (x) {}
    });
    return es;
  }
  Wrapped.prototype = ES.prototype;
  Wrapped.CONNECTING = 0; Wrapped.OPEN = 1; Wrapped.CLOSED = 2;
  window.EventSource = Wrapped;
  document.addEventListener("DOMContentLoaded", function () {
    var el = document.getElementById("wr-rank");
    new MutationObserver(function () {
      window.__log.push(["shown", performance.now(), el.textContent]);
    }).observe(el, { childList: true, characterData: true, subtree: true });
  });
})();
`

// TestBrowserCountdownNeverAhead: far back in a moving line, a page hears
// its position only every few ticks and counts down in between (CADENCE).
// Whatever it shows must never be better than what the next event brings,
// before and after a rate cut: no event may make the rank on the page go
// up.
func TestBrowserCountdownNeverAhead(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	// A beat a second: a page counts after 1.2 s of hold and three ticks.
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-sse-heartbeat", "1s")
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title = "Countdown"
	set.Rate = room.MinRate // the line forms first: nobody moves yet
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	// 3,000 ahead: at 20 a second the front is 200 ranks, so the page
	// hears every 16 ticks (4 s) and counts down for the last 2 s of them.
	tctx := countdownPage(t, alloc, eng, base, name, false)
	// The line moves at 20 a second, then the operator cuts the rate to 8:
	// the pages counting at 18 a second must slow down before they get
	// ahead.
	for _, step := range []struct {
		rate float64
		for_ time.Duration
	}{{20, 12 * time.Second}, {8, 10 * time.Second}} {
		set.Rate = step.rate
		if err := eng.SaveRoom(ctx, name, set); err != nil {
			t.Fatal(err)
		}
		time.Sleep(step.for_)
	}
	log, err := chromedp.Run(tctx, chromedp.Evaluate[[][]any](`window.__log`))
	if err != nil {
		t.Fatal(err)
	}

	type shown struct {
		at   float64
		rank int64
	}
	var since []shown // what the page showed since the last event
	var events, paced, counted int
	var slowest float64 // the slowest pace an event told
	lastEvent := int64(-1)
	for _, e := range log {
		at, _ := e[1].(float64)
		switch e[0] {
		case "event":
			rank := int64(e[2].(float64))
			for _, s := range since {
				if s.rank < rank {
					t.Fatalf("at %.0f ms the page showed %d, then an event brought %d: the countdown got ahead\nlog: %v", s.at, s.rank, rank, log)
				}
			}
			since, lastEvent = since[:0], rank
			events++
			if pace := e[3].(float64); pace > 0 {
				paced++
				if slowest == 0 || pace < slowest {
					slowest = pace
				}
			}
		case "shown":
			rank, ok := rankOf(e[2].(string))
			if !ok {
				continue
			}
			if lastEvent >= 0 && rank < lastEvent {
				counted++ // a step of the countdown, between events
			}
			since = append(since, shown{at, rank})
		}
	}
	// The test would pass on a page that never counts: make sure it did.
	if paced < 3 || counted < 10 {
		t.Fatalf("%d events (%d with a pace), %d countdown steps: the countdown never ran\nlog: %v", events, paced, counted, log)
	}
	// The cut reached the page's countdown: a rate that moves by more
	// than 15% makes far pages due within five ticks, at the new pace.
	if slowest > 8*0.9 || slowest == 0 {
		t.Fatalf("no event after the cut counted at 8 a second or less (slowest pace %v)\nlog: %v", slowest, log)
	}
	t.Logf("%d events, %d with a pace, %d countdown steps between them; none ahead of the next event", events, paced, counted)
}

// countdownPage puts 3,000 visitors in room name's line, then opens the
// room at base in a new browser context that records the page's events
// and ranks (countdownRecorder), on a page clock when clocked, and waits
// until it shows its place.
func countdownPage(t *testing.T, alloc context.Context, eng *queue.Engine, base, name string, clocked bool) context.Context {
	t.Helper()
	ctx := context.Background()
	for range 3000 {
		v, _ := visitor.NewID()
		if _, err := eng.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tctx, tcancel := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(tcancel)
	if clocked {
		withPageClock(t, tctx)
	}
	err := chromedp.Do(tctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: countdownRecorder})
			return err
		}),
		chromedp.Navigate(base+"/r/"+name),
		waitText("3,000 people ahead of you"),
	)
	if err != nil {
		t.Fatalf("the page never showed its place: %v", err)
	}
	return tctx
}

// rankOf reads the rank from the English rank line.
func rankOf(s string) (int64, bool) {
	switch {
	case s == "You are next":
		return 0, true
	case strings.HasSuffix(s, " ahead of you"):
		n, err := strconv.ParseInt(strings.ReplaceAll(strings.Fields(s)[0], ",", ""), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// TestBrowserCountdownHoldsWhenServerStops: the only server of a moving
// line is frozen (SIGSTOP) just after a far page heard its position. The
// stream stays open and says nothing, and nobody is left to tell the page
// to hold: the page must stop counting on its own, never showing a better
// rank than the frozen line's, and count again from the truth once the
// server runs again.
func TestBrowserCountdownHoldsWhenServerStops(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	url := servicetest.RedisURLDB(t, servicetest.ServerDB)
	rdb := servicetest.RedisAt(t, url)
	d := &drillEnv{t: t, redisURL: url, dbURL: servicetest.PostgresURL(t), dir: t.TempDir(), eng: queue.New(rdb, queue.DefaultNamespace(rdb))}
	// Ticks of 250 ms and a beat a second: a page holds a new rank for
	// 1.95 s (the 1.2 s its stream may be quiet, and three ticks).
	in := d.startInstance("TICK=250ms", "SSE_HEARTBEAT=1s")
	t.Cleanup(func() { in.cmd.Process.Signal(syscall.SIGCONT) }) // before its SIGTERM
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title = "Frozen"
	set.Rate = room.MinRate
	ctx := context.Background()
	if err := d.eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	// 3,000 ahead at 20 a second: the page hears every 16 ticks (4 s) and
	// counts for the last 2 s of each gap.
	tctx := countdownPage(t, alloc, d.eng, "http://"+in.addr, name, true)
	set.Rate = 20
	if err := d.eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	logOf := func() [][]any {
		t.Helper()
		log, err := chromedp.Run(tctx, chromedp.Evaluate[[][]any](`window.__log`))
		if err != nil {
			t.Fatal(err)
		}
		return log
	}
	// lastEvent returns the index of log's last position event with a
	// pace, and whether the page counted below an event's rank before it.
	lastEvent := func(log [][]any) (last int, counted bool) {
		last = -1
		rank := int64(-1)
		for i, e := range log {
			switch e[0] {
			case "event":
				rank = int64(e[2].(float64))
				if e[3].(float64) > 0 {
					last = i
				}
			case "shown":
				if r, ok := rankOf(e[2].(string)); ok && rank >= 0 && r < rank {
					counted = true
				}
			}
		}
		return last, counted
	}
	// The page counts down between events (so that it could get ahead of a
	// frozen line); then, as soon as it hears its next position, the
	// server freezes.
	var log [][]any
	waitUntil(t, 30*time.Second, "the page counting down", func() bool {
		_, counted := lastEvent(logOf())
		return counted
	})
	before, _ := lastEvent(logOf())
	waitUntil(t, 20*time.Second, "the page's next position", func() bool {
		log = logOf()
		last, _ := lastEvent(log)
		return last > before
	})
	if err := in.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozenAt, _ := lastEvent(log)
	st, err := d.eng.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	ticket := int64(log[frozenAt][4].(float64))
	truth := ticket - st.Head - 1
	// Longer than the page's whole gap, on the page's clock: a page that
	// counts on through its span gets 36 ranks ahead.
	tickPage(t, tctx, 5*time.Second)
	log = logOf()
	for _, e := range log[frozenAt+1:] {
		if e[0] == "event" {
			t.Fatalf("an event came from a frozen server: %v", e)
		}
		if r, ok := rankOf(e[2].(string)); ok && r < truth {
			t.Fatalf("frozen at %d ahead, the page showed %d\nlog: %v", truth, r, log[frozenAt:])
		}
	}
	if err := in.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Running again, the server's next position reaches the page, and the
	// page shows the line moving on.
	waitUntil(t, 20*time.Second, "the page hearing the line move on", func() bool {
		log = logOf()
		for _, e := range log[frozenAt+1:] {
			if e[0] == "event" && int64(e[2].(float64)) < truth {
				return true
			}
		}
		return false
	})
	t.Logf("frozen at %d ahead for 5 s: the page held at or above it, then heard the line move on", truth)
}
