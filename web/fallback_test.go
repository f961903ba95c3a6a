package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestFallbacks: a trailing slash on a short link or a room redirects to
// the path without it, query kept; other unknown paths answer the HTML
// 404 page in the visitor's language; /api/ unknowns stay JSON.
func TestFallbacks(t *testing.T) {
	h := newHarness(t, nil)
	cases := []struct {
		name, method, path, lang string
		status                   int
		location, ctype, want    string
	}{
		{"short link slash", "GET", "/s/AbCdEfGh/?gclid=x&utm_term=a%20b", "en", 301, "/s/AbCdEfGh?gclid=x&utm_term=a%20b", "", ""},
		{"room slash", "GET", "/r/" + h.room + "/", "en", 301, "/r/" + h.room, "", ""},
		{"room slash, HEAD, query", "HEAD", "/r/" + h.room + "/?utm_source=kakao", "en", 301, "/r/" + h.room + "?utm_source=kakao", "", ""},
		{"room slash, POST", "POST", "/r/" + h.room + "/", "en", 404, "", "text/html", "There is nothing here"},
		{"unknown path, en", "GET", "/nope", "en", 404, "", "text/html", "There is no page at this address"},
		{"unknown path, ko", "GET", "/nope/deeper", "ko", 404, "", "text/html", "이 주소에는 페이지가 없습니다"},
		{"unknown under a room", "GET", "/r/" + h.room + "/nope", "en", 404, "", "text/html", "There is nothing here"},
		{"bare /s/", "GET", "/s/", "en", 404, "", "text/html", "There is nothing here"},
		{"api unknown", "GET", "/api/nope", "en", 404, "", "application/json", `"not_found"`},
		{"api slash", "GET", "/api/rooms/" + h.room + "/products/", "en", 404, "", "application/json", `"not_found"`},
		{"known path, other method", "PATCH", "/healthz", "en", 405, "", "application/json", `"method_not_allowed"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, h.srv.URL+tc.path, nil)
			req.Header.Set("Accept-Language", tc.lang)
			resp, err := noRedirects().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%d %q %q: %.400s", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Content-Type"), b)
			}
		})
	}
}
