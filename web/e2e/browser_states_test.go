package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/jmoiron/sqlx"

	"waitingroom/server/challenge"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// axeSource returns axe-core's axe.min.js: $AXE_PATH, or the copy that
// .ci/run installs with npm under .cache/axe (gitignored; see
// .ci/axe). A missing copy skips the test locally and fails it in CI.
func axeSource(t *testing.T) string {
	t.Helper()
	p := os.Getenv("AXE_PATH")
	if p == "" {
		p = filepath.Join(repoRoot, ".cache", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		servicetest.Missing(t, "axe-core (to get it: bash .ci/axe; or set AXE_PATH)", err)
	}
	return string(b)
}

// axeCheck runs axe-core on the tab's page and fails the test on any
// serious or critical violation but those of the rules in except.
func axeCheck(t *testing.T, tab context.Context, axe, what string, except ...string) {
	t.Helper()
	if _, err := chromedp.Run(tab, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
		t.Fatalf("%s: inject axe-core: %v", what, err)
	}
	skip, _ := json.Marshal(append([]string{}, except...))
	run := `axe.run(document, {resultTypes: ["violations"]}).then(function (r) {
		var except = ` + string(skip) + `;
		return JSON.stringify(r.violations.filter(function (v) { return (v.impact === "serious" || v.impact === "critical") && except.indexOf(v.id) < 0; })
			.map(function (v) { return v.id + " (" + v.impact + "): " + v.nodes.map(function (n) { return n.target.join(" ") + " " + n.failureSummary; }).join("; "); }));
	})`
	out, err := chromedp.Run(tab, chromedp.Evaluate[string](run, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: run axe-core: %v", what, err)
	}
	var violations []string
	if err := json.Unmarshal([]byte(out), &violations); err != nil {
		t.Fatalf("%s: axe-core answered %q", what, out)
	}
	for _, v := range violations {
		t.Errorf("%s: %s", what, v)
	}
}

// stubs answers the position of stubbed rooms, in front of the real
// server: the states that need a broken dependency (429, 503, a stream
// that fails), a long absence, a skewed server clock or a line moving on
// cue are served as the HTTP contract names them, to the real page and its
// real script. Every other request goes to the real server.
type stubs struct {
	mu sync.Mutex
	// enter answers the enter POST of a room: a status and a body.
	enter map[string]func() (int, string)
	// events are the SSE events of a room, sent in order, spaced by gap.
	events map[string][]func() string
	gap    time.Duration
}

// startStubs serves stubs in front of the real server at base, and
// returns them and their URL.
func startStubs(t *testing.T, base string) (*stubs, string) {
	t.Helper()
	st := &stubs{enter: map[string]func() (int, string){}, events: map[string][]func() string{}, gap: 300 * time.Millisecond}
	front := &http.Server{Handler: st.handler(base)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go front.Serve(ln)
	t.Cleanup(func() { front.Close() })
	return st, "http://" + ln.Addr().String()
}

func (s *stubs) handler(real string) http.Handler {
	target, _ := url.Parse(real)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		s.mu.Lock()
		var enter func() (int, string)
		var events []func() string
		switch {
		case len(parts) == 4 && parts[0] == "api" && parts[3] == "queue" && r.Method == "POST":
			enter = s.enter[parts[2]]
		case len(parts) == 5 && parts[0] == "api" && parts[4] == "position":
			enter = s.enter[parts[2]]
		case len(parts) == 3 && parts[0] == "r" && parts[2] == "events":
			events = s.events[parts[1]]
		}
		gap := s.gap
		s.mu.Unlock()
		switch {
		case enter != nil:
			status, body := enter()
			w.Header().Set("Content-Type", "application/json")
			if status == 429 || status == 503 {
				w.Header().Set("Retry-After", "30")
			}
			w.WriteHeader(status)
			io.WriteString(w, body)
		case events != nil:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-store")
			for _, ev := range events {
				io.WriteString(w, ev())
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(gap):
				}
			}
			<-r.Context().Done() // hold the stream: no reconnect
		default:
			proxy.ServeHTTP(w, r)
		}
	})
}

