package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"waitingroom/server/share"
)

// TestShareForwardsClickIDs: /s/{code} forwards the ad click ids and the
// utm_* values the link does not set from its own query, valid ones only,
// and a link-preview crawler's GET redirects without counting a click.
func TestShareForwardsClickIDs(t *testing.T) {
	t.Parallel()
	sc := newShareConsole(t)
	name := sc.h.room
	ctx := context.Background()
	l, err := sc.links.Create(ctx, share.Link{Room: name, Source: "kakao", Medium: "social"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, query, ua string
		want            url.Values
		click           bool
	}{
		{"plain", "", "Mozilla/5.0", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, true},
		{"click ids", "gclid=G-1_a&fbclid=F.b~2&ttclid=T3", "Mozilla/5.0",
			url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}, "gclid": {"G-1_a"}, "fbclid": {"F.b~2"}, "ttclid": {"T3"}}, true},
		{"invalid click id dropped", "gclid=" + url.QueryEscape("a b<c") + "&fbclid=ok", "Mozilla/5.0",
			url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}, "fbclid": {"ok"}}, true},
		{"the link's own utm wins, others added", "utm_source=evil&utm_campaign=spring&utm_term=shoes", "Mozilla/5.0",
			url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}, "utm_campaign": {"spring"}, "utm_term": {"shoes"}}, true},
		{"unknown parameters dropped", "foo=bar", "Mozilla/5.0", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, true},
		{"facebook preview", "fbclid=x", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
			url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}, "fbclid": {"x"}}, false},
		{"kakaotalk preview", "", "Mozilla/5.0 (compatible; kakaotalk-scrap/1.0)", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"slack, any case", "", "SLACKBOT-LinkExpanding 1.0", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"twitter", "", "Twitterbot/1.0", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"linkedin", "", "LinkedInBot/1.0", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"telegram", "", "TelegramBot (like TwitterBot)", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"whatsapp", "", "WhatsApp/2.23", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"discord", "", "Mozilla/5.0 (compatible; Discordbot/2.0)", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"google", "", "Mozilla/5.0 (compatible; Googlebot/2.1)", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
		{"bing", "", "Mozilla/5.0 (compatible; bingbot/2.0)", url.Values{"utm_source": {"kakao"}, "utm_medium": {"social"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := sc.links.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			before := clicksNow(t, sc, l.Code)
			u := sc.h.srv.URL + "/s/" + l.Code
			if tc.query != "" {
				u += "?" + tc.query
			}
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("User-Agent", tc.ua)
			resp, err := noRedirects().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := "/r/" + name + "?" + tc.want.Encode()
			if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
				t.Fatalf("%d %q, want %q", resp.StatusCode, resp.Header.Get("Location"), want)
			}
			if err := sc.links.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := clicksNow(t, sc, l.Code)-before, map[bool]int64{true: 1, false: 0}[tc.click]; got != want {
				t.Fatalf("counted %d clicks, want %d", got, want)
			}
		})
	}
}

func clicksNow(t *testing.T, sc *shareConsole, code string) int64 {
	t.Helper()
	ls, err := sc.links.List(context.Background(), sc.h.room)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Code == code {
			return l.Clicks
		}
	}
	t.Fatalf("no link %s", code)
	return 0
}
