package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"waitingroom/gate"
	"waitingroom/server/adapt"
	"waitingroom/server/servicetest"
	"waitingroom/web/gatemode"
	"waitingroom/web/response"
)

// signalNS is the Redis namespace of the signal tests' recorders: their
// keys never meet another test's.
const signalNS = "wr:h15sig-test"

// waitNextSecond sleeps into the next wall-clock second: a Reader merges
// complete seconds only.
// waitNextSecond waits until the current second is complete for a Reader
// (adapt.Landed after its end).
func waitNextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + adapt.Landed + 10*time.Millisecond).Sub(now))
}

// TestGateMiddlewareFeedsTheSignal: a real gate in front of a stand-in
// shop reports its handlers' answers to this server once a second; they
// reach the room's signal in Redis: the samples, their p95 and the
// failures.
func TestGateMiddlewareFeedsTheSignal(t *testing.T) {
	const slow = 120 * time.Millisecond
	rdb := servicetest.Redis(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := adapt.NewRecorder(rdb, signalNS, "test", nil, log)
	g := newGateHarness(t, func(o *Options) { o.Signal = rec })
	rec.Track([]string{g.room})

	mw, err := gate.New(gate.Options{RoomURL: g.srv.URL, Room: g.room, APIKey: g.apiKey, Audience: testShopOrigin, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(gate.EnterPath, mw.EnterHandler())
	mux.Handle("/checkout/", mw.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/checkout/slow":
			time.Sleep(slow)
		case "/checkout/fail":
			http.Error(w, "the payment provider is down", http.StatusBadGateway)
			return
		}
		fmt.Fprint(w, "checkout")
	})))
	shop := httptest.NewServer(mux)
	t.Cleanup(shop.Close)

	// The hand-off: the pass posted to the shop becomes a session.
	resp, err := noRedirects().PostForm(shop.URL+gate.EnterPath, url.Values{"pass": {g.newPass(t)}, "next": {"/checkout/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == gate.CookieName {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil {
		t.Fatalf("enter: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	sent := map[string]int{"/checkout/": 30, "/checkout/slow": 3, "/checkout/fail": 2}
	for path, n := range sent {
		for range n {
			req, _ := http.NewRequest("GET", shop.URL+path, nil)
			req.AddCookie(session) // Secure (an https audience): set by hand over the test's http
			resp, err := noRedirects().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := map[bool]int{true: 502, false: 200}[path == "/checkout/fail"]; resp.StatusCode != want {
				t.Fatalf("GET %s: %d, want %d", path, resp.StatusCode, want)
			}
		}
	}

	// The report comes within the second; the recorder flushes it.
	reader := adapt.NewReader(rdb, signalNS)
	deadline := time.Now().Add(5 * time.Second)
	var sig adapt.Signal
	for {
		if err := rec.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		waitNextSecond()
		if sig, err = reader.Read(context.Background(), g.room, adapt.MaxWindow); err != nil {
			t.Fatal(err)
		}
		if sig.Samples >= 35 || time.Now().After(deadline) {
			break
		}
	}
	if sig.Samples != 35 || sig.Errors != 2 || sig.Failed[gatemode.ShopUnavailable] != 2 {
		t.Fatalf("signal %d samples, %d errors, failures %v; want 35, 2, 2 unavailable", sig.Samples, sig.Errors, sig.Failed)
	}
	// 33 answers of 35 are fast or failed fast: the p95 is among the slow.
	if sig.P95 < slow*3/4 || sig.P95 > 4*slow {
		t.Fatalf("p95 %v, want about %v", sig.P95, slow)
	}
}

// TestGateReportEndpoint: the report endpoint takes the room's API key
// only, a bounded, valid body only, no browser's cross-site post, and a
// bounded rate of reports per room; every refusal is a clear JSON error.
func TestGateReportEndpoint(t *testing.T) {
	g := newGateHarness(t, nil)
	path := "/api/rooms/" + g.room + "/gate/report"
	good := `{"ok":10,"failed":1,"okMs":[12.5,30],"failedMs":[5000]}`
	for _, tt := range []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		code   string
	}{
		{"a report", good, g.keyed(g.apiKey), 204, ""},
		{"nothing to report", `{"ok":0,"failed":0}`, g.keyed(g.apiKey), 204, ""},
		{"no key", good, nil, 401, "api_key_invalid"},
		{"a bad key", good, g.keyed("wrk_" + strings.Repeat("A", 43)), 401, "api_key_invalid"},
		{"the admin token", good, g.keyed(testAdminToken), 401, "api_key_invalid"},
		{"oversized", `{"ok":1,"okMs":[` + strings.Repeat("1,", gatemode.BodyMax) + `1]}`, g.keyed(g.apiKey), 413, "body_too_large"},
		{"not JSON", `ok=1`, g.keyed(g.apiKey), 400, "bad_json"},
		{"an unknown field", `{"ok":1,"okMs":[1],"p95":3}`, g.keyed(g.apiKey), 400, "bad_json"},
		{"a negative count", `{"ok":-1}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"too many answers", `{"ok":1000001,"okMs":[1]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"answers without durations", `{"ok":5}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"more durations than answers", `{"failed":1,"failedMs":[1,2]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"a negative duration", `{"ok":1,"okMs":[-1]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"a duration past 10 minutes", `{"ok":1,"okMs":[600001]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"too many durations", `{"ok":300,"okMs":[` + strings.Repeat("1,", 256) + `1]}`, g.keyed(g.apiKey), 400, "bad_report"},
		{"a browser's cross-site post", good, map[string]string{"Authorization": "Bearer " + g.apiKey,
			"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := g.do(t, "POST", path, tt.body, tt.hdr, nil)
			if r.status != tt.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
			}
			if tt.code != "" {
				var e response.Error
				r.json(t, &e)
				if e.Code != tt.code || e.Message == "" {
					t.Fatalf("error %+v, want %s with a message", e, tt.code)
				}
			}
		})
	}
	t.Run("a room's reports are rate limited", func(t *testing.T) {
		limited := 0
		for range 2 * gatemode.ReportsBurst {
			if r := g.do(t, "POST", path, good, g.keyed(g.apiKey), nil); r.status == http.StatusTooManyRequests {
				limited++
				if !strings.Contains(r.body, "too_many_reports") || r.header.Get("Retry-After") == "" {
					t.Fatalf("429 %v %s", r.header, r.body)
				}
			}
		}
		if limited == 0 {
			t.Fatalf("%d reports in a row, none refused", 2*gatemode.ReportsBurst)
		}
	})
}
