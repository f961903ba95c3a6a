package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/altcha-org/altcha-lib-go"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// pageRequests records what a tab asked for: the challenge fetches, and
// the enter POSTs with and without X-Altcha.
type pageRequests struct {
	mu                              sync.Mutex
	challenges, proved, plainEnters int
}

// watchRequests records the tab's requests to room's APIs.
func watchRequests(t *testing.T, tab context.Context, room string) *pageRequests {
	t.Helper()
	rec := &pageRequests{}
	err := chromedp.Listen(tab, func(ev any) {
		e, ok := ev.(*network.EventRequestWillBeSent)
		if !ok {
			return
		}
		u, err := url.Parse(e.Request.URL)
		if err != nil {
			return
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		switch {
		case u.Path == "/api/rooms/"+room+"/challenge":
			rec.challenges++
		case u.Path == "/api/rooms/"+room+"/queue" && e.Request.Method == "POST":
			if v, _ := e.Request.Headers["X-Altcha"].(string); v != "" {
				rec.proved++
			} else {
				rec.plainEnters++
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	return rec
}

func (p *pageRequests) counts() (challenges, proved, plain int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.challenges, p.proved, p.plainEnters
}

// enforcedTab is a fresh browser profile's tab in lang, for at most a
// minute, that keeps the page's CSP (unlike stateTab): the solver's
// workers must start under the room page's own policy.
func enforcedTab(t *testing.T, alloc context.Context, lang string) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tab, cancelT := context.WithTimeout(tab, 60*time.Second)
	t.Cleanup(cancelT)
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}}); err != nil {
		t.Fatal(err)
	}
	return tab
}

// noPuzzle is a JS expression true when the page shows nothing to solve
// or click but its own forms: no checkbox, no ALTCHA widget, no iframe.
const noPuzzle = `document.querySelectorAll('input[type="checkbox"], altcha-widget, iframe, [class*="altcha"]').length === 0`

// proofStub stands in front of the real server as a room that asks for a
// proof of work would: it answers the room's challenge with an
// altcha-lib-go challenge, an enter without X-Altcha with 428
// challenge_required, and the first correct answer with 428
// challenge_invalid (a refused answer); the next correct answer goes on to
// the real server. The first challenge fetch waits for hold to close, so
// that the test sees the page while it prepares the place. With busy, the
// first correct answer is answered 429 (Retry-After 1) instead, as the
// enter limit does before a proof is spent.
type proofStub struct {
	room, key string
	busy      bool
	mu        sync.Mutex
	answers   int
	payloads  []string // the correct answers, in order
	hold      chan struct{}
}

func (s *proofStub) handler(real string) http.Handler {
	target, _ := url.Parse(real)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	refuse := func(w http.ResponseWriter, code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPreconditionRequired)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "message": "prove it", "challenge": "/api/rooms/" + s.room + "/challenge"})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/rooms/"+s.room+"/challenge":
			s.mu.Lock()
			hold := s.hold
			s.hold = nil
			s.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
			}
			exp := time.Now().Add(2 * time.Minute)
			ch, err := altcha.CreateChallenge(altcha.ChallengeOptions{HMACKey: s.key, MaxNumber: 20000, Expires: &exp})
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			json.NewEncoder(w).Encode(ch)
		case r.URL.Path == "/api/rooms/"+s.room+"/queue" && r.Method == "POST":
			proof := r.Header.Get("X-Altcha")
			if proof == "" {
				refuse(w, "challenge_required")
				return
			}
			if ok, err := altcha.VerifySolutionSafe(proof, s.key, true); !ok || err != nil {
				refuse(w, "challenge_invalid")
				return
			}
			s.mu.Lock()
			s.answers++
			s.payloads = append(s.payloads, proof)
			first := s.answers == 1
			s.mu.Unlock()
			switch {
			case first && s.busy:
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				json.NewEncoder(w).Encode(map[string]string{"error": "rate_limited", "message": "wait"})
				return
			case first:
				refuse(w, "challenge_invalid")
				return
			}
			proxy.ServeHTTP(w, r)
		default:
			proxy.ServeHTTP(w, r)
		}
	})
}

