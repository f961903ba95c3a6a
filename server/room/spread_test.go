package room

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

func ms(n int) *int { return &n }

func TestValidateReadySpread(t *testing.T) {
	tests := []struct {
		name   string
		spread *int
		tick   time.Duration
		// valid is Validate's verdict, fits ValidateReadySpread's at tick.
		valid, fits bool
	}{
		{"unset: the server's default", nil, time.Second, true, true},
		{"no spread", ms(0), time.Second, true, true},
		{"one millisecond", ms(1), time.Second, true, true},
		{"80% of the tick", ms(800), time.Second, true, true},
		{"one tick", ms(1000), time.Second, true, true},
		{"over one tick", ms(1001), time.Second, true, false},
		{"negative", ms(-1), time.Second, false, false},
		{"the ceiling, with a long tick", ms(MaxReadySpreadMs), time.Minute, true, true},
		{"over the ceiling, with a long tick", ms(MaxReadySpreadMs + 1), time.Minute, false, false},
		{"a short tick", ms(10), 10 * time.Millisecond, true, true},
		{"over a short tick", ms(11), 10 * time.Millisecond, true, false},
		{"an unknown tick bounds by the ceiling", ms(MaxReadySpreadMs), 0, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Defaults("x")
			s.ReadySpreadMs = tt.spread
			if err := s.Validate(); (err == nil) != tt.valid || err != nil && !strings.HasPrefix(err.Error(), "readySpreadMs ") {
				t.Fatalf("Validate = %v, want valid %v (an error naming readySpreadMs)", err, tt.valid)
			}
			err := s.ValidateReadySpread(tt.tick)
			if (err == nil) != tt.fits || err != nil && !strings.HasPrefix(err.Error(), "readySpreadMs ") {
				t.Fatalf("ValidateReadySpread(%v) = %v, want fits %v (an error naming readySpreadMs)", tt.tick, err, tt.fits)
			}
			if want := "between 1 and " + strconv.Itoa(MaxReadySpread(tt.tick)); err != nil && !strings.Contains(err.Error(), want) {
				t.Fatalf("ValidateReadySpread(%v) = %v, want it to say %q", tt.tick, err, want)
			}
		})
	}
}

func TestMaxReadySpread(t *testing.T) {
	for _, tt := range []struct {
		tick time.Duration
		want int
	}{
		{time.Second, 1000}, {10 * time.Millisecond, 10}, {1500 * time.Microsecond, 1},
		{10 * time.Second, MaxReadySpreadMs}, {time.Minute, MaxReadySpreadMs}, {0, MaxReadySpreadMs}, {-time.Second, MaxReadySpreadMs},
	} {
		if got := MaxReadySpread(tt.tick); got != tt.want {
			t.Errorf("MaxReadySpread(%v) = %d, want %d", tt.tick, got, tt.want)
		}
	}
}

// TestReadySpreadPatch: absent keeps the setting, null sets it back to the
// server's default, a number sets it; anything else does not decode.
func TestReadySpreadPatch(t *testing.T) {
	tests := []struct {
		name string
		cur  *int
		body string
		ok   bool
		want *int
	}{
		{"absent keeps a value", ms(300), `{}`, true, ms(300)},
		{"absent keeps unset", nil, `{"title":"t"}`, true, nil},
		{"null unsets", ms(300), `{"readySpreadMs":null}`, true, nil},
		{"a number sets", nil, `{"readySpreadMs":250}`, true, ms(250)},
		{"zero sets no spread", ms(300), `{"readySpreadMs":0}`, true, ms(0)},
		{"a fraction", nil, `{"readySpreadMs":1.5}`, false, nil},
		{"a string", nil, `{"readySpreadMs":"300"}`, false, nil},
		{"a boolean", nil, `{"readySpreadMs":true}`, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Patch
			err := json.Unmarshal([]byte(tt.body), &p)
			if (err == nil) != tt.ok {
				t.Fatalf("decode %s: %v, want ok %v", tt.body, err, tt.ok)
			}
			if !tt.ok {
				if !strings.Contains(err.Error(), "readySpreadMs") {
					t.Fatalf("decode %s: %v, want an error naming readySpreadMs", tt.body, err)
				}
				return
			}
			s := Defaults("x")
			s.ReadySpreadMs = tt.cur
			got := p.Apply(s).ReadySpreadMs
			if !SameReadySpread(got, tt.want) {
				t.Fatalf("Apply(%s) = %v, want %v", tt.body, deref(got), deref(tt.want))
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestReadySpreadJSON: the settings say null for the server's default, and
// read back what they wrote.
func TestReadySpreadJSON(t *testing.T) {
	for _, tt := range []struct {
		spread *int
		want   string
	}{{nil, `"readySpreadMs":null`}, {ms(0), `"readySpreadMs":0`}, {ms(640), `"readySpreadMs":640`}} {
		s := Defaults("x")
		s.ReadySpreadMs = tt.spread
		b, err := json.Marshal(s)
		if err != nil || !strings.Contains(string(b), tt.want) {
			t.Fatalf("Marshal = %s, %v; want it to hold %s", b, err, tt.want)
		}
		var back Settings
		if err := json.Unmarshal(b, &back); err != nil || !SameReadySpread(back.ReadySpreadMs, tt.spread) {
			t.Fatalf("read back %v (%v), want %v", deref(back.ReadySpreadMs), err, deref(tt.spread))
		}
	}
}

func TestSameReadySpread(t *testing.T) {
	for _, tt := range []struct {
		a, b *int
		want bool
	}{{nil, nil, true}, {ms(0), nil, false}, {nil, ms(0), false}, {ms(5), ms(5), true}, {ms(5), ms(6), false}} {
		if got := SameReadySpread(tt.a, tt.b); got != tt.want {
			t.Errorf("SameReadySpread(%v, %v) = %v, want %v", deref(tt.a), deref(tt.b), got, tt.want)
		}
	}
}