// stubPosition is a Position JSON with the contract's names; serverTime is
// now, and at(d) is now+d in unix ms.
func stubPosition(fields map[string]any) string {
	p := map[string]any{"status": "WAITING", "rank": 0, "ticket": 1, "currentTotalWaitingCount": 1,
		"estimatedWaitSeconds": nil, "pollingIntervalSeconds": 1, "entryToken": nil, "soldOut": false,
		"phase": "open", "serverTime": time.Now().UnixMilli()}
	for k, v := range fields {
		p[k] = v
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func at(d time.Duration) int64 { return time.Now().Add(d).UnixMilli() }

func sseEvent(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// pageState is one state a buyer can see, and how to bring a tab to it.
type pageState struct {
	name string
	// stub, when set, serves the room's position (see stubs).
	stub func() string
	// status and body answer the enter POST instead (an error).
	status int
	// events, when set, are the room's SSE events (default: one
	// position event from stub).
	events []func() string
	// setup prepares the real room (products, sold out).
	setup func(t *testing.T, name string)
	// path is the page to open (default /r/{room}); pathFor, when set,
	// makes it from the room's name.
	path    string
	pathFor func(room string) string
	// act runs after the page loaded (for example a click).
	act func(t *testing.T, tab context.Context)
	// wait is a JS expression true once the state shows, for each
	// language.
	wait map[string]string
	// real: the state comes from the real server (no stub).
	real bool
	// axeExcept are axe-core rules the state's page breaks by design.
	axeExcept []string
	// settings adjusts the real room (a schedule, a pause, a short pass).
	settings func(s *room.Settings)
}

func rankIs(s string) string {
	return fmt.Sprintf(`(document.getElementById("wr-rank")||{}).textContent === %q`, s)
}

// introIs is true when the lead line says s, or is hidden when s is "".
func introIs(s string) string {
	if s == "" {
		return ` && document.getElementById("wr-intro").hidden`
	}
	return fmt.Sprintf(` && !document.getElementById("wr-intro").hidden && document.getElementById("wr-intro").textContent.indexOf(%q) >= 0`, s)
}

func textHas(s string) string {
	return fmt.Sprintf(`document.body.innerText.indexOf(%q) >= 0`, s)
}

// TestBrowserEveryStateIsAccessible brings a real page to every state a
// buyer can be in, in Korean and English and in the light and dark colour
// schemes. On each it runs axe-core (no serious or critical violation)
// and takes screenshots at 390×844 and 1280×800 into artifacts/e2e/states.
// Every state the real server can produce comes from it (a schedule in
// the future, the past or around now, a paused room, a short pass). Only
// these are stubbed: too-many (429) and trouble (503), which need a broken
// or overloaded dependency, reconnecting, which needs the stream to fail
// mid-way, and rank-up, which needs a buyer away for longer than the
// shortest return window (60 s) per language and scheme (the whole-event
// test drives a real absence).
func TestBrowserEveryStateIsAccessible(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel() // alongside the whole-event test's long wait (see there)
	axe := axeSource(t)
	alloc := browser(t)
	const secret = "e2e-states-secret-key-0123456789"
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-secret-key", secret)
	st, proxied := startStubs(t, base)
	ctx := context.Background()
	keys, err := challenge.Derive([]byte(secret), eng.Namespace())
	if err != nil {
		t.Fatal(err)
	}
	// waitPath is the no-JavaScript join's wait page of a token due after
	// d (before it, when negative).
	waitPath := func(d time.Duration) func(string) string {
		return func(name string) string {
			return "/r/" + name + "/wait?w=" + url.QueryEscape(keys.SignWait(challenge.NewWait(name, "127.0.0.0/24", time.Now().Add(d))))
		}
	}

	shop := "https://shop.example/sale"
	newRoom := func(t *testing.T, mut func(*room.Settings)) string {
		name := servicetest.RoomName(t, rdb)
		set := room.Defaults(name)
		set.Title, set.ShopURL, set.MaxPerBuyer = "Black Friday", shop, 2
		if mut != nil {
			mut(&set)
		}
		if err := eng.SaveRoom(ctx, name, set); err != nil {
			t.Fatal(err)
		}
		return name
	}
	withProduct := func(stock int64) func(t *testing.T, name string) {
		return func(t *testing.T, name string) { addProduct(t, name, "Limited sneakers", 129000, stock) }
	}
	states := []pageState{
		// The schedule's refusal of an early enter: 409 not_open with the
		// times (the SSE connect answers the same).
		{name: "not-open", real: true, settings: schedule(time.Hour, 2*time.Hour, 0), wait: map[string]string{"en": rankIs("Not open yet") + ` && document.getElementById("wr-count").textContent.indexOf("Opens in") === 0` + introIs(""),
			"ko": rankIs("아직 열리지 않았습니다") + introIs("")}},
		{name: "prequeue", real: true, settings: schedule(-time.Minute, 15*time.Minute, 0), wait: map[string]string{"en": rankIs("You are in the pre-queue") + introIs("drawn at random at the opening"),
			"ko": rankIs("사전 대기열에 들어오셨습니다") + introIs("무작위로 추첨")}},
		// The opening is due and the draw has not landed yet.
		{name: "draw-due", stub: func() string {
			return stubPosition(map[string]any{"status": "PREQUEUED", "phase": "prequeue", "ticket": 7, "opensAt": at(-time.Second)})
		}, wait: map[string]string{"en": `document.getElementById("wr-count").textContent === "Drawing places now…"`,
			"ko": `document.getElementById("wr-count").textContent === "지금 순서를 추첨하고 있습니다…"`}},
		{name: "waiting", real: true, setup: func(t *testing.T, name string) {
			// Twenty are ahead, and the line barely moves (one in 100 s):
			// the looks, which may start minutes after this on a loaded
			// machine, still have people ahead of them.
			for range 20 {
				ahead, _ := visitor.NewID()
				if _, err := eng.Enter(ctx, name, ahead); err != nil {
					t.Fatal(err)
				}
			}
		}, wait: map[string]string{"en": `/ahead of you$/.test(document.getElementById("wr-rank").textContent)` + introIs("a few at a time"),
			"ko": `/^내 앞에/.test(document.getElementById("wr-rank").textContent)` + introIs("몇 명씩")}},
		// A paused line says the buyer's own place (each of the four tabs is
		// a buyer of its own, one behind the other), and no lead line (nobody
		// is let in).
		{name: "paused", real: true, settings: func(s *room.Settings) { s.Paused = true }, setup: func(t *testing.T, name string) {
			ahead, _ := visitor.NewID()
			if _, err := eng.Enter(ctx, name, ahead); err != nil {
				t.Fatal(err)
			}
		}, wait: map[string]string{"en": rankIs("The line is paused") + ` && /^\d+ (person|people) ahead of you$/.test(document.getElementById("wr-eta").textContent)` + introIs(""),
			"ko": rankIs("대기열이 잠시 멈췄습니다") + ` && /^내 앞에 \d+명이 있습니다$/.test(document.getElementById("wr-eta").textContent)`}},
		{name: "rank-up", events: []func() string{
			func() string {
				return sseEvent("position", stubPosition(map[string]any{"rank": 5, "estimatedWaitSeconds": 10}))
			},
			func() string {
				return sseEvent("position", stubPosition(map[string]any{"rank": 7, "estimatedWaitSeconds": 14, "rankUpReason": "returned"}))
			},
		}, stub: func() string { return stubPosition(map[string]any{"rank": 5, "estimatedWaitSeconds": 10}) },
			wait: map[string]string{"en": textHas("joined it again at the end"), "ko": textHas("줄의 맨 뒤에서")}},
		{name: "ready", real: true, setup: withProduct(100),
			wait: map[string]string{"en": rankIs("It is your turn!") + " && " + textHas("valid for 5 min") + introIs(""),
				"ko": rankIs("입장 차례입니다!") + " && " + textHas("5분 동안 유효합니다")}},
		// A gate room: the turn sends the buyer on to the shop's checkout.
		{name: "ready-gate", real: true, settings: func(s *room.Settings) {
			s.Gate.TargetURL, s.ShopName = "https://shop.example/checkout", "Hanbit Mall"
		}, wait: map[string]string{"en": rankIs("It is your turn!") + ` && /Continue to Hanbit Mall/.test(document.body.innerText)`,
			"ko": rankIs("입장 차례입니다!") + ` && /Hanbit Mall에서 구매 계속하기/.test(document.body.innerText)`}},
		// A 55 s pass: under a minute from the start.
		{name: "pass-countdown", real: true, settings: func(s *room.Settings) { s.TokenTTLSeconds = 55 }, setup: withProduct(100),
			wait: map[string]string{"en": textHas("Less than a minute left"), "ko": textHas("1분도 남지 않았습니다")}},
		// The shortest pass (10 s) runs out on the page.
		{name: "pass-expired", real: true, settings: func(s *room.Settings) { s.TokenTTLSeconds = room.MinTokenTTL }, setup: withProduct(100),
			wait: map[string]string{"en": rankIs("Your pass has expired") + ` && document.getElementById("wr-join").classList.contains("show")` +
				" && " + textHas("Passes are held for 10 s") + introIs(""),
				"ko": rankIs("입장권이 만료되었습니다") + " && " + textHas("입장권은 10초 동안만")}},
		{name: "pass-expired-after-click", real: true, setup: withProduct(100), act: func(t *testing.T, tab context.Context) {
			// A pass that ran out between the page and the click.
			if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("wr-order")),
				chromedp.Evaluate[chromedp.Void](`document.getElementById("wr-token").value = "`+strings.Repeat("B", 43)+`"`),
				chromedp.Click(chromedp.CSS("#wr-order button"))); err != nil {
				t.Fatal(err)
			}
		}, wait: map[string]string{"en": textHas("Join the line again"), "ko": textHas("다시 줄 서기")}},
		{name: "confirmation", real: true, setup: withProduct(100), act: func(t *testing.T, tab context.Context) {
			if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.ID("wr-order")), chromedp.Click(chromedp.CSS("#wr-order button"))); err != nil {
				t.Fatal(err)
			}
		}, wait: map[string]string{"en": `!!document.querySelector(".order-id")`, "ko": `!!document.querySelector(".order-id")`}},
		{name: "sold-out", real: true, setup: func(t *testing.T, name string) {
			addProduct(t, name, "Limited sneakers", 129000, 0)
			if err := eng.SetSoldOut(ctx, name, true); err != nil {
				t.Fatal(err)
			}
		}, wait: map[string]string{"en": rankIs("Sold out") + introIs(""), "ko": rankIs("품절")}},
		// Closed an hour ago: the enter is refused with 409 sale_ended.
		{name: "ended", real: true, settings: schedule(-3*time.Hour, -2*time.Hour, -time.Hour),
			wait: map[string]string{"en": rankIs("This sale has ended") + introIs(""), "ko": rankIs("판매가 종료되었습니다")}},
		{name: "wrong-link", real: true, path: "/r/no-such-room-e2e",
			wait: map[string]string{"en": textHas("This link does not lead to a waiting room"), "ko": textHas("이 링크의 대기실을 찾을 수 없습니다")}},
		// The no-JavaScript join of a room that asks a proof of work: the
		// short wait, then the join form.
		// Its meta refresh is the page's own way on without JavaScript
		// (axe's meta-refresh, WCAG 2.2.1): the page holds no input to
		// lose, and a link refreshes it by hand.
		{name: "wait", real: true, pathFor: waitPath(90 * time.Second), axeExcept: []string{"meta-refresh"},
			wait: map[string]string{"en": `/^Please wait 1 min \d+ s\.$/.test(document.getElementById("wr-wait").textContent)`,
				"ko": `/기다려 주세요/.test(document.getElementById("wr-wait").textContent)`}},
		{name: "wait-due", real: true, pathFor: waitPath(-time.Second),
			wait: map[string]string{"en": textHas("You can join the line now.") + ` && !!document.querySelector("#wr-join button")`,
				"ko": textHas("이제 줄을 설 수 있습니다.")}},
		{name: "too-many", status: 429,
			wait: map[string]string{"en": rankIs("Too many requests"), "ko": rankIs("요청이 너무 많습니다")}},
		{name: "trouble", status: 503,
			wait: map[string]string{"en": rankIs("We are having trouble"), "ko": rankIs("일시적인 문제가 발생했습니다")}},
		// A room that asks a proof of work whose challenge cannot be had
		// (the stub's 428, then the real room's 404 challenge_off): the
		// page says the place could not be prepared, and tries again.
		{name: "unproved", status: 428, stub: func() string {
			return `{"error":"challenge_required","message":"stub","challenge":"/api/rooms/stub/challenge"}`
		}, wait: map[string]string{"en": rankIs("Your place could not be prepared"), "ko": rankIs("자리를 준비하지 못했습니다")}},
		{name: "reconnecting", events: []func() string{
			func() string {
				return sseEvent("position", stubPosition(map[string]any{"rank": 3, "estimatedWaitSeconds": 6}))
			},
			func() string { return sseEvent("outage", "{}") },
		}, stub: func() string { return stubPosition(map[string]any{"rank": 3, "estimatedWaitSeconds": 6}) },
			wait: map[string]string{"en": `document.getElementById("wr-conn").textContent === "Reconnecting…"`,
				"ko": `document.getElementById("wr-conn").textContent === "다시 연결 중…"`}},
	}
	for _, s := range states {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel() // each state has a room of its own
			name := newRoom(t, func(set *room.Settings) {
				if s.name == "waiting" || s.name == "paused" {
					// One admission per 100 s, and the buyers ahead (who
					// never open a page) are never counted as gone: the
					// line stays however long a look waits for its turn.
					set.Rate, set.AbandonAfterSeconds = room.MinRate, 0
				}
				if s.settings != nil {
					s.settings(set)
				}
			})
			if s.setup != nil {
				s.setup(t, name)
			}
			st.mu.Lock()
			switch {
			case s.status != 0:
				st.enter[name] = func() (int, string) {
					if s.stub != nil {
						return s.status, s.stub()
					}
					return s.status, `{"error":"unavailable","message":"stub"}`
				}
				st.events[name] = []func() string{} // the stream is never reached
			case s.stub != nil:
				st.enter[name] = func() (int, string) { return 200, s.stub() }
				st.events[name] = s.events
				if s.events == nil {
					st.events[name] = []func() string{func() string { return sseEvent("position", s.stub()) }}
				}
			}
			st.mu.Unlock()
			for _, lang := range []string{"en", "ko"} {
				for _, scheme := range []string{"light", "dark"} {
					what := s.name + "-" + lang + "-" + scheme
					// The four looks of a state are four visitors, each
					// with its own tab and cookie jar, run side by side:
					// most of a look's time is waiting on the page.
					t.Run(lang+"-"+scheme, func(t *testing.T) {
						t.Parallel()
						// The path is made when the look starts: a wait
						// page's token counts from now.
						path := orDefault(s.path, "/r/"+name)
						if s.pathFor != nil {
							path = s.pathFor(name)
						}
						tab := stateTab(t, alloc, lang, scheme)
						if err := chromedp.Do(tab, chromedp.Navigate(proxied+path)); err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						if s.act != nil {
							s.act(t, tab)
						}
						err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](s.wait[lang], chromedp.WithPollingTimeout(15*time.Second)))
						for i := 0; err != nil && navigatedAway(err) && i < 5; i++ {
							// The act navigated (a form post): wait on the new page.
							time.Sleep(100 * time.Millisecond)
							err = chromedp.Do(tab, chromedp.Poll[chromedp.Void](s.wait[lang], chromedp.WithPollingTimeout(15*time.Second)))
						}
						if err != nil {
							text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
							t.Fatalf("%s: the state did not show: %v\npage: %s", what, err, text)
						}
						axeCheck(t, tab, axe, what, s.axeExcept...)
						shot(t, tab, what, 390, 844)
						shot(t, tab, what, 1280, 800)
					})
				}
			}
		})
	}
}

