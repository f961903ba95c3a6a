package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"waitingroom/server/servicetest"
)

// pageClock is the page clock's script, read once: @sinonjs/fake-timers,
// bundled by .ci/pageclock.
var pageClock struct {
	once sync.Once
	src  string
	err  error
}

// pageClockSource returns the page clock's script: $PAGECLOCK_PATH, or the
// bundle .ci/pageclock builds under .cache/pageclock (gitignored).
func pageClockSource(t *testing.T) string {
	t.Helper()
	pageClock.once.Do(func() {
		p := os.Getenv("PAGECLOCK_PATH")
		if p == "" {
			p = filepath.Join(repoRoot, ".cache", "pageclock", "fake-timers.js")
		}
		b, err := os.ReadFile(p)
		pageClock.src, pageClock.err = string(b), err
	})
	if pageClock.err != nil {
		servicetest.Missing(t, "the page clock (to get it: bash .ci/pageclock; or set PAGECLOCK_PATH)", pageClock.err)
	}
	return pageClock.src
}

// withPageClock has every document that tab loads from now on run on a
// page clock: its Date, performance.now and timers are fake ones that run
// on with the real time, and that tickPage moves ahead.
func withPageClock(t *testing.T, tab context.Context) {
	t.Helper()
	src := pageClockSource(t) + `;window.__wrClock = FakeTimers.install({shouldAdvanceTime: true, advanceTimeDelta: 20,
	  toFake: ["Date", "performance", "setTimeout", "clearTimeout", "setInterval", "clearInterval"]});`
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
		t.Fatalf("install the page clock: %v", err)
	}
}

// tickPage moves the page clock of tab's document d ahead, running every
// timer due meanwhile, in order.
func tickPage(t *testing.T, tab context.Context, d time.Duration) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](fmt.Sprintf("window.__wrClock.tick(%d)", d.Milliseconds()))); err != nil {
		t.Fatalf("move the page clock %v: %v", d, err)
	}
}
