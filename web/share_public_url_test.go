package web

import (
	"strings"
	"testing"
)

// TestSharePublicURLWarning: without PUBLIC_URL the share page warns, in
// the operator's language, that its links use the console's address.
func TestSharePublicURLWarning(t *testing.T) {
	cases := []struct {
		name, publicURL, lang string
		want, wantNot         string
	}{
		{"unset, en", "", "en", "PUBLIC_URL is not set: these short links and QR codes use the address this console was opened at ({origin})", ""},
		{"unset, ko", "", "ko", "PUBLIC_URL이 설정되지 않았습니다", ""},
		{"set", "https://shop.example", "en", "", `data-warning="public-url"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := newShareConsoleWith(t, func(o *Options) { o.PublicURL = tc.publicURL })
			page := "/admin/rooms/" + sc.h.room + "/share"
			want := strings.ReplaceAll(tc.want, "{origin}", sc.h.srv.URL)
			resp, body := sc.get(t, page, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != 200 {
				t.Fatalf("%d", resp.StatusCode)
			}
			if want != "" && !strings.Contains(body, want) {
				t.Fatalf("no warning %q: %.3000s", want, body)
			}
			if tc.wantNot != "" && strings.Contains(body, tc.wantNot) {
				t.Fatalf("warns although PUBLIC_URL is set: %.3000s", body)
			}
		})
	}
}
