package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOrderKeepsTheJoinsCampaign: a buyer joins by a campaign link, opens
// the status page without the link's query string (a bookmark, a new tab)
// and orders. The order counts under the join's campaign, by the form and
// by the JSON API, unless the order names its own UTM values.
func TestOrderKeepsTheJoinsCampaign(t *testing.T) {
	const link = "utm_source=insta&utm_medium=social&utm_campaign=drop1"
	tests := []struct {
		name     string
		join     string // "form", "api" or "events"
		order    string // "form" or "api"
		explicit bool   // the order names utm_source=mail itself
		want     [3]string
	}{
		{"form join, form order", "form", "form", false, [3]string{"insta", "social", "drop1"}},
		{"form join, API order", "form", "api", false, [3]string{"insta", "social", "drop1"}},
		{"API join, API order", "api", "api", false, [3]string{"insta", "social", "drop1"}},
		{"API join, form order", "api", "form", false, [3]string{"insta", "social", "drop1"}},
		{"event stream join, form order", "events", "form", false, [3]string{"insta", "social", "drop1"}},
		{"form order's own UTM wins", "form", "form", true, [3]string{"mail", "", ""}},
		{"API order's own UTM wins", "api", "api", true, [3]string{"mail", "", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newOrderHarness(t, 5, nil)
			jar, _ := cookiejar.New(nil)
			cl := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			send := func(method, path, ctype, body string, hdr map[string]string) *http.Response {
				t.Helper()
				req, _ := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
				if ctype != "" {
					req.Header.Set("Content-Type", ctype)
				}
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				return resp
			}
			switch tc.join {
			case "form":
				send("POST", "/r/"+h.room+"?"+link, "application/x-www-form-urlencoded", "", nil).Body.Close()
			case "api":
				send("POST", "/api/rooms/"+h.room+"/queue?"+link, "", "", nil).Body.Close()
			case "events":
				ctx, cancel := context.WithCancel(context.Background())
				req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/r/"+h.room+"/events?"+link, nil)
				resp, err := cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				cancel()
				resp.Body.Close()
			}
			ctx := context.Background()
			h.eng.Admit(ctx, h.room, time.Second, nil)
			time.Sleep(5 * time.Millisecond)
			h.eng.Admit(ctx, h.room, time.Second, []string{freshToken(t)})
			var p struct {
				EntryToken *string `json:"entryToken"`
			}
			resp := send("GET", "/api/rooms/"+h.room+"/queue/position", "", "", nil)
			json.NewDecoder(resp.Body).Decode(&p)
			resp.Body.Close()
			if p.EntryToken == nil {
				t.Fatal("buyer not admitted")
			}
			// The page was opened without the link's query string.
			if tc.order == "form" {
				f := url.Values{"entry_token": {*p.EntryToken}}
				if tc.explicit {
					f.Set("utm_source", "mail")
				}
				resp = send("POST", "/r/"+h.room+"/order", "application/x-www-form-urlencoded", f.Encode(), nil)
				if resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("form order: %d", resp.StatusCode)
				}
			} else {
				body := `{"quantity":1}`
				if tc.explicit {
					body = `{"quantity":1,"utm":{"source":"mail"}}`
				}
				resp = send("POST", "/api/rooms/"+h.room+"/orders", "application/json", body, map[string]string{"X-Entry-Token": *p.EntryToken})
				if resp.StatusCode != http.StatusCreated {
					t.Fatalf("API order: %d", resp.StatusCode)
				}
			}
			resp.Body.Close()
			var got [3]string
			if err := h.db.QueryRowx(`SELECT COALESCE(utm_source, ''), COALESCE(utm_medium, ''), COALESCE(utm_campaign, '') FROM orders WHERE room = $1`, h.room).Scan(&got[0], &got[1], &got[2]); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("order attributed to %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUTMCookie: what the wr_utm cookie remembers, and for which paths.
func TestUTMCookie(t *testing.T) {
	h := newHarness(t, nil)
	tests := []struct {
		name, query string
		want        bool
	}{
		{"campaign link", "utm_source=insta&utm_medium=social&utm_campaign=drop1", true},
		{"direct join", "", false},
		{"ad click id alone", "gclid=Cj0KCQ-x_1", true},
		{"campaign with content and a click id", "utm_source=insta&utm_content=hero&fbclid=IwAR_x", true},
		{"values that are not valid", url.Values{"utm_source": {"a\x00b"}}.Encode(), false},
		{"too long", url.Values{"utm_source": {"news"}, "utm_campaign": {strings.Repeat("x", maxUTM+1)}}.Encode(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue?"+tc.query, "", nil, nil)
			var paths []string
			for _, ck := range (&http.Response{Header: r.header}).Cookies() {
				if ck.Name != utmCookie {
					continue
				}
				paths = append(paths, ck.Path)
				if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.MaxAge != 86400 || len(ck.Value) > maxUTMCookie {
					t.Fatalf("cookie %s", ck)
				}
			}
			if got := len(paths) == 2 && paths[0] == "/r/"+h.room && paths[1] == "/api/rooms/"+h.room; got != tc.want {
				t.Fatalf("wr_utm paths %q, want set: %v", paths, tc.want)
			}
		})
	}
	// A campaign already remembered stays: the room counts the first join.
	first := &http.Cookie{Name: utmCookie, Value: "utm_source=news"}
	r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue?utm_source=other", "", nil, first)
	if strings.Contains(r.header.Get("Set-Cookie"), utmCookie) {
		t.Fatalf("second campaign replaced the first: %q", r.header.Values("Set-Cookie"))
	}
}
