package room

import "testing"

// TestAdaptCeiling: the order rate caps the controller when the room's
// orders go through its bucket and it is below maxRate, never under
// minRate; a gate room or a passthrough one is not capped.
func TestAdaptCeiling(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mut       func(*Settings)
		want      float64
		wantByOrd bool
	}{
		{"order rate below maxRate caps", func(s *Settings) { s.OrderRate = 50 }, 50, true},
		{"order rate above maxRate does not", func(s *Settings) { s.OrderRate = 500 }, 200, false},
		{"order rate equal to maxRate does not", func(s *Settings) { s.OrderRate = 200 }, 200, false},
		{"never under minRate", func(s *Settings) { s.OrderRate = 2; s.Adapt.MinRate = 10 }, 10, true},
		{"minRate = maxRate", func(s *Settings) { s.OrderRate = 2; s.Adapt.MinRate = 200 }, 200, false},
		{"a gate room's orders are the shop's", func(s *Settings) { s.OrderRate = 50; s.Gate.TargetURL = "https://shop.example/" }, 200, false},
		{"passthrough skips the bucket", func(s *Settings) { s.OrderRate = 50; s.Mode = ModePassthrough }, 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Defaults("r")
			s.Adapt = Adapt{Adaptive: true, MinRate: 5, MaxRate: 200, TargetP95Ms: 500, MaxErrorRate: 0.02}
			tc.mut(&s)
			got, byOrd := s.AdaptCeiling()
			if got != tc.want || byOrd != tc.wantByOrd {
				t.Fatalf("ceiling %g %v, want %g %v", got, byOrd, tc.want, tc.wantByOrd)
			}
		})
	}
}

// TestRestored: a restored adaptive room restarts at minRate, or, with a
// minRate of 0, at its recorded rate within the bounds; a room that is
// not adaptive keeps its rate.
func TestRestored(t *testing.T) {
	for _, tc := range []struct {
		name     string
		adaptive bool
		min, max float64
		rate     float64
		want     float64
	}{
		{"adaptive: minRate", true, 10, 200, 150, 10},
		{"adaptive, recorded under minRate: minRate", true, 10, 200, 3, 10},
		{"minRate 0: the recorded rate", true, 0, 200, 40, 40},
		{"minRate 0: the recorded rate within maxRate", true, 0, 200, 900, 200},
		{"not adaptive: the operator's rate", false, 10, 200, 150, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Defaults("r")
			s.Rate = tc.rate
			s.Adapt = Adapt{Adaptive: tc.adaptive, MinRate: tc.min, MaxRate: tc.max, TargetP95Ms: 500, MaxErrorRate: 0.02}
			got := s.Restored()
			if got.Rate != tc.want {
				t.Fatalf("restored at %g, want %g", got.Rate, tc.want)
			}
			got.Rate = s.Rate
			if got.Adapt != s.Adapt || got.Title != s.Title {
				t.Fatalf("restored changed more than the rate: %+v", got)
			}
		})
	}
}