// TestBrowserChallengeRefusedThenJoins: the page meets a room that asks
// for a proof of work. It says in words that the place is being prepared,
// solves the challenge with the vendored solver (its answer verifies with
// altcha-lib-go), says that the place could not be prepared when its
// first answer is refused, fetches a new challenge and joins with it;
// nothing to click is ever shown. Both states pass axe-core and are
// screenshot in ko and en (artifacts/e2e/challenge).
func TestBrowserChallengeRefusedThenJoins(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	lineForms(t, eng, name, "")
	stub := &proofStub{room: name, key: "test-key"}
	ln := stubFront(t, stub, base)
	axe := axeSource(t)

	for _, lang := range []string{"en", "ko"} {
		t.Run(lang, func(t *testing.T) {
			hold := make(chan struct{})
			stub.mu.Lock()
			stub.answers, stub.hold = 0, hold
			stub.mu.Unlock()
			tab := enforcedTab(t, alloc, lang)
			rec := watchRequests(t, tab, name)
			preparing := map[string]string{"en": "Preparing your place…", "ko": "자리를 준비하고 있습니다…"}[lang]
			failed := map[string]string{"en": "Your place could not be prepared", "ko": "자리를 준비하지 못했습니다"}[lang]
			err := chromedp.Do(tab,
				chromedp.Navigate("http://"+ln.Addr().String()+"/r/"+name),
				chromedp.Poll[chromedp.Void](rankIs(preparing), chromedp.WithPollingTimeout(20*time.Second)),
			)
			if err != nil {
				close(hold)
				t.Fatalf("the page did not say it prepares the place: %v", err)
			}
			axeCheck(t, tab, axe, lang+" preparing")
			if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](noPuzzle)); err != nil || !ok {
				t.Errorf("preparing: a puzzle, checkbox or widget is on the page (%v)", err)
			}
			shotIn(t, tab, "challenge", "preparing-"+lang, 390, 844)
			close(hold)
			if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](rankIs(failed), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("the refused answer was not said: %v", err)
			}
			axeCheck(t, tab, axe, lang+" could not prepare")
			shotIn(t, tab, "challenge", "refused-"+lang, 390, 844)
			if err := chromedp.Do(tab, chromedp.Poll[chromedp.Void](inLine, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("never joined after the refused answer: %v", err)
			}
			if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](noPuzzle)); err != nil || !ok {
				t.Errorf("joined: a puzzle, checkbox or widget is on the page (%v)", err)
			}
			challenges, proved, _ := rec.counts()
			if challenges != 2 || proved != 2 {
				t.Errorf("%d challenges fetched and %d proved enters, want 2 and 2", challenges, proved)
			}
		})
	}
}

// TestBrowserKeepsAnUnspentProof: a proved enter answered 429 (before the
// proof is spent) is sent again with the same X-Altcha after Retry-After;
// the page fetches no second challenge and solves nothing again.
func TestBrowserKeepsAnUnspentProof(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	lineForms(t, eng, name, "")
	stub := &proofStub{room: name, key: "test-key", busy: true}
	ln := stubFront(t, stub, base)
	tab := enforcedTab(t, alloc, "en")
	rec := watchRequests(t, tab, name)
	err := chromedp.Do(tab,
		chromedp.Navigate("http://"+ln.Addr().String()+"/r/"+name),
		chromedp.Poll[chromedp.Void](inLine, chromedp.WithPollingTimeout(30*time.Second)),
	)
	if err != nil {
		t.Fatalf("never joined after the 429: %v", err)
	}
	challenges, proved, _ := rec.counts()
	if challenges != 1 || proved != 2 {
		t.Errorf("%d challenges fetched and %d proved enters, want 1 and 2", challenges, proved)
	}
	stub.mu.Lock()
	defer stub.mu.Unlock()
	if len(stub.payloads) != 2 || stub.payloads[0] != stub.payloads[1] {
		t.Errorf("the retry after the 429 did not send the same proof: %d answers", len(stub.payloads))
	}
}

