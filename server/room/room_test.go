package room

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"demo", true},
		{"a", true},
		{"sale-2026-11", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"Demo", false},
		{"a_b", false},
		{"a b", false},
		{"a/b", false},
		{"{demo}", false},
		{"데모", false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.in); got != tt.want {
			t.Errorf("ValidName(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Defaults("x")
	tests := []struct {
		name    string
		mut     func(*Settings)
		wantErr string
	}{
		{"defaults", func(*Settings) {}, ""},
		{"fractional rate", func(s *Settings) { s.Rate = 0.5 }, ""},
		{"zero rate", func(s *Settings) { s.Rate = 0 }, "rate"},
		{"NaN rate", func(s *Settings) { s.Rate = math.NaN() }, "rate"},
		{"huge rate", func(s *Settings) { s.Rate = 1e9 }, "rate"},
		{"the floor rate", func(s *Settings) { s.Rate = MinRate }, ""},
		{"below the floor rate", func(s *Settings) { s.Rate = 0.005 }, "rate"},
		{"the ceiling rate", func(s *Settings) { s.Rate = MaxRate }, ""},
		{"above the ceiling rate", func(s *Settings) { s.Rate = 10001 }, "rate"},
		{"a rate the issuer cannot pass", func(s *Settings) { s.Rate = 100000 }, "rate"},
		{"below the floor order rate", func(s *Settings) { s.OrderRate = 0.005 }, "orderRate"},
		{"above the ceiling order rate", func(s *Settings) { s.OrderRate = 100000 }, "orderRate"},
		{"the floor order rate", func(s *Settings) { s.OrderRate = 0.01 }, ""},
		{"negative maxActive", func(s *Settings) { s.MaxActive = -1 }, "maxActive"},
		{"short ttl", func(s *Settings) { s.TokenTTLSeconds = 1 }, "tokenTTLSeconds"},
		{"zero order rate", func(s *Settings) { s.OrderRate = 0 }, "orderRate"},
		{"zero burst", func(s *Settings) { s.OrderBurst = 0 }, "orderBurst"},
		{"long title", func(s *Settings) { s.Title = strings.Repeat("가", 201) }, "title"},
		{"bad utf8 title", func(s *Settings) { s.Title = "\xff" }, "title"},
		{"control character in the title", func(s *Settings) { s.Title = "a\x00\ab" }, "title"},
		{"bidi override in the title", func(s *Settings) { s.Title = "\u202e" }, "title"},
		{"never abandon", func(s *Settings) { s.AbandonAfterSeconds = 0 }, ""},
		{"abandon too soon", func(s *Settings) { s.AbandonAfterSeconds = 5 }, "abandonAfterSeconds"},
		{"abandon too late", func(s *Settings) { s.AbandonAfterSeconds = 7200 }, "abandonAfterSeconds"},
		{"passthrough", func(s *Settings) { s.Mode = ModePassthrough }, ""},
		{"unknown mode", func(s *Settings) { s.Mode = "fast" }, "mode"},
		// ABSENCE
		{"default return window", func(s *Settings) {}, ""},
		{"return window of a day", func(s *Settings) { s.ReturnWithinSeconds = MaxReturnWithin }, ""},
		{"return window too long", func(s *Settings) { s.ReturnWithinSeconds = MaxReturnWithin + 1 }, "returnWithinSeconds"},
		{"no return window", func(s *Settings) { s.ReturnWithinSeconds = 0 }, "returnWithinSeconds"},
		{"return window shorter than away", func(s *Settings) { s.AbandonAfterSeconds = 600; s.ReturnWithinSeconds = 300 }, "returnWithinSeconds"},

		{"a shop URL", func(s *Settings) { s.ShopURL = "https://shop.example/sale?id=1" }, ""},
		{"an http shop URL", func(s *Settings) { s.ShopURL = "http://shop.example" }, ""},
		{"a relative shop URL", func(s *Settings) { s.ShopURL = "/shop" }, "shopURL"},
		{"a script shop URL", func(s *Settings) { s.ShopURL = "javascript:alert(1)" }, "shopURL"},
		{"a shop URL without a host", func(s *Settings) { s.ShopURL = "https://" }, "shopURL"},
		{"a shop URL with a password", func(s *Settings) { s.ShopURL = "https://a:b@shop.example" }, "shopURL"},
		{"a shop URL with a newline", func(s *Settings) { s.ShopURL = "https://shop.example/\n" }, "shopURL"},
		{"the longest shop URL", func(s *Settings) { s.ShopURL = "https://shop.example/" + strings.Repeat("a", MaxShopURLLen-21) }, ""},
		{"a shop URL too long", func(s *Settings) { s.ShopURL = "https://shop.example/" + strings.Repeat("a", MaxShopURLLen-20) }, "shopURL"},
		{"a per-buyer limit", func(s *Settings) { s.MaxPerBuyer = 2 }, ""},
		{"a negative per-buyer limit", func(s *Settings) { s.MaxPerBuyer = -1 }, "maxPerBuyer"},
		{"challenge auto", func(s *Settings) { s.Challenge = ChallengeAuto }, ""},
		{"challenge always", func(s *Settings) { s.Challenge = ChallengeAlways }, ""},
		{"challenge unset (a room saved before it existed)", func(s *Settings) { s.Challenge = "" }, ""},
		{"an unknown challenge", func(s *Settings) { s.Challenge = "sometimes" }, "challenge must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
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

func TestPatchApply(t *testing.T) {
	rate := 7.5
	paused := true
	shop, perBuyer := "https://shop.example", 2
	got := Patch{Rate: &rate, Paused: &paused, ShopURL: &shop, MaxPerBuyer: &perBuyer}.Apply(Defaults("r"))
	want := Defaults("r")
	want.Rate, want.Paused = 7.5, true
	want.ShopURL, want.MaxPerBuyer = shop, perBuyer
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Apply = %+v, want %+v", got, want)
	}
}