// schedule sets a room's pre-queue, opening and (unless 0) closing times,
// each relative to now.
func schedule(prequeue, opens, closes time.Duration) func(s *room.Settings) {
	return func(s *room.Settings) {
		now := time.Now()
		pq, op := now.Add(prequeue), now.Add(opens)
		s.PrequeueAt, s.OpensAt = &pq, &op
		if closes != 0 {
			cl := now.Add(closes)
			s.ClosesAt = &cl
		}
	}
}

// navigatedAway reports whether err is a poll cut short by a navigation:
// the page's frame, or its JavaScript context, went away meanwhile (on a
// loaded machine the form post can land between two evaluations).
func navigatedAway(err error) bool {
	return strings.Contains(err.Error(), "navigated") || strings.Contains(err.Error(), "Cannot find context with specified id")
}

func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// tabBound ends a hung tab. It is a bound, not a speed: the operator's day
// keeps one tab for its whole story, 1 to 3 minutes on a loaded 2-core
// machine and more beside a build, so the bound is far above that, and
// below the package's -timeout, which would end the run with no word of
// which step hung.
const tabBound = 10 * time.Minute

// stateTab opens a tab with a cookie jar of its own, in lang and scheme.
func stateTab(t *testing.T, alloc context.Context, lang, scheme string) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	return langTab(t, tab, lang, scheme)
}

