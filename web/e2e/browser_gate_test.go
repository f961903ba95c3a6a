package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"waitingroom/gate"
	"waitingroom/server/queue"
	"waitingroom/server/servicetest"
)

// adminCall calls the admin API of the server at base: the answer's
// status and body.
func adminCall(t *testing.T, method, u, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+consoleToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBrowserGateHandOff: a buyer waits in a room whose targetURL is a
// stand-in shop guarded by the real gate middleware; at READY the page
// offers "Continue to" the shop (axe-core checks it, in English and
// Korean, and it is shot), and the click carries the pass to the shop's
// checkout, which the buyer reaches with a session. Without JavaScript,
// the status page and the hand-off page's button do the same.
func TestBrowserGateHandOff(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	t.Parallel()
	axe := axeSource(t)
	alloc := browser(t)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ServerDB))
	ns := ownNamespace(t, rdb)
	base, _, _ := startServer(t, 250*time.Millisecond, "-admin-token", consoleToken, "-redis-namespace", ns)
	eng := queue.New(rdb, ns)
	waitReady(t, base)
	const name = "gate-e2e"

	// The stand-in shop: its checkout needs a session of the room.
	var g *gate.Gate
	mux := http.NewServeMux()
	mux.HandleFunc("GET /checkout", func(w http.ResponseWriter, r *http.Request) {
		s, ok := gate.SessionFrom(r.Context())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html lang="en"><title>Checkout</title><main><h1 id="shop">Checkout</h1><p id="sub">%v %s</p></main></html>`, ok, s.Subject)
	})
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.Protect(mux).ServeHTTP(w, r) }))
	t.Cleanup(shop.Close)

	body, _ := json.Marshal(map[string]any{"title": "Gate drop", "rate": 50, "targetURL": shop.URL + "/checkout", "shopName": "Stand-in Shop"})
	if status, b := adminCall(t, "PUT", base+"/api/admin/rooms/"+name, string(body)); status != 201 {
		t.Fatalf("create the room: %d %s", status, b)
	}
	status, b := adminCall(t, "POST", base+"/api/admin/rooms/"+name+"/apikey", "")
	var key struct {
		APIKey string `json:"apiKey"`
	}
	if json.Unmarshal([]byte(b), &key); status != 201 || key.APIKey == "" {
		t.Fatalf("API key: %d %s", status, b)
	}
	var err error
	if g, err = gate.New(gate.Options{RoomURL: base, Room: name, APIKey: key.APIKey, Audience: shop.URL}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		lang, button string
		noJS         bool
	}{{"en", "Continue to Stand-in Shop", false}, {"ko", "Stand-in Shop에서 구매 계속하기", false}, {"en", "Continue to Stand-in Shop", true}} {
		what := tc.lang
		if tc.noJS {
			what += "-nojs"
		}
		tab := stateTab(t, alloc, tc.lang, "light")
		// Without a session the shop sends the buyer to the room.
		if err := chromedp.Do(tab, chromedp.Navigate(shop.URL+"/checkout"), chromedp.WaitReady(chromedp.CSS("#wr-join"))); err != nil {
			t.Fatalf("%s: not sent to the room: %v", what, err)
		}
		if tc.noJS {
			// The join form, the status page (refreshing itself until
			// READY), and the hand-off page's button.
			if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(tab, chromedp.Reload(), chromedp.Click(chromedp.CSS("#wr-join button"))); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS("#wr-order button"))); err != nil {
			t.Fatalf("%s: no READY hand-off: %v", what, err)
		}
		label, _ := chromedp.Run(tab, chromedp.Text(chromedp.CSS("#wr-order button")))
		if strings.TrimSpace(label) != tc.button {
			t.Fatalf("%s: the button says %q, want %q", what, label, tc.button)
		}
		shotIn(t, tab, "gate", "ready-"+what, 420, 760)
		if tc.noJS {
			if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#wr-order button")), chromedp.WaitVisible(chromedp.CSS("#wr-handoff button"))); err != nil {
				t.Fatalf("%s: no hand-off page: %v", what, err)
			}
			shotIn(t, tab, "gate", "handoff-"+what, 420, 760)
			// The page runs no script but its hand-off, which has not run:
			// axe-core may run once scripts are allowed again.
			if _, err := chromedp.Call(tab, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
				t.Fatal(err)
			}
			axeCheck(t, tab, axe, "gate-handoff-"+what)
			if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#wr-handoff button"))); err != nil {
				t.Fatal(err)
			}
		} else {
			axeCheck(t, tab, axe, "gate-ready-"+what)
			if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#wr-order button"))); err != nil {
				t.Fatal(err)
			}
		}
		// The hand-off page posts the pass at once: two navigations, which
		// a poll inside the page would not live through.
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			if at, err := chromedp.Run(tab, chromedp.Evaluate[bool](`location.pathname === "/checkout" && !!document.getElementById("sub")`)); err == nil && at {
				break
			}
			if time.Now().After(deadline) {
				loc, _ := chromedp.Run(tab, chromedp.Location())
				text, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
				t.Fatalf("%s: the click did not reach the shop's checkout: at %s: %.2000s", what, loc, text)
			}
		}
		sub, _ := chromedp.Run(tab, chromedp.Text(chromedp.ID("sub")))
		if !strings.HasPrefix(sub, "true ") || len(sub) != len("true ")+32 {
			t.Fatalf("%s: the checkout has no session: %q", what, sub)
		}
		loc, _ := chromedp.Run(tab, chromedp.Location())
		if loc != shop.URL+"/checkout" {
			t.Fatalf("%s: landed on %q", what, loc)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if n, err := eng.ActiveSessions(ctx, name); err != nil || n != 3 {
		t.Fatalf("active sessions: %d %v, want 3", n, err)
	}
}
