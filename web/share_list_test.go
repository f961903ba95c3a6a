package web

import (
	"context"
	"strings"
	"testing"

	"waitingroom/server/share"
)

// TestShareListReadable: the list shows UTM values as typed (escaped,
// not percent-encoded) and times in the console's zone, and the rooms list and the branding page link to
// the share page.
func TestShareListReadable(t *testing.T) {
	sc := newShareConsole(t)
	name := sc.h.room
	page := "/admin/rooms/" + name + "/share"
	if _, err := sc.links.Create(context.Background(), share.Link{Room: name, Source: "kakao", Campaign: "봄 세일 <b>&", Term: "50%"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path      string
		want, not []string
	}{
		// Times in the console's zone, as on the orders page (Seoul unless
		// ?tz= says otherwise).
		{page, []string{"?utm_source=kakao&amp;utm_campaign=봄 세일 &lt;b&gt;&amp;&amp;utm_term=50%</code>", "(UTC+09:00)"},
			[]string{"%EB%B4%84", "utm_term=50%25", "<b>&"}},
		{page + "?tz=UTC", []string{"(UTC)"}, []string{"(UTC+09:00)"}},
		{"/admin/rooms", []string{`href="` + page + `"`}, nil},
		{"/admin/rooms/" + name + "/branding", []string{`href="` + page + `"`}, nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := sc.get(t, tc.path, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("%d", resp.StatusCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("lacks %q: %.4000s", w, body)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("has %q", n)
				}
			}
		})
	}
}