// inLine is a JS expression true once the page shows a place in the line
// (waiting or ready: the progress bar shows).
const inLine = `!document.getElementById("wr-progress").hidden`

// TestBrowserJoinsThroughTheChallenge: a fresh browser opens a real room
// whose challenge is auto, then one whose challenge is always. The page's
// first enter is refused (428), it fetches the server's challenge, solves
// it with the vendored solver under the page's own CSP and enters with
// X-Altcha; the server counts its place. Nothing to click is ever shown;
// axe-core passes; screenshots in ko and en (artifacts/e2e/challenge).
func TestBrowserJoinsThroughTheChallenge(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	axe := axeSource(t)
	ctx := context.Background()
	for _, mode := range []string{room.ChallengeAuto, room.ChallengeAlways} {
		t.Run(mode, func(t *testing.T) {
			name := servicetest.RoomName(t, rdb)
			lineForms(t, eng, name, mode)
			for i, lang := range []string{"en", "ko"} {
				tab := enforcedTab(t, alloc, lang)
				rec := watchRequests(t, tab, name)
				if err := chromedp.Do(tab,
					chromedp.Navigate(base+"/r/"+name),
					chromedp.Poll[chromedp.Void](inLine, chromedp.WithPollingTimeout(45*time.Second)),
				); err != nil {
					t.Fatalf("%s: never joined: %v", lang, err)
				}
				if ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](noPuzzle)); err != nil || !ok {
					t.Errorf("%s: a puzzle, checkbox or widget is on the page (%v)", lang, err)
				}
				axeCheck(t, tab, axe, mode+" "+lang)
				shotIn(t, tab, "challenge", mode+"-"+lang, 390, 844)
				challenges, proved, plain := rec.counts()
				if challenges != 1 || proved != 1 || plain != 1 {
					t.Errorf("%s: %d challenges, %d enters with X-Altcha, %d without; want 1, 1, 1 (refused, solved, entered)", lang, challenges, proved, plain)
				}
				snap, err := eng.Snapshot(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				if snap.Waiting != int64(i+1) {
					t.Errorf("%s: the server counts %d waiting, want %d", lang, snap.Waiting, i+1)
				}
			}
		})
	}
}

// TestBrowserJoinsWithoutChallenge: a room whose challenge is off is
// joined with one plain enter; the page never asks for a challenge.
func TestBrowserJoinsWithoutChallenge(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	lineForms(t, eng, name, room.ChallengeOff)
	tab := enforcedTab(t, alloc, "en")
	rec := watchRequests(t, tab, name)
	if err := chromedp.Do(tab,
		chromedp.Navigate(base+"/r/"+name),
		chromedp.Poll[chromedp.Void](inLine, chromedp.WithPollingTimeout(20*time.Second)),
	); err != nil {
		t.Fatalf("never joined: %v", err)
	}
	if challenges, proved, plain := rec.counts(); challenges != 0 || proved != 0 || plain != 1 {
		t.Errorf("%d challenges, %d enters with X-Altcha, %d without; want 0, 0, 1", challenges, proved, plain)
	}
}

// lineForms saves room name with the least rate, so that every visitor
// waits, and challenge mode ("" for the server's default).
func lineForms(t *testing.T, eng *queue.Engine, name, mode string) {
	t.Helper()
	set := room.Defaults(name)
	set.Rate = room.MinRate
	set.Challenge = mode
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
}

// stubFront serves stub in front of the server at base, until t ends, and
// returns its listener.
func stubFront(t *testing.T, stub *proofStub, base string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := &http.Server{Handler: stub.handler(base)}
	go front.Serve(ln)
	t.Cleanup(func() { front.Close() })
	return ln
}
