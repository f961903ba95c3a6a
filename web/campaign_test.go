package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"waitingroom/web/request"

	"waitingroom/server/queue"
	"waitingroom/server/token"
	"waitingroom/web/sse"
)

// TestJoinByCampaignLink joins through every join path with and without
// UTM values, repeats some enters, admits everyone and reads the counts
// per campaign.
func TestJoinByCampaignLink(t *testing.T) {
	h := newHarness(t, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	news := queue.Campaign{Source: "news", Medium: "email", Campaign: "spring sale"}
	qr := queue.Campaign{Source: "qr", Medium: "poster", Campaign: "봄"}
	utm := func(c queue.Campaign) url.Values {
		return url.Values{"utm_source": {c.Source}, "utm_medium": {c.Medium}, "utm_campaign": {c.Campaign}}
	}
	// join enters once by its path and returns the visitor's cookie.
	join := func(how string, c queue.Campaign, cookie *http.Cookie) *http.Cookie {
		t.Helper()
		var req *http.Request
		switch how {
		case "api":
			req, _ = http.NewRequest("POST", h.srv.URL+"/api/rooms/"+h.room+"/queue?"+utm(c).Encode(), nil)
		case "form": // the fields in the form body
			req, _ = http.NewRequest("POST", h.srv.URL+"/r/"+h.room+"/join", strings.NewReader(utm(c).Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		case "room form": // the room page's form keeps the link's query string
			req, _ = http.NewRequest("POST", h.srv.URL+"/r/"+h.room+"?"+utm(c).Encode(), strings.NewReader(""))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s join: %d", how, resp.StatusCode)
		}
		if cookie != nil {
			return cookie
		}
		for _, ck := range resp.Cookies() {
			if ck.Name == CookieName {
				return ck
			}
		}
		t.Fatalf("%s join set no cookie", how)
		return nil
	}
	for _, tc := range []struct {
		how string
		c   queue.Campaign
	}{{"api", news}, {"api", news}, {"form", news}, {"room form", qr}, {"form", qr}, {"api", queue.Campaign{}}, {"form", queue.Campaign{}}} {
		ck := join(tc.how, tc.c, nil)
		join(tc.how, tc.c, ck) // a repeated enter counts once
		join("api", qr, ck)    // and another link later changes nothing
	}
	ctx := context.Background()
	h.eng.Admit(ctx, h.room, time.Second, nil)
	time.Sleep(20 * time.Millisecond)
	if a, err := h.eng.Admit(ctx, h.room, time.Second, mustTokens(t, 16)); err != nil || len(a.Visitors) != 7 {
		t.Fatalf("admitted %+v %v, want 7", a, err)
	}
	got, err := h.eng.Attribution(ctx, h.room)
	if err != nil {
		t.Fatal(err)
	}
	want := []queue.CampaignCount{{Campaign: news, Joined: 3, Admitted: 3}, {Joined: 2, Admitted: 2}, {Campaign: qr, Joined: 2, Admitted: 2}}
	if len(got) != len(want) {
		t.Fatalf("attribution %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("attribution[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestJoinCountsBadUTMAsOther: attribution never decides who gets in line.
// A join whose UTM values break the order path's rule joins all the same,
// and counts under queue.OtherCampaign.
func TestJoinCountsBadUTMAsOther(t *testing.T) {
	h := newHarness(t, nil)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	long := url.Values{"utm_source": {"news"}, "utm_campaign": {strings.Repeat("x", request.MaxUTM+1)}}.Encode()
	ctrl := url.Values{"utm_source": {"a\x00b"}}.Encode()
	bidi := url.Values{"utm_medium": {"a\u202eb"}}.Encode()
	tests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"api, too long", "POST", "/api/rooms/" + h.room + "/queue?" + long, "", http.StatusOK},
		{"api, control character", "POST", "/api/rooms/" + h.room + "/queue?" + ctrl, "", http.StatusOK},
		{"events, too long", "GET", "/r/" + h.room + "/events?" + long, "", http.StatusOK},
		{"form, too long", "POST", "/r/" + h.room + "/join", long, http.StatusSeeOther},
		{"room form, control character", "POST", "/r/" + h.room + "?" + ctrl, "", http.StatusSeeOther},
		{"room form, bidirectional formatting", "POST", "/r/" + h.room + "?" + bidi, "", http.StatusSeeOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel() // ends the event stream
			req, _ := http.NewRequestWithContext(ctx, tc.method, h.srv.URL+tc.path, strings.NewReader(tc.body))
			if tc.method == "POST" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("%d, want %d: the buyer joins", resp.StatusCode, tc.status)
			}
			// The no-JS pages go on to the status page, without the bad values.
			if loc := resp.Header.Get("Location"); tc.status == http.StatusSeeOther && loc != "/r/"+h.room+"/status" {
				t.Fatalf("redirect to %q", loc)
			}
		})
	}
	got, err := h.eng.Attribution(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	want := []queue.CampaignCount{{Campaign: queue.OtherCampaign, Joined: int64(len(tests))}}
	if !slices.Equal(got, want) {
		t.Fatalf("attribution %+v, want %+v", got, want)
	}
}

// TestHubCountsConnections: two streams open, one goes (found at the next
// heartbeat), the other is dropped by Close.
func TestHubCountsConnections(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Hub = newHub(o.Queue.(*queue.Engine), sse.Options{Heartbeat: 50 * time.Millisecond}, o.Metrics, o.Log)
		t.Cleanup(o.Hub.Close)
	})
	if n := h.web.hub.Connections(); n != 0 {
		t.Fatalf("%d connections before any", n)
	}
	open := func() (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/r/"+h.room+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("events: %d", resp.StatusCode)
		}
		return resp, cancel
	}
	one, cancel := open()
	two, cancelTwo := open()
	defer cancelTwo()
	defer two.Body.Close()
	waitFor(t, func() bool { return h.web.hub.Connections() == 2 })
	cancel()
	one.Body.Close()
	waitFor(t, func() bool { return h.web.hub.Connections() == 1 })
	h.web.hub.Close()
	if n := h.web.hub.Connections(); n != 0 {
		t.Fatalf("%d connections after Close", n)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustTokens(t *testing.T, n int) []string {
	t.Helper()
	toks, err := token.NewBatch(n)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}
