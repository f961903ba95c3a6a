package room

import (
	"errors"
	"strings"
	"testing"
	"time"

	"waitingroom/server/egress"
)

// TestValidateFieldErrors: every refusal of Validate is a *FieldError of
// the field it names, and is ErrInvalid.
func TestValidateFieldErrors(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	before, y1999 := at.Add(-time.Hour), time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		field string
		set   func(*Settings)
		// named is the field the reason starts with, when not field.
		named string
	}{
		{"title", func(s *Settings) { s.Title = "a\x00" }, ""},
		{"rate", func(s *Settings) { s.Rate = 0 }, ""},
		{"maxActive", func(s *Settings) { s.MaxActive = -1 }, ""},
		{"tokenTTLSeconds", func(s *Settings) { s.TokenTTLSeconds = 1 }, ""},
		{"orderRate", func(s *Settings) { s.OrderRate = 0 }, ""},
		{"orderBurst", func(s *Settings) { s.OrderBurst = 0 }, ""},
		{"abandonAfterSeconds", func(s *Settings) { s.AbandonAfterSeconds = 1 }, ""},
		{"returnWithinSeconds", func(s *Settings) { s.ReturnWithinSeconds = 1 }, ""},
		{"shopURL", func(s *Settings) { s.ShopURL = "ftp://x" }, ""},
		{"maxPerBuyer", func(s *Settings) { s.MaxPerBuyer = -1 }, ""},
		{"mode", func(s *Settings) { s.Mode = "x" }, ""},
		{"challenge", func(s *Settings) { s.Challenge = "x" }, ""},
		{"readySpreadMs", func(s *Settings) { ms := MaxReadySpreadMs + 1; s.ReadySpreadMs = &ms }, ""},
		{"prequeueAt", func(s *Settings) { s.PrequeueAt = &at }, ""},
		{"prequeueAt", func(s *Settings) { s.PrequeueAt, s.OpensAt = &at, &before }, ""},
		{"closesAt", func(s *Settings) { s.OpensAt, s.ClosesAt = &at, &before }, "opensAt"},
		{"schedule", func(s *Settings) { s.OpensAt = &y1999 }, ""},
		{"accentColor", func(s *Settings) { s.AccentColor = "red" }, ""},
		{"minRate", func(s *Settings) { s.Adapt.MinRate = -1 }, ""},
		{"minRate", func(s *Settings) { s.Adapt.MinRate, s.Adapt.MaxRate = 50, 40 }, ""},
		{"maxRate", func(s *Settings) { s.Adapt.MaxRate = 0 }, ""},
		{"targetP95Ms", func(s *Settings) { s.Adapt.TargetP95Ms = 0 }, ""},
		{"maxErrorRate", func(s *Settings) { s.Adapt.MaxErrorRate = 2 }, ""},
		{"healthURL", func(s *Settings) { s.Adapt.HealthURL = "ftp://x" }, ""},
		{"healthURL", func(s *Settings) { s.Adapt.HealthURL = "http://169.254.169.254/health" }, ""},
		{"targetURL", func(s *Settings) { s.Gate.TargetURL = "ftp://x" }, ""},
		{"sessionSeconds", func(s *Settings) { s.Gate.SessionSeconds = 1 }, ""},
		{"sessionMode", func(s *Settings) { s.Gate.SessionMode = "x" }, ""},
		{"protect", func(s *Settings) { s.Gate.Protect = []string{"x"} }, ""},
	} {
		t.Run(tc.field, func(t *testing.T) {
			s := Defaults("x")
			tc.set(&s)
			err := s.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("%v (%T): not a *FieldError", err, err)
			}
			named := tc.named
			if named == "" {
				named = tc.field
			}
			if fe.Field != tc.field || !strings.HasPrefix(fe.Error(), named) || fe.Error() != fe.Reason {
				t.Fatalf("field %q reason %q, want field %q", fe.Field, fe.Reason, tc.field)
			}
		})
	}
}

// TestFieldErrorCause: a healthURL host that the server never fetches
// from is refused with egress's error as the cause.
func TestFieldErrorCause(t *testing.T) {
	s := Defaults("x")
	s.Adapt.HealthURL = "http://169.254.169.254/health"
	var refused *egress.RefusedError
	if err := s.Validate(); !errors.As(err, &refused) || refused.Host != "169.254.169.254" {
		t.Fatalf("%v: not refused by egress", err)
	}
}
