package room

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"waitingroom/server/identity/identitytest"
)

// TestValidateLines: a room has no lines, or 1 to MaxLines named lines
// whose shares add up to 1, each open, by code or by identity; each
// refusal names its field, "lines" or "access".
func TestValidateLines(t *testing.T) {
	pem := identitytest.NewKey(t, "ec", "").PEM(t)
	at := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	presale := func(share float64, access string) Line { return Line{Name: "presale", Share: share, Access: access} }
	general := func(share float64) Line { return Line{Name: "general", Share: share, Access: LineOpen} }
	tests := []struct {
		name  string
		lines []Line
		mut   func(*Settings)
		field string // "" valid
		say   string // what the error says
	}{
		{"none", nil, nil, "", ""},
		{"an empty list", []Line{}, nil, "", ""},
		{"one line", []Line{{Name: "all", Share: 1}}, nil, "", ""},
		{"two lines", []Line{presale(0.7, LineCode), general(0.3)}, nil, "", ""},
		{"the most lines", []Line{{"a", 0.25, ""}, {"b", 0.25, ""}, {"c", 0.25, ""}, {"d", 0.25, ""}}, nil, "", ""},
		{"shares within a thousandth of 1", []Line{presale(0.7005, LineCode), general(0.3)}, nil, "", ""},
		{"float sums", []Line{{"a", 0.1, ""}, {"b", 0.2, ""}, {"c", 0.7, ""}}, nil, "", ""},
		{"too many lines", []Line{{"a", 0.2, ""}, {"b", 0.2, ""}, {"c", 0.2, ""}, {"d", 0.2, ""}, {"e", 0.2, ""}}, nil, "lines", "at most 4"},
		{"an empty name", []Line{{Name: "", Share: 1}}, nil, "lines", "a name of 1 to 32"},
		{"a name with a space", []Line{{Name: "pre sale", Share: 1}}, nil, "lines", `"pre sale"`},
		{"a name too long", []Line{{Name: strings.Repeat("a", 33), Share: 1}}, nil, "lines", "a name of 1 to 32"},
		{"a name twice", []Line{presale(0.5, ""), presale(0.5, "")}, nil, "lines", `"presale" names two`},
		{"names differ by case", []Line{{"vip", 0.5, ""}, {"VIP", 0.5, ""}}, nil, "", ""},
		{"a share of 0", []Line{presale(0, ""), general(1)}, nil, "lines", "above 0 and at most 1"},
		{"a negative share", []Line{presale(-0.5, ""), general(1.5)}, nil, "lines", "above 0 and at most 1"},
		{"a share over 1", []Line{presale(1.5, "")}, nil, "lines", "above 0 and at most 1"},
		{"a share that is no number", []Line{presale(math.NaN(), "")}, nil, "lines", "above 0 and at most 1"},
		{"an infinite share", []Line{presale(math.Inf(1), "")}, nil, "lines", "above 0 and at most 1"},
		{"shares short of 1", []Line{presale(0.6, LineCode), general(0.3)}, nil, "lines", "the lines' shares must add up to 1; they add up to 0.9"},
		{"shares over 1", []Line{presale(0.8, LineCode), general(0.3)}, nil, "lines", "they add up to 1.1"},
		{"an unknown access", []Line{presale(1, "vip")}, nil, "lines", `"vip"`},
		{"room-level codes", []Line{presale(1, LineCode)}, func(s *Settings) { s.Access.Access = AccessCode }, "access", "each line's access"},
		{"room-level open", []Line{presale(1, LineCode)}, func(s *Settings) { s.Access.Access = AccessOpen }, "", ""},
		{"room-level codes without lines", nil, func(s *Settings) { s.Access.Access = AccessCode }, "", ""},
		{"an identity line without identities", []Line{presale(1, LineIdentity)}, nil, "lines", `need the room's identity to be "optional" or "required"`},
		{"an identity line with identities", []Line{presale(0.5, LineIdentity), general(0.5)}, func(s *Settings) {
			s.Identity, s.IdentityKeys = IdentityOptional, pem
		}, "", ""},
		{"a pre-queue, drawn into each line", []Line{presale(1, "")}, func(s *Settings) {
			before := at.Add(-time.Hour)
			s.PrequeueAt, s.OpensAt = &before, &at
		}, "", ""},
		{"an opening without a pre-queue", []Line{presale(1, "")}, func(s *Settings) { s.OpensAt = &at }, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Defaults("x")
			s.Lines = tt.lines
			if tt.mut != nil {
				tt.mut(&s)
			}
			err := s.Validate()
			var fe *FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate: %v, want valid", err)
			case tt.field == "":
			case !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, ErrInvalid):
				t.Fatalf("Validate: %v, want an error of field %s", err, tt.field)
			case !strings.Contains(err.Error(), tt.say):
				t.Fatalf("Validate: %v, want it to say %q", err, tt.say)
			}
		})
	}
}

