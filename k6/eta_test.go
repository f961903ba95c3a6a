package k6

import (
	"math"
	"testing"
	"time"
)

func TestETAResultError(t *testing.T) {
	s := time.Second
	res := ETAResult{Shown: []ETAShown{
		{At: 1 * s, ETA: 10, Real: 8, Enter: true}, // done at 9 s
		{At: 2 * s, ETA: 5, Real: 5},               // done at 7 s
		{At: 12 * s, ETA: 4, Real: 6, Enter: true}, // done at 18 s
	}}
	tests := []struct {
		name             string
		from, to, doneBy time.Duration
		enterOnly        bool
		want             ETAError
	}{
		{"all", 0, time.Hour, 0, false, ETAError{N: 3, MAE: 4.0 / 3, MeanReal: 19.0 / 3, Relative: 4.0 / 19}},
		{"enters", 0, time.Hour, 0, true, ETAError{N: 2, MAE: 2, MeanReal: 7, Relative: 4.0 / 14}},
		{"a window", 0, 10 * s, 0, false, ETAError{N: 2, MAE: 1, MeanReal: 6.5, Relative: 2.0 / 13}},
		{"let in by 8 s", 0, time.Hour, 8 * s, false, ETAError{N: 1, MAE: 0, MeanReal: 5, Relative: 0}},
		{"empty", 20 * s, time.Hour, 0, false, ETAError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := res.Error(tt.from, tt.to, tt.doneBy, tt.enterOnly)
			if got.N != tt.want.N || math.Abs(got.MAE-tt.want.MAE) > 1e-9 || math.Abs(got.MeanReal-tt.want.MeanReal) > 1e-9 ||
				math.Abs(got.Relative-tt.want.Relative) > 1e-9 {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := (ETAError{}).String(); got != "no ETA in this window" {
		t.Fatalf("empty window prints %q", got)
	}
}

func TestJSONNumber(t *testing.T) {
	for in, want := range map[string]float64{`{"estimatedWaitSeconds":12,"x":1}`: 12, `{"estimatedWaitSeconds":3}`: 3} {
		if got, ok := jsonNumber([]byte(in), `"estimatedWaitSeconds":`); !ok || got != want {
			t.Fatalf("%s: %v %v", in, got, ok)
		}
	}
	for _, in := range []string{`{"estimatedWaitSeconds":null}`, `{"rank":1}`} {
		if _, ok := jsonNumber([]byte(in), `"estimatedWaitSeconds":`); ok {
			t.Fatalf("%s: a number read", in)
		}
	}
}
