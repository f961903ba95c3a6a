package views

import (
	"strings"
	"testing"
)

// TestErrorHeadingsAreWords: no status code is ever a heading.
func TestErrorHeadingsAreWords(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409, 413, 428, 429, 500, 503} {
		for _, lang := range []string{"en", "ko"} {
			html := render(t, Error(ErrorPage{Status: status, Message: "m", T: For(lang), ShopURL: "https://shop.example/"}))
			h1 := html[strings.Index(html, "<h1>")+4 : strings.Index(html, "</h1>")]
			if h1 == "" || strings.ContainsAny(h1, "0123456789") {
				t.Errorf("%d %s: heading %q", status, lang, h1)
			}
			if !strings.Contains(html, `href="https://shop.example/"`) {
				t.Errorf("%d %s: no link back to the shop", status, lang)
			}
		}
	}
}