// langTab sets up tab in lang and scheme, with axe-core allowed past the
// page's CSP, for at most tabBound.
func langTab(t *testing.T, tab context.Context, lang, scheme string) context.Context {
	t.Helper()
	tab, cancelT := context.WithTimeout(tab, tabBound)
	t.Cleanup(cancelT)
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		t.Fatal(err)
	}
	// axe-core is injected through DevTools, past the page's CSP.
	if _, err := chromedp.Call(tab, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return tab
}

// stubbedRoom starts a browser and the real server behind stubs, with a
// room of default settings whose positions the test stubs.
func stubbedRoom(t *testing.T) (alloc context.Context, st *stubs, proxied, name string) {
	t.Helper()
	alloc = browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	st, proxied = startStubs(t, base)
	name = servicetest.RoomName(t, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	return alloc, st, proxied, name
}

// TestBrowserLiveRegionIsCalm: the live region announces the first place,
// then no rank change for 30 s however often the line moves, and the turn
// at once.
func TestBrowserLiveRegionIsCalm(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc, st, proxied, name := stubbedRoom(t)
	rankAt := func(r int) func() string {
		return func() string {
			return sseEvent("position", stubPosition(map[string]any{"rank": r, "estimatedWaitSeconds": r, "currentTotalWaitingCount": 30}))
		}
	}
	var events []func() string
	for r := 19; r >= 10; r-- {
		events = append(events, rankAt(r))
	}
	readyAt := make(chan time.Time, 1)
	events = append(events, func() string {
		readyAt <- time.Now()
		return sseEvent("ready", stubPosition(map[string]any{"status": "READY", "entryToken": strings.Repeat("A", 43)}))
	})
	st.mu.Lock()
	st.enter[name] = func() (int, string) {
		return 200, stubPosition(map[string]any{"rank": 20, "currentTotalWaitingCount": 30})
	}
	st.events[name] = events
	st.gap = 200 * time.Millisecond
	st.mu.Unlock()

	tab := stateTab(t, alloc, "en", "light")
	// Every text the live region takes, from the first.
	record := `document.addEventListener("DOMContentLoaded", function () {
		window.__said = [];
		var live = document.getElementById("wr-live");
		new MutationObserver(function () { window.__said.push([Date.now(), live.textContent]); })
			.observe(live, {childList: true, characterData: true, subtree: true});
	});`
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: record}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(proxied+"/r/"+name), chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
		t.Fatal(err)
	}
	var said [][2]any
	raw, err := chromedp.Run(tab, chromedp.Evaluate[string](`JSON.stringify(window.__said)`))
	if err == nil {
		err = json.Unmarshal([]byte(raw), &said)
	}
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, s := range said {
		texts = append(texts, fmt.Sprint(s[1]))
	}
	// The rank went from 20 to 10 in 2 s: said once; then the turn.
	if len(texts) != 2 || texts[0] != "20 people ahead of you" || texts[1] != "It is your turn!" {
		t.Fatalf("the live region said %q; want the first place, then the turn", texts)
	}
	ready := <-readyAt
	// At once, not held back by the calm: the calm would hold it for the
	// rest of its 30 s (the bound is wide, for a loaded machine).
	if at := time.UnixMilli(int64(said[1][0].(float64))); at.Sub(ready) > 10*time.Second {
		t.Fatalf("the turn was announced %v after it came", at.Sub(ready))
	}
}

