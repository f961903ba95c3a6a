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
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
)

// TestUTMCookieKeepsFirstCampaign: a remembered campaign stays; remembered
// click ids alone do not keep a later join by a campaign from being
// remembered, and are kept with it unless the join brings its own.
func TestUTMCookieKeepsFirstCampaign(t *testing.T) {
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
			h.eng.Admit(ctx, h.room, time.Second, nil)
			time.Sleep(5 * time.Millisecond)
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
