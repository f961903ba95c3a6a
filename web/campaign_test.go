package web

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/token"
	"waitingroom/web/request"
	"waitingroom/web/sse"
)

// TestJoinByCampaignLink joins through every join path with and without
// UTM values, repeats some enters, admits everyone and reads the counts
// per campaign.
func TestJoinByCampaignLink(t *testing.T) {
	t.Parallel()
	h := newClockedHarness(t, nil)
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
			if ck.Name == request.CookieName {
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
	h.credit(t, h.room, 20*time.Millisecond)
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
	t.Parallel()
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
	t.Parallel()
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

// TestUTMCookieKeepsFirstCampaign: a remembered campaign stays; remembered
// click ids alone do not keep a later join by a campaign from being
// remembered, and are kept with it unless the join brings its own.
func TestUTMCookieKeepsFirstCampaign(t *testing.T) {
	t.Parallel()
	kakao := queue.Campaign{Source: "kakao", Medium: "social", Campaign: "spring"}
	tests := []struct {
		name   string
		cookie string // the wr_utm cookie the request carries ("" none)
		query  string // the join's query string
		c      queue.Campaign
		want   string // the new cookie's value ("" no new cookie)
	}{
		{"first join by a campaign", "", "utm_source=kakao&utm_medium=social&utm_campaign=spring&gclid=G1", kakao,
			"gclid=G1&utm_campaign=spring&utm_medium=social&utm_source=kakao"},
		{"a campaign remembered stays", "utm_source=naver", "utm_source=kakao&utm_medium=social&utm_campaign=spring", kakao, ""},
		{"click ids remembered, then a campaign", "fbclid=F0", "utm_source=kakao&utm_medium=social&utm_campaign=spring", kakao,
			"fbclid=F0&utm_campaign=spring&utm_medium=social&utm_source=kakao"},
		{"click ids remembered, then a campaign with its own", "gclid=G0", "utm_source=kakao&utm_medium=social&utm_campaign=spring&gclid=G1", kakao,
			"gclid=G1&utm_campaign=spring&utm_medium=social&utm_source=kakao"},
		{"click ids remembered, then other click ids", "gclid=G0", "gclid=G1", queue.Campaign{}, ""},
		{"click ids remembered, then a direct join", "gclid=G0", "", queue.Campaign{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/r/spring?"+tt.query, nil)
			if tt.cookie != "" {
				r.AddCookie(&http.Cookie{Name: utmCookie, Value: tt.cookie})
			}
			cks := utmCookies(r, "spring", tt.c)
			got := ""
			if len(cks) > 0 {
				got = cks[0].Value
			}
			if got != tt.want {
				t.Fatalf("cookie %q, want %q", got, tt.want)
			}
			if got != "" {
				if _, err := url.ParseQuery(got); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

var hiddenField = regexp.MustCompile(`<input type="hidden"(?: id="[^"]*")? name="([a-z_]+)" value="([^"]*)"`)

// TestNoScriptOrderKeepsClickIDs: without JavaScript, a buyer who comes by
// a link with utm_content and a gclid joins with the room page's form,
// waits on the status page and orders with its form: the order keeps
// both. A second buyer whose order form lost the link's fields (a
// bookmark) gets them from the wr_utm cookie.
func TestNoScriptOrderKeepsClickIDs(t *testing.T) {
	t.Parallel()
	const link = "utm_source=insta&utm_medium=social&utm_campaign=drop1&utm_content=hero&gclid=Cj0KCQ-x_1&fbclid=bad+id"
	for _, tc := range []struct {
		name      string
		keepQuery bool
	}{{"status page's form", true}, {"from the cookie", false}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newOrderHarness(t, 5, nil)
			jar, _ := cookiejar.New(nil)
			cl := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			// The room page's join form posts to the address it was opened at.
			resp, err := cl.PostForm(h.srv.URL+"/r/"+h.room+"?"+link, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			status := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusSeeOther || !strings.Contains(status, "gclid=Cj0KCQ-x_1") ||
				!strings.Contains(status, "utm_content=hero") || strings.Contains(status, "fbclid") {
				t.Fatalf("join: %d to %q", resp.StatusCode, status)
			}
			ctx := context.Background()
			h.credit(t, h.room, 5*time.Millisecond)
			h.eng.Admit(ctx, h.room, time.Second, []string{freshToken(t)})
			if !tc.keepQuery {
				status = "/r/" + h.room + "/status"
			}
			resp, err = cl.Get(h.srv.URL + status)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			form := url.Values{}
			for _, m := range hiddenField.FindAllStringSubmatch(string(b), -1) {
				form.Set(m[1], html.UnescapeString(m[2]))
			}
			if form.Get("entry_token") == "" {
				t.Fatalf("no order form on the status page: %.600s", b)
			}
			if tc.keepQuery && (form.Get("gclid") != "Cj0KCQ-x_1" || form.Get("utm_content") != "hero") {
				t.Fatalf("order form's hidden fields %v", form)
			}
			resp, err = cl.PostForm(h.srv.URL+"/r/"+h.room+"/order", form)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("order: %d", resp.StatusCode)
			}
			var got [5]string
			if err := h.db.QueryRowx(`SELECT COALESCE(utm_source, ''), COALESCE(utm_campaign, ''), COALESCE(utm_content, ''),
				COALESCE(gclid, ''), COALESCE(fbclid, '') FROM orders WHERE room = $1`, h.room).Scan(&got[0], &got[1], &got[2], &got[3], &got[4]); err != nil {
				t.Fatal(err)
			}
			if want := [5]string{"insta", "drop1", "hero", "Cj0KCQ-x_1", ""}; got != want {
				t.Fatalf("order's attribution %q, want %q", got, want)
			}
		})
	}
}

// TestJSONOrderClickIDs: the JSON order takes the click ids in its utm
// object, and refuses one that is not a click id.
func TestJSONOrderClickIDs(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 5, nil)
	ck, tok := h.admitted(t)
	r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{"quantity":1,"utm":{"source":"x","gclid":"a b"}}`, map[string]string{"X-Entry-Token": tok}, ck)
	if r.status != http.StatusBadRequest {
		t.Fatalf("bad gclid: %d %s", r.status, r.body)
	}
	r = h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{"quantity":1,"utm":{"source":"x","content":"c1","ttclid":"E.C.P.z"}}`, map[string]string{"X-Entry-Token": tok}, ck)
	if r.status != http.StatusCreated {
		t.Fatalf("order: %d %s", r.status, r.body)
	}
	var content, ttclid string
	if err := h.db.QueryRowx(`SELECT utm_content, ttclid FROM orders WHERE room = $1`, h.room).Scan(&content, &ttclid); err != nil || content != "c1" || ttclid != "E.C.P.z" {
		t.Fatalf("kept %q %q %v", content, ttclid, err)
	}
}