// TestBrowserWithoutJavaScript uses the room with JavaScript off: the page
// shows no "connecting", one heading and the join button; joining keeps
// the link's utm_* fields through the status page to the order, and the
// order is placed.
func TestBrowserWithoutJavaScript(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel() // alongside the whole-event test's long wait (see there)
	axe := axeSource(t)
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Title = "No script"
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	addProduct(t, name, "Limited sneakers", 129000, 5)
	db, err := sqlx.Open("postgres", orderDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	for _, lang := range []string{"en", "ko"} {
		tab := stateTab(t, alloc, lang, "light")
		if err := chromedp.Do(tab, chromedp.Navigate(base+"/r/"+name+"?utm_source=nojs-"+lang+"&utm_campaign=bf")); err != nil {
			t.Fatal(err)
		}
		// axe-core runs on the page before scripts are turned off; the
		// page itself is then reloaded without them.
		axeCheck(t, tab, axe, "room-"+lang)
		if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#wr-join button"))); err != nil {
			t.Fatal(err)
		}
		text, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "Connecting") || strings.Contains(text, "연결 중") {
			t.Errorf("%s: without JavaScript the page says %q", lang, text)
		}
		headings, _ := chromedp.Run(tab, chromedp.Evaluate[int](`Array.prototype.filter.call(document.querySelectorAll("h1,h2,h3"), function (h) { return h.offsetParent !== null; }).length`))
		if headings != 1 {
			t.Errorf("%s: %d visible headings without JavaScript, want 1", lang, headings)
		}
		shot(t, tab, "nojs-room-"+lang, 390, 844)
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#wr-join button")), chromedp.WaitVisible(chromedp.ID("wr-order"))); err != nil {
			text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`location.href + " " + document.body.innerText`))
			t.Fatalf("%s: joining without JavaScript: %v (page %q)", lang, err, text)
		}
		utm, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('#wr-order input[name="utm_source"]').value`))
		if utm != "nojs-"+lang {
			t.Fatalf("%s: utm_source %q on the status page's order form", lang, utm)
		}
		headings, _ = chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("h1,h2,h3").length`))
		if headings != 1 {
			t.Errorf("%s: %d headings on the status page, want 1", lang, headings)
		}
		shot(t, tab, "nojs-ready-"+lang, 390, 844)
		// The status page runs no script of its own: axe-core may run on it
		// once scripts are allowed again, without a reload.
		if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
			t.Fatal(err)
		}
		// Its one refresh is at the pass's end, a time limit the sale sets
		// (WCAG 2.2.1's essential exception), to say that the pass ran out.
		axeCheck(t, tab, axe, "nojs-ready-"+lang, "meta-refresh")
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#wr-order button")), chromedp.WaitVisible(chromedp.CSS(".order-id"))); err != nil {
			t.Fatalf("%s: ordering without JavaScript: %v", lang, err)
		}
		var src string
		if err := db.Get(&src, `SELECT utm_source FROM orders WHERE room = $1 AND utm_source = $2`, name, "nojs-"+lang); err != nil {
			t.Fatalf("%s: the order did not keep utm_source: %v", lang, err)
		}
	}
}

