package views

import (
	"testing"

	"waitingroom/server/queue"
	"waitingroom/server/salelog"
)

// TestEveryPhaseHasALabel: the dashboard names each phase of the queue in
// both languages.
func TestEveryPhaseHasALabel(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		d := Dash(lang)
		for _, ph := range []string{queue.PhaseScheduled, queue.PhasePrequeue, queue.PhaseOpen, queue.PhaseClosed} {
			if d.Phases[ph] == "" {
				t.Errorf("%s: no label for phase %s", lang, ph)
			}
		}
		if len(d.Phases) != 4 || d.Phase == "" {
			t.Errorf("%s: phases %v", lang, d.Phases)
		}
	}
}

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
