package k6

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestCalibrateRecommendAdaptive: the step table gives minRate (half the
// fixed rate), maxRate (the knee's step, or 1.5 times the last step
// without a knee), the p95 target (twice the p95 at the fixed rate,
// rounded up to 50 ms) and an orderRate that does not cap the controller;
// its JSON is settings the admin API takes.
func TestCalibrateRecommendAdaptive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []Step
		want  AdaptiveSettings
		ok    bool
	}{
		{"the seed's table", seedSteps, AdaptiveSettings{true, 20, 60, 300, 60}, true},
		{"throughput falls behind", []Step{{Target: 20, Actual: 20, P95: ms(50)}, {Target: 30, Actual: 30, P95: ms(60)}, {Target: 40, Actual: 31, P95: ms(70)}},
			AdaptiveSettings{true, 12, 40, 100, 40}, true},
		{"no knee in range", []Step{{Target: 20, Actual: 20, P95: ms(50)}, {Target: 30, Actual: 30, P95: ms(55)}},
			AdaptiveSettings{true, 12, 45, 100, 45}, true},
		{"a p95 on a 50 ms boundary stays", []Step{{Target: 100, Actual: 100, P95: ms(125)}, {Target: 200, Actual: 120, P95: ms(9000)}},
			AdaptiveSettings{true, 40, 200, 250, 200}, true},
		{"tiny rates: a floor of 1", []Step{{Target: 2, Actual: 2, P95: ms(3)}, {Target: 3, Actual: 1, P95: ms(4000)}},
			AdaptiveSettings{true, 1, 3, 50, 3}, true},
		{"a slow shop: the target's bound", []Step{{Target: 10, Actual: 10, P95: 40 * time.Second}, {Target: 20, Actual: 10, P95: 90 * time.Second}},
			AdaptiveSettings{true, 4, 20, 60000, 20}, true},
		{"broken from the start", []Step{{Target: 20, Actual: 5, P95: ms(9000)}}, AdaptiveSettings{}, false},
		{"empty", nil, AdaptiveSettings{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := RecommendAdaptive(tc.steps, 0.2)
			if ok != tc.ok || r.Settings != tc.want {
				t.Fatalf("RecommendAdaptive = %+v %v, want %+v %v", r.Settings, ok, tc.want, tc.ok)
			}
			if !ok {
				return
			}
			// The JSON to paste is a patch the admin API accepts.
			var p room.Patch
			dec := json.NewDecoder(bytes.NewReader([]byte(r.Settings.JSON())))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&p); err != nil {
				t.Fatalf("%s: %v", r.Settings.JSON(), err)
			}
			set := p.Apply(room.Defaults("r"))
			if err := set.Validate(); err != nil || !set.Adaptive || set.MaxRate != tc.want.MaxRate {
				t.Fatalf("%s applied: %+v %v", r.Settings.JSON(), set.Adapt, err)
			}
			if c, byOrders := set.AdaptCeiling(); byOrders || c != tc.want.MaxRate {
				t.Fatalf("the order rate caps the controller at %g, want maxRate %g", c, tc.want.MaxRate)
			}
		})
	}
}

// TestCalibrateFormatAdaptive: the output says each setting and why, and
// the exact request.
func TestCalibrateFormatAdaptive(t *testing.T) {
	r, _ := RecommendAdaptive(seedSteps, 0.2)
	out := FormatAdaptive(r, "demo")
	for _, want := range []string{
		"minRate     20/s", "maxRate     60/s", "50/s held", "targetP95Ms 300", "twice the p95 at 40/s (140ms)",
		"PUT /api/admin/rooms/demo", `{"adaptive":true,"minRate":20,"maxRate":60,"targetP95Ms":300,"orderRate":60}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	r, _ = RecommendAdaptive([]Step{{Target: 20, Actual: 20, P95: ms(50)}, {Target: 30, Actual: 30, P95: ms(55)}}, 0.2)
	if out := FormatAdaptive(r, "demo"); !strings.Contains(out, "no knee up to 30/s") {
		t.Errorf("no knee: %s", out)
	}
}
