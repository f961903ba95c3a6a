package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/servicetest"
)

// TestBrowserConsoleCodes: an operator generates access codes in the
// console and reads them once on the answer, then sees them counted by
// line; axe-core checks the page empty, with new codes and in Korean.
func TestBrowserConsoleCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe := axeSource(t)
	alloc := browser(t)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ServerDB))
	base, _, _ := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken, "-redis-namespace", ownNamespace(t, rdb))
	waitReady(t, base)
	const name = "codes-e2e"
	op := stateTab(t, alloc, "en", "light")
	signInConsole(t, op, base)
	createConsoleRoom(t, op, base, name, "Presale")
	page := base + "/admin/rooms/" + name + "/codes"
	openPage(t, op, page)
	axeCheck(t, op, axe, "codes")
	setValues(t, op, "codes", [][2]string{{"#f-count", "5"}, {"#f-uses", "1"}, {"#f-line", "presale"}})
	if err := chromedp.Do(op, chromedp.Click(chromedp.CSS("form.codes-form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("wr-new-codes"))); err != nil {
		t.Fatalf("generate: %v\n%s", err, pageText(t, op))
	}
	made, err := chromedp.Run(op, chromedp.Evaluate[string](`document.getElementById("wr-new-codes").value`))
	codes := regexp.MustCompile(`[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}`).FindAllString(made, -1)
	if err != nil || len(codes) != 5 {
		t.Fatalf("the new codes %q (%v), want 5", made, err)
	}
	if text := pageText(t, op); !strings.Contains(text, "New codes: 5.") || !strings.Contains(text, "presale") {
		t.Fatalf("after generating:\n%s", text)
	}
	axeCheck(t, op, axe, "codes-new")
	consoleShots(t, op, "codes")

	ko := stateTab(t, alloc, "ko", "dark")
	signInConsole(t, ko, base)
	openPage(t, ko, page)
	if text := pageText(t, ko); !strings.Contains(text, "접근 코드") || strings.Contains(text, codes[0]) {
		t.Fatalf("the Korean page:\n%s", text)
	}
	axeCheck(t, ko, axe, "codes-ko")
	consoleShots(t, ko, "codes-ko")
}
