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