// shot saves the tab's page at width×height into
// artifacts/e2e/states/{name}-{width}x{height}.png.
func shot(t *testing.T, tab context.Context, name string, width, height int64) {
	t.Helper()
	shotIn(t, tab, "states", name, width, height)
}

// shotIn saves the tab's page at width×height into
// artifacts/e2e/{folder}/{name}-{width}x{height}.png.
func shotIn(t *testing.T, tab context.Context, folder, name string, width, height int64) {
	t.Helper()
	dir := filepath.Join(servicetest.ArtifactDir(t, "e2e"), folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatalf("%s: viewport: %v", name, err)
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%dx%d.png", name, width, height)), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserCountsDownFromTheServerClock: the server's clock is an hour
// ahead of the browser's. The page counts down from serverTime, so it
// joins the pre-queue 20 seconds later, when the server opens the line,
// not an hour later. The 20 s are jumped: the stand-in server's clock
// (a JumpClock) and the page's (withPageClock) move together.
func TestBrowserCountsDownFromTheServerClock(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc, st, proxied, name := stubbedRoom(t)
	skew := time.Hour
	clk := servicetest.NewJumpClock()
	serverNow := func() int64 { return clk.Now().Add(skew).UnixMilli() }
	// The line opens in 20 s: the page has loaded and counts down well
	// before, even on a loaded machine.
	lineOpens := serverNow() + 20_000
	opens := lineOpens + 600_000
	var refused, joinedAt int64
	var mu sync.Mutex
	st.mu.Lock()
	st.enter[name] = func() (int, string) {
		mu.Lock()
		defer mu.Unlock()
		if serverNow() < lineOpens {
			refused++
			b, _ := json.Marshal(map[string]any{"error": "not_open", "message": "not yet", "prequeueAt": lineOpens, "opensAt": opens, "serverTime": serverNow()})
			return 409, string(b)
		}
		if joinedAt == 0 {
			joinedAt = serverNow()
		}
		return 200, stubPosition(map[string]any{"status": "PREQUEUED", "phase": "prequeue", "ticket": 3, "opensAt": opens, "serverTime": serverNow()})
	}
	st.events[name] = []func() string{func() string {
		return sseEvent("position", stubPosition(map[string]any{"status": "PREQUEUED", "phase": "prequeue", "ticket": 3, "opensAt": opens, "serverTime": serverNow()}))
	}}
	st.mu.Unlock()
	tab := stateTab(t, alloc, "en", "light")
	withPageClock(t, tab)
	if err := chromedp.Do(tab, chromedp.Navigate(proxied+"/r/"+name), chromedp.Poll[chromedp.Void](rankIs("Not open yet"), chromedp.WithPollingTimeout(18*time.Second))); err != nil {
		t.Fatal(err)
	}
	if serverNow() >= lineOpens {
		t.Fatal("the page showed only after the line opened (the machine is too slow for this schedule)")
	}
	// The countdown reads the time to the opening by the server's clock
	// (within a second of it, either side of the read), not an hour more.
	left := func() int64 { return (opens - serverNow()) / 1000 }
	most := left() + 1
	count, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("wr-count")))
	least := left() - 1
	var mins, secs int64
	if _, err := fmt.Sscanf(count, "Opens in %d min %d s", &mins, &secs); err != nil || mins*60+secs < least || mins*60+secs > most {
		t.Errorf("countdown %q, want %d to %d s by the server's clock", count, least, most)
	}
	// Both clocks a second past the line's opening. Within 10 s: under
	// the 20 s that the real time would take.
	jump := time.Duration(lineOpens-serverNow())*time.Millisecond + time.Second
	clk.Jump(jump)
	tickPage(t, tab, jump)
	if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](rankIs("You are in the pre-queue"), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the page did not join when the line opened: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// Joined when the server's line opened, not an hour later by the
	// browser's clock (the bound is wide, for a loaded machine).
	if late := time.Duration(joinedAt-lineOpens) * time.Millisecond; late < 0 || late > 10*time.Second || refused > 3 {
		t.Fatalf("joined %v after the line opened, after %d refusals", late, refused)
	}
}

