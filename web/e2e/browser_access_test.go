package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"waitingroom/server/identity/identitytest"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// accessRoom saves room name with the least rate, so that every visitor
// waits, its access set by mut.
func accessRoom(t *testing.T, eng *queue.Engine, name string, mut func(*room.Settings)) {
	t.Helper()
	set := room.Defaults(name)
	set.Rate = room.MinRate
	set.Challenge = room.ChallengeOff
	mut(&set)
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
}

// presaleCodes makes n single-use codes of room name's presale line
// through the admin API of the server at base.
func presaleCodes(t *testing.T, base, name string, n int) []string {
	t.Helper()
	status, body := adminCall(t, "POST", base+"/api/admin/rooms/"+name+"/codes", fmt.Sprintf(`{"count":%d,"uses":1,"line":"presale"}`, n))
	var gen struct{ Codes []string }
	if err := json.Unmarshal([]byte(body), &gen); status != 201 || err != nil || len(gen.Codes) != n {
		t.Fatalf("generate codes: %d %s", status, body)
	}
	return gen.Codes
}

// waitSays waits until the page's text holds want.
func waitSays(t *testing.T, tab context.Context, what, want string) {
	t.Helper()
	js := `!!document.body && document.body.innerText.indexOf(` + jsString(want) + `) >= 0`
	if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("%s: never said %q: %v\n%s", what, want, err, pageText(t, tab))
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBrowserAccessCodeRoom: a presale room's page asks for the access
// code; a wrong code, then a used-up one, are refused saying why in the
// buyer's language, and a right one joins the line. axe-core checks the
// form, each refusal and the place, in English and Korean.
func TestBrowserAccessCodeRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe := axeSource(t)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken)
	waitReady(t, base)
	name := servicetest.RoomName(t, rdb)
	accessRoom(t, eng, name, func(s *room.Settings) { s.Access.Access = room.AccessCode })
	codes := presaleCodes(t, base, name, 2)
	steps := []struct {
		lang, code, says string
		joins            bool
	}{
		{"en", "WRONG-CODE-1", "This access code is not valid", false},
		{"en", codes[0], "", true},
		{"ko", codes[0], "허용된 횟수만큼 이미 사용", false},
		{"ko", codes[1], "", true},
	}
	tabs := map[string]context.Context{}
	for i, s := range steps {
		tab := tabs[s.lang]
		if tab == nil {
			tab = stateTab(t, alloc, s.lang, "light")
			tabs[s.lang] = tab
			if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name), chromedp.WaitVisible(chromedp.ID("wr-code"))); err != nil {
				t.Fatalf("%s: the code field: %v\n%s", s.lang, err, pageText(t, tab))
			}
			axeCheck(t, tab, axe, "code form "+s.lang)
			shotIn(t, tab, "access", "code-form-"+s.lang, 390, 844)
		}
		if err := chromedp.Do(tab, chromedp.SetValue(chromedp.ID("wr-code"), s.code), chromedp.Click(chromedp.CSS("#wr-join button"))); err != nil {
			t.Fatalf("step %d: submit: %v", i, err)
		}
		if s.joins {
			if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](inLine, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("step %d: never in line: %v\n%s", i, err, pageText(t, tab))
			}
			axeCheck(t, tab, axe, "in line "+s.lang)
			continue
		}
		waitSays(t, tab, "step "+s.lang, s.says)
		axeCheck(t, tab, axe, "refused "+s.lang)
		shotIn(t, tab, "access", "code-refused-"+s.lang, 390, 844)
		focused, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.activeElement.id`))
		if err != nil || focused != "wr-code" {
			t.Errorf("step %d: focus on %q, want the code field", i, focused)
		}
	}
	st, err := eng.Stats(context.Background(), name)
	if err != nil || st.Waiting != 2 {
		t.Fatalf("the line: %+v %v, want the two code holders", st, err)
	}
}

// TestBrowserLinesRoom: a room with a presale line for code holders and
// a general line open to all offers the code field without requiring
// it, in English and Korean (axe-core checks the form and the place):
// a buyer without a code joins the general line, one with a code the
// presale line.
func TestBrowserLinesRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe := axeSource(t)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken)
	waitReady(t, base)
	name := servicetest.RoomName(t, rdb)
	accessRoom(t, eng, name, func(s *room.Settings) {
		s.Lines = []room.Line{{Name: "presale", Share: 0.7, Access: room.LineCode}, {Name: "general", Share: 0.3, Access: room.LineOpen}}
		s.Paused = true // nobody is admitted: each buyer stays in their line
	})
	codes := presaleCodes(t, base, name, 1)
	steps := []struct {
		lang, intro, code, line string
	}{
		{"en", "Without one, you join the line open to everyone", "", "general"},
		{"ko", "코드가 없으면 누구나 서는 줄에 섭니다", codes[0], "presale"},
	}
	for _, st := range steps {
		tab := stateTab(t, alloc, st.lang, "light")
		if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name), chromedp.WaitVisible(chromedp.ID("wr-code"))); err != nil {
			t.Fatalf("%s: the code field: %v\n%s", st.lang, err, pageText(t, tab))
		}
		waitSays(t, tab, "the form "+st.lang, st.intro)
		axeCheck(t, tab, axe, "lines form "+st.lang)
		shotIn(t, tab, "access", "lines-form-"+st.lang, 390, 844)
		var join []chromedp.Action[chromedp.Void]
		if st.code != "" {
			join = append(join, chromedp.SetValue(chromedp.ID("wr-code"), st.code))
		}
		// Paused, the page says so rather than drawing its progress: the
		// place is read from the buyer's position.
		waiting := `(function () { var x = new XMLHttpRequest(); x.open("GET", "/api/rooms/` + name + `/queue/position", false); x.send(); return JSON.parse(x.responseText).status === "WAITING"; })()`
		join = append(join, chromedp.Click(chromedp.CSS("#wr-join button")), chromedp.Poll[chromedp.Void](waiting, chromedp.WithPollingTimeout(20*time.Second)))
		if err := chromedp.Do(tab, join...); err != nil {
			t.Fatalf("%s: never in line: %v\n%s", st.lang, err, pageText(t, tab))
		}
		axeCheck(t, tab, axe, "in a line "+st.lang)
		line, err := chromedp.Run(tab, chromedp.Evaluate[string](`(function () { var x = new XMLHttpRequest(); x.open("GET", "/api/rooms/`+name+`/queue/position", false); x.send(); return JSON.parse(x.responseText).line; })()`))
		if err != nil || line != st.line {
			t.Fatalf("%s: in line %q (%v), want %q", st.lang, line, err, st.line)
		}
	}
}

// TestBrowserIdentityRequired: a members-only room's page says so and
// links the shop's sign-in, in English and Korean (axe-core checks it);
// the shop's link with a signed identity brings the buyer back in line.
func TestBrowserIdentityRequired(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe := axeSource(t)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	waitReady(t, base)
	name := servicetest.RoomName(t, rdb)
	key := identitytest.NewKey(t, "ec", "shop-1")
	const signIn = "https://shop.example/signin?back=drop"
	accessRoom(t, eng, name, func(s *room.Settings) {
		s.Identity, s.IdentityKeys, s.SignInURL = room.IdentityRequired, key.PEM(t), signIn
	})
	for _, c := range []struct{ lang, says string }{
		{"en", "This sale is for signed-in members"},
		{"ko", "로그인한 회원만 참여할 수 있는 판매입니다"},
	} {
		tab := stateTab(t, alloc, c.lang, "dark")
		if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name), chromedp.WaitVisible(chromedp.ID("wr-signin"))); err != nil {
			t.Fatalf("%s: the sign-in link: %v\n%s", c.lang, err, pageText(t, tab))
		}
		waitSays(t, tab, c.lang, c.says)
		href, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("wr-signin").href`))
		if err != nil || href != signIn {
			t.Fatalf("%s: the sign-in link goes to %q, want %q", c.lang, href, signIn)
		}
		axeCheck(t, tab, axe, "identity required "+c.lang)
		shotIn(t, tab, "access", "identity-required-"+c.lang, 390, 844)
		if c.lang != "en" {
			continue
		}
		// Back from the shop's sign-in, with the identity.
		tok := key.Sign(t, identitytest.For(name, "member-42", time.Now(), 10*time.Minute))
		if err := chromedp.Do(tab,
			chromedp.Navigate(base+"/r/"+name+"/identity?token="+url.QueryEscape(tok)),
			chromedp.Poll[chromedp.Void](inLine, chromedp.WithPollingTimeout(20*time.Second)),
		); err != nil {
			t.Fatalf("back with the identity: never in line: %v\n%s", err, pageText(t, tab))
		}
		loc, _ := chromedp.Run(tab, chromedp.Evaluate[string](`location.href`))
		if strings.Contains(loc, "token=") {
			t.Errorf("the room's address keeps the token: %s", loc)
		}
		axeCheck(t, tab, axe, "identified in line")
	}
}

