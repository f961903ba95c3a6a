package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestShareBuilderCountedRule: the builder lower-cases utm_source and
// utm_medium and refuses values that joins would count under (other),
// saying why in the operator's language; campaign, content and term stay
// free text.
func TestShareBuilderCountedRule(t *testing.T) {
	sc := newShareConsole(t)
	page := "/admin/rooms/" + sc.h.room + "/share"
	cases := []struct {
		name, lang, source, medium, campaign string
		wantStatus                           int
		wantSource, wantMedium, wantText     string
	}{
		{"capitals folded", "en", " Kakao ", "Social", "Spring Sale", http.StatusSeeOther, "kakao", "social", ""},
		{"no medium", "en", "NAVER", "", "봄 세일", http.StatusSeeOther, "naver", "", ""},
		{"korean source refused", "en", "카카오", "social", "", http.StatusUnprocessableEntity, "", "", "counted under (other): use a short Latin token such as kakao, naver, instagram"},
		{"korean source refused, ko", "ko", "카카오톡", "social", "", http.StatusUnprocessableEntity, "", "", "(other)로 집계됩니다"},
		{"space in medium refused", "en", "kakao", "social media", "", http.StatusUnprocessableEntity, "", "", "counted under (other)"},
		{"source too long for a token", "en", strings.Repeat("a", 65), "", "", http.StatusUnprocessableEntity, "", "", "counted under (other)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := url.Values{"csrf": {sc.csrf}, "utm_source": {tc.source}, "utm_medium": {tc.medium}, "utm_campaign": {tc.campaign}}
			resp, body := postForm(t, sc.c, sc.h.srv.URL+page, f, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("%d, want %d: %.500s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantStatus != http.StatusSeeOther {
				if !strings.Contains(body, tc.wantText) || !strings.Contains(body, `aria-invalid="true"`) {
					t.Fatalf("the page does not say %q: %.3000s", tc.wantText, body)
				}
				return
			}
			m := createdCode.FindStringSubmatch(resp.Header.Get("Location"))
			if m == nil {
				t.Fatalf("location %q", resp.Header.Get("Location"))
			}
			ls, err := sc.links.List(context.Background(), sc.h.room)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				if l.Code == m[1] {
					if l.Source != tc.wantSource || l.Medium != tc.wantMedium || l.Campaign != tc.campaign {
						t.Fatalf("saved %q %q %q", l.Source, l.Medium, l.Campaign)
					}
					return
				}
			}
			t.Fatalf("link %s not listed", m[1])
		})
	}
}
