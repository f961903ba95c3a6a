package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

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
      try { var p = JSON.parse(e.data); window.__log.push(["event", performance.now(), p.rank, p.pace || 0]); } catch (x) {}
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
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title = "Countdown"
	set.Rate = room.MinRate // the line forms first: nobody moves yet
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	// 2,000 ahead: at 20 a second the front is 200 ranks, so the page
	// hears every 11 ticks and counts down between.
	for range 2000 {
		v, _ := visitor.NewID()
		if _, err := eng.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tctx, tcancel := context.WithTimeout(tab, 90*time.Second)
	t.Cleanup(tcancel)
	err := chromedp.Do(tctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: countdownRecorder})
			return err
		}),
		chromedp.Navigate(base+"/r/"+name),
		waitText("2,000 people ahead of you"),
	)
	if err != nil {
		t.Fatalf("the page never showed its place: %v", err)
	}
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
