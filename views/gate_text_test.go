package views

import (
	"reflect"
	"strings"
	"testing"
)

// TestGateTextsAreComplete: every gate text, of the buyer's pages and of
// the console, is said in both languages, with its placeholders.
func TestGateTextsAreComplete(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		g := For(lang).Gate()
		for _, v := range []reflect.Value{reflect.ValueOf(g), reflect.ValueOf(GateFormFor(lang))} {
			for i := range v.NumField() {
				if f := v.Field(i); f.Kind() == reflect.String && f.String() == "" {
					t.Errorf("%s: %s.%s is empty", lang, v.Type().Name(), v.Type().Field(i).Name)
				}
			}
		}
		for _, s := range []string{g.ContinueTo, g.Going} {
			if !strings.Contains(s, "{shop}") {
				t.Errorf("%s: %q does not name the shop", lang, s)
			}
		}
		for _, field := range []string{"targetURL", "sessionSeconds", "sessionMode", "protect"} {
			if GateFormFor(lang).Err[field] == "" {
				t.Errorf("%s: no error text for %s", lang, field)
			}
		}
	}
	if For("ko").Gate() == For("en").Gate() {
		t.Error("the Korean gate texts are the English ones")
	}
}

// TestGateWording pins the words a stranger found misleading: the console
// says which guards need an API key, the Korean Continue button says what
// continues, and the Korean intro lets people in a few at a time (not "a
// few minutes each").
func TestGateWording(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		noKey := GateFormFor(lang).NoKey
		for _, want := range []string{"Go", "nginx"} {
			if !strings.Contains(noKey, want) {
				t.Errorf("%s: NoKey %q does not name %s", lang, noKey, want)
			}
		}
	}
	if got := For("ko").Gate().ContinueTo; got != "{shop}에서 구매 계속하기" {
		t.Errorf("ko ContinueTo = %q", got)
	}
	if intro := For("ko").Intro; strings.Contains(intro, "몇 분씩") || !strings.Contains(intro, "명씩") {
		t.Errorf("ko Intro = %q: want people let in a few at a time", intro)
	}
}
