package views

import (
	"testing"

	"waitingroom/server/salelog"
)

// TestEveryEventHasALabel: every sale event (salelog.Events, which its
// own test keeps complete) is named in the timeline in both languages.
func TestEveryEventHasALabel(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		d := Dash(lang)
		for _, ev := range salelog.Events {
			a := salelog.Action(ev)
			if label := d.Events[a]; label == "" || label == a {
				t.Errorf("%s: no label for %s", lang, a)
			}
		}
	}
}