// TestValidateLinesSharesError: shares that do not add up to 1 are a
// *SharesError with their sum, rounded as typed.
func TestValidateLinesSharesError(t *testing.T) {
	s := Defaults("x")
	s.Lines = []Line{{"a", 0.7, ""}, {"b", 0.2, ""}}
	var se *SharesError
	if err := s.Validate(); !errors.As(err, &se) || FormatShare(se.Sum) != "0.9" {
		t.Fatalf("Validate: %v, want a *SharesError of 0.9", err)
	}
}

// TestLinesPatch: absent keeps the lines, null or [] clears them, a list
// sets them with their access spelled out; anything else does not decode.
func TestLinesPatch(t *testing.T) {
	two := []Line{{"presale", 0.7, LineCode}, {"general", 0.3, LineOpen}}
	tests := []struct {
		name string
		cur  []Line
		body string
		ok   bool
		want []Line
	}{
		{"absent keeps lines", two, `{}`, true, two},
		{"absent keeps none", nil, `{"title":"t"}`, true, nil},
		{"null clears", two, `{"lines":null}`, true, nil},
		{"[] clears", two, `{"lines":[]}`, true, nil},
		{"a list sets", nil, `{"lines":[{"name":"presale","share":0.7,"access":"code"},{"name":"general","share":0.3,"access":"open"}]}`, true, two},
		{"an empty access is open", nil, `{"lines":[{"name":"all","share":1}]}`, true, []Line{{"all", 1, LineOpen}}},
		{"an unknown field", nil, `{"lines":[{"name":"all","shares":1}]}`, false, nil},
		{"not a list", nil, `{"lines":"presale"}`, false, nil},
		{"a share as text", nil, `{"lines":[{"name":"all","share":"1"}]}`, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Patch
			err := json.Unmarshal([]byte(tt.body), &p)
			if (err == nil) != tt.ok {
				t.Fatalf("Unmarshal(%s) = %v, want ok %v", tt.body, err, tt.ok)
			}
			if !tt.ok {
				return
			}
			s := Defaults("x")
			s.Lines = tt.cur
			if got := p.Apply(s).Lines; !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Apply: lines %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestNormalizeLines: "" access is open, none is nil, and the input is
// not changed.
func TestNormalizeLines(t *testing.T) {
	in := []Line{{"a", 0.5, ""}, {"b", 0.5, LineIdentity}}
	tests := []struct {
		name string
		in   []Line
		want []Line
	}{
		{"nil", nil, nil},
		{"empty", []Line{}, nil},
		{"access spelled out", in, []Line{{"a", 0.5, LineOpen}, {"b", 0.5, LineIdentity}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NormalizeLines(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("NormalizeLines = %#v, want %#v", got, tt.want)
			}
		})
	}
	if in[0].Access != "" {
		t.Fatalf("NormalizeLines changed its input: %#v", in)
	}
}

// TestLineIndex: a line is found by its name; a room without lines has
// one line, named "".
func TestLineIndex(t *testing.T) {
	with := Defaults("x")
	with.Lines = []Line{{"presale", 0.7, LineCode}, {"general", 0.3, LineOpen}}
	tests := []struct {
		name string
		s    Settings
		line string
		i    int
		ok   bool
	}{
		{"the first line", with, "presale", 0, true},
		{"the second line", with, "general", 1, true},
		{"an unknown line", with, "vip", 0, false},
		{"the unnamed line of a room with lines", with, "", 0, false},
		{"the unnamed line of a room without", Defaults("x"), "", 0, true},
		{"a named line of a room without", Defaults("x"), "presale", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if i, ok := tt.s.LineIndex(tt.line); i != tt.i || ok != tt.ok {
				t.Fatalf("LineIndex(%q) = %d, %v, want %d, %v", tt.line, i, ok, tt.i, tt.ok)
			}
		})
	}
}

// TestLineNeeds: a line's access says what joining it takes.
func TestLineNeeds(t *testing.T) {
	tests := []struct {
		access         string
		code, identity bool
	}{
		{"", false, false}, {LineOpen, false, false}, {LineCode, true, false}, {LineIdentity, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.access, func(t *testing.T) {
			l := Line{Name: "l", Share: 1, Access: tt.access}
			if l.NeedsCode() != tt.code || l.NeedsIdentity() != tt.identity {
				t.Fatalf("%+v: NeedsCode %v, NeedsIdentity %v, want %v, %v", l, l.NeedsCode(), l.NeedsIdentity(), tt.code, tt.identity)
			}
		})
	}
}
