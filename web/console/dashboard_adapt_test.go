package console

import (
	"math"
	"strings"
	"testing"
	"time"
	"waitingroom/server/adapt"
	"waitingroom/server/queue"
	"waitingroom/views"
)

// TestAdaptReasonWords: every reason of the controller (h15sig's
// cut_health included) is explained in every language of the console.
func TestAdaptReasonWords(t *testing.T) {
	codes := append([]string{"", "cut_health"}, adapt.Reasons...)
	for _, lang := range []string{"en", "ko"} {
		words := views.DashTextFor(lang).Adapt.Reasons
		for _, code := range codes {
			if strings.TrimSpace(words[code]) == "" {
				t.Errorf("%s: no words for reason %q", lang, code)
			}
		}
	}
}

// TestRateSeries: the controller's rate on the window's seconds, from its
// changes.
func TestRateSeries(t *testing.T) {
	now := time.Date(2026, 12, 1, 6, 0, 0, 500e6, time.UTC)
	ago := func(s int) time.Time { return now.Add(-time.Duration(s) * time.Second) }
	last := dashSeconds - 1
	nan := math.NaN()
	for _, tc := range []struct {
		name    string
		changes []queue.AdaptChange // newest first
		full    bool
		rateNow float64
		want    map[int]float64 // second index → rate
	}{
		{"no change: the rate now all along", nil, false, 30, map[int]float64{0: 30, 300: 30, last: 30}},
		{"steps", []queue.AdaptChange{{At: ago(10), From: 20, To: 14}, {At: ago(100), From: 10, To: 20}}, false, 14,
			map[int]float64{0: 10, last - 101: 10, last - 100: 20, last - 11: 20, last - 10: 14, last: 14}},
		{"a full history: before it, unknown", []queue.AdaptChange{{At: ago(100), From: 10, To: 20}}, true, 20,
			map[int]float64{0: nan, last - 101: nan, last - 100: 20, last: 20}},
		{"changes before the window", []queue.AdaptChange{{At: ago(5000), From: 10, To: 20}}, false, 20,
			map[int]float64{0: 20, last: 20}},
		{"the last second is the rate now", []queue.AdaptChange{{At: now.Add(time.Minute), From: 10, To: 20}}, false, 20,
			map[int]float64{0: 10, last - 1: 10, last: 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := rateSeries(tc.changes, tc.full, tc.rateNow, now)
			if len(v) != dashSeconds {
				t.Fatalf("%d seconds, want %d", len(v), dashSeconds)
			}
			for i, want := range tc.want {
				if got := v[i]; got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("second %d: %g, want %g", i, got, want)
				}
			}
		})
	}
}
