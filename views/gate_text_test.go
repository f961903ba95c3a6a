package views

import (
	"strings"
	"testing"
)

// TestGateTextsNameTheShop: the gate's buttons name the shop, and the
// console's gate form has an error text for each of its fields (that every
// text is there in both languages is TestTextCatalogues').
func TestGateTextsNameTheShop(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		g := GateTextFor(lang)
		for _, s := range []string{g.ContinueTo, g.Going} {
			if !strings.Contains(s, "{shop}") {
				t.Errorf("%s: %q does not name the shop", lang, s)
			}
		}
		for _, field := range []string{"targetURL", "sessionSeconds", "sessionMode", "protect"} {
			if GateFormTextFor(lang).Err[field] == "" {
				t.Errorf("%s: no error text for %s", lang, field)
			}
		}
	}
}

// TestGateWording pins the words a stranger found misleading: the console
// says which guards need an API key, the Korean Continue button says what
// continues, and the Korean intro lets people in a few at a time (not "a
// few minutes each").
func TestGateWording(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		noKey := GateFormTextFor(lang).NoKey
		for _, want := range []string{"Go", "nginx"} {
			if !strings.Contains(noKey, want) {
				t.Errorf("%s: NoKey %q does not name %s", lang, noKey, want)
			}
		}
	}
	if got := GateTextFor("ko").ContinueTo; got != "{shop}에서 구매 계속하기" {
		t.Errorf("ko ContinueTo = %q", got)
	}
	if intro := For("ko").Intro; strings.Contains(intro, "몇 분씩") || !strings.Contains(intro, "명씩") {
		t.Errorf("ko Intro = %q: want people let in a few at a time", intro)
	}
}
