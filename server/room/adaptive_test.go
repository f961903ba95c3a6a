package room

import (
	"math"
	"strings"
	"testing"
)

func TestValidateAdapt(t *testing.T) {
	on := func(s *Settings) { s.Adaptive = true }
	tests := []struct {
		name    string
		mut     func(*Settings)
		wantErr string
	}{
		{"defaults, off", func(*Settings) {}, ""},
		{"defaults, on", on, ""},
		{"minRate 0 pauses", func(s *Settings) { s.Adapt.MinRate = 0 }, ""},
		{"negative minRate", func(s *Settings) { s.Adapt.MinRate = -1 }, "minRate"},
		{"NaN minRate", func(s *Settings) { s.Adapt.MinRate = math.NaN() }, "minRate"},
		{"maxRate 0", func(s *Settings) { s.Adapt.MaxRate = 0 }, "maxRate"},
		{"maxRate above the ceiling", func(s *Settings) { s.Adapt.MaxRate = MaxRate + 1 }, "maxRate"},
		{"the ceiling maxRate", func(s *Settings) { s.Adapt.MaxRate = MaxRate }, ""},
		{"minRate above maxRate", func(s *Settings) { s.Adapt.MinRate, s.Adapt.MaxRate = 60, 50 }, "minRate must not be above maxRate"},
		{"minRate equal to maxRate", func(s *Settings) { s.Adapt.MinRate, s.Adapt.MaxRate = 50, 50 }, ""},
		{"zero target", func(s *Settings) { s.TargetP95Ms = 0 }, "targetP95Ms"},
		{"target too long", func(s *Settings) { s.TargetP95Ms = MaxTargetP95Ms + 1 }, "targetP95Ms"},
		{"error budget 0", func(s *Settings) { s.MaxErrorRate = 0 }, ""},
		{"error budget 1", func(s *Settings) { s.MaxErrorRate = 1 }, ""},
		{"error budget above 1", func(s *Settings) { s.MaxErrorRate = 1.5 }, "maxErrorRate"},
		{"negative error budget", func(s *Settings) { s.MaxErrorRate = -0.1 }, "maxErrorRate"},
		{"rate 0, adaptive, minRate 0", func(s *Settings) { on(s); s.Adapt.MinRate = 0; s.Rate = 0 }, ""},
		{"rate 0, adaptive, minRate 1", func(s *Settings) { on(s); s.Adapt.MinRate = 1; s.Rate = 0 }, "rate"},
		{"rate 0, not adaptive", func(s *Settings) { s.Adapt.MinRate = 0; s.Rate = 0 }, "rate"},
		{"negative rate, adaptive", func(s *Settings) { on(s); s.Adapt.MinRate = 0; s.Rate = -1 }, "rate"},
		{"healthURL at the metadata address", func(s *Settings) { s.HealthURL = "http://169.254.169.254/latest/meta-data/" },
			"healthURL: 169.254.169.254 is a link-local/metadata address"},
		{"healthURL at the metadata address, decimal", func(s *Settings) { s.HealthURL = "http://2852039166/" },
			"healthURL: 2852039166 reads as 169.254.169.254, a link-local/metadata address"},
		{"healthURL at the metadata address, IPv4-mapped", func(s *Settings) { s.HealthURL = "http://[::ffff:169.254.169.254]/" },
			"healthURL: 169.254.169.254 is a link-local/metadata address"},
		{"healthURL at Google's metadata name", func(s *Settings) { s.HealthURL = "http://metadata.google.internal/computeMetadata/v1/" },
			"healthURL: metadata.google.internal is a metadata address"},
		{"healthURL on loopback", func(s *Settings) { s.HealthURL = "http://127.0.0.1:9100/health" }, ""},
		{"healthURL on a private network", func(s *Settings) { s.HealthURL = "http://10.0.3.7/health" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Defaults("x")
			tt.mut(&s)
			err := s.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

func TestPatchAdaptive(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	b := func(v bool) *bool { return &v }
	adaptive := Defaults("r")
	adaptive.Adaptive, adaptive.Rate = true, 30
	tests := []struct {
		name         string
		from         Settings
		p            Patch
		wantAdaptive bool
		wantRate     float64
	}{
		{"turn on keeps a rate inside the bounds", Defaults("r"), Patch{AdaptPatch: AdaptPatch{Adaptive: b(true)}}, true, 50},
		{"turn on clamps the rate into the bounds", Defaults("r"),
			Patch{AdaptPatch: AdaptPatch{Adaptive: b(true), MaxRate: f(20)}}, true, 20},
		{"a manual rate change turns it off", adaptive, Patch{Rate: f(40)}, false, 40},
		{"the same rate keeps it on", adaptive, Patch{Rate: f(30)}, true, 30},
		{"a rate with adaptive true keeps it on, from that rate", adaptive,
			Patch{Rate: f(40), AdaptPatch: AdaptPatch{Adaptive: b(true)}}, true, 40},
		{"a title change keeps it on", adaptive, Patch{Title: new(string)}, true, 30},
		{"narrowing maxRate moves the rate", adaptive, Patch{AdaptPatch: AdaptPatch{MaxRate: f(10)}}, true, 10},
		{"raising minRate moves the rate", adaptive, Patch{AdaptPatch: AdaptPatch{MinRate: f(35)}}, true, 35},
		{"off, bounds do not move the rate", Defaults("r"), Patch{AdaptPatch: AdaptPatch{MaxRate: f(10)}}, false, 50},
		{"turning it off keeps the rate", adaptive, Patch{AdaptPatch: AdaptPatch{Adaptive: b(false)}}, false, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.Apply(tt.from)
			if got.Adaptive != tt.wantAdaptive || got.Rate != tt.wantRate {
				t.Fatalf("adaptive %v rate %g, want %v %g", got.Adaptive, got.Rate, tt.wantAdaptive, tt.wantRate)
			}
		})
	}
}

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

// TestHealthURL: a room's healthURL is empty or an absolute http(s) URL of
// at most 2048 bytes without user:password; Validate names it otherwise.
func TestHealthURL(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"https://shop.example/health", true},
		{"http://10.0.0.5:9100/metrics?token=abc", true},
		{"https://shop.example/" + strings.Repeat("a", MaxHealthURLLen-len("https://shop.example/")), true},
		{"https://shop.example/" + strings.Repeat("a", MaxHealthURLLen), false},
		{"ftp://shop.example/health", false},
		{"/health", false},
		{"shop.example/health", false},
		{"https://", false},
		{"https://user:pw@shop.example/health", false},
		{"https://user@shop.example/health", false},
		{"https://shop.example/health#x", false},
		{"https://shop.example/he alth", false},
		{"https://shop.example/\x7fhealth", false},
		{"javascript:alert(1)", false},
	} {
		a := DefaultAdapt()
		a.HealthURL = tt.url
		err := a.Validate()
		if (err == nil) != tt.ok || ValidHealthURL(tt.url) != tt.ok {
			t.Errorf("%.60q: %v, want ok %v", tt.url, err, tt.ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "healthURL ") {
			t.Errorf("%.60q: error %q does not name healthURL first", tt.url, err)
		}
	}
}