// TestBrowserSilentStreamAsksOnce: the stream opens, says the buyer waits,
// then falls silent while the buyer's turn comes (a ready event lost on
// the way, as the gate drill saw a few times in 5,000). The page asks the
// position API after 15 s of silence and shows the turn. The 15 s are
// the page clock's (withPageClock): moved 20 s at once, they run the
// page's watchdog, which looks every 5 s.
func TestBrowserSilentStreamAsksOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel()
	alloc, st, proxied, name := stubbedRoom(t)
	var polls atomic.Int32
	st.mu.Lock()
	st.enter[name] = func() (int, string) {
		// The enter says WAITING behind one; every later ask (the
		// position API) READY.
		if polls.Add(1) == 1 {
			return 200, stubPosition(map[string]any{"rank": 1})
		}
		return 200, stubPosition(map[string]any{"status": "READY", "entryToken": strings.Repeat("A", 43)})
	}
	// The stream's one event: next in line.
	st.events[name] = []func() string{func() string { return sseEvent("position", stubPosition(map[string]any{"rank": 0})) }}
	st.mu.Unlock()
	tab := stateTab(t, alloc, "en", "light")
	withPageClock(t, tab)
	// "You are next" is the stream's event: the stream is open and heard,
	// and nothing was asked since the enter.
	if err := chromedp.Do(tab, chromedp.Navigate(proxied+"/r/"+name),
		chromedp.Poll[chromedp.Void](rankIs("You are next"), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the waiting page never showed: %v\npage: %s", err, text)
	}
	if n := polls.Load(); n != 1 {
		t.Fatalf("%d asks of the enter/position API before the silence, want 1 (the enter)", n)
	}
	// Within 10 s: under the 15 s that the real time would take to run
	// the watchdog, so that the page clock's move is what did it.
	tickPage(t, tab, 20*time.Second)
	if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](rankIs("It is your turn!"), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("the turn never showed after 20 s of silence: %v\npage: %s", err, text)
	}
	if n := polls.Load(); n != 2 {
		t.Fatalf("%d asks of the enter/position API, want 2 (the enter, then one ask after the silence)", n)
	}
}