// TestBrowserTestLink: a test link's page says what it does, and its
// button lets the holder in at once; used up, the link says so in Korean.
// axe-core checks each page.
func TestBrowserTestLink(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe := axeSource(t)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken)
	waitReady(t, base)
	name := servicetest.RoomName(t, rdb)
	accessRoom(t, eng, name, func(*room.Settings) {})
	status, body := adminCall(t, "POST", base+"/api/admin/rooms/"+name+"/bypass", `{"uses":1}`)
	var made struct{ URL string }
	if err := json.Unmarshal([]byte(body), &made); status != 201 || err != nil || made.URL == "" {
		t.Fatalf("make a test link: %d %s", status, body)
	}
	en := stateTab(t, alloc, "en", "light")
	if err := chromedp.Do(en, chromedp.Navigate(made.URL), chromedp.WaitVisible(chromedp.CSS("form button"))); err != nil {
		t.Fatalf("the link's page: %v", err)
	}
	waitSays(t, en, "the link's page", "Test link: enter without waiting")
	axeCheck(t, en, axe, "test link")
	shotIn(t, en, "access", "test-link-en", 390, 844)
	if err := chromedp.Do(en, chromedp.Click(chromedp.CSS("form button")), chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
		t.Fatalf("let in: %v", err)
	}
	waitSays(t, en, "let in", "It is your turn")
	// The no-JavaScript status page refreshes itself by design.
	axeCheck(t, en, axe, "let in by a test link", "meta-refresh")
	ko := stateTab(t, alloc, "ko", "dark")
	if err := chromedp.Do(ko, chromedp.Navigate(made.URL), chromedp.WaitVisible(chromedp.CSS("form button")), chromedp.Click(chromedp.CSS("form button")),
		chromedp.WaitVisible(chromedp.CSS("main.error"))); err != nil {
		t.Fatalf("the link in Korean: %v", err)
	}
	waitSays(t, ko, "used up", "허용된 횟수만큼 이미 사용되었습니다")
	axeCheck(t, ko, axe, "test link used up")
	if st, err := eng.Stats(context.Background(), name); err != nil || st.Bypassed != 1 {
		t.Fatalf("stats %+v %v, want one bypassed", st, err)
	}
}
