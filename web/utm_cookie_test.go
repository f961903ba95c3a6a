package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

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
