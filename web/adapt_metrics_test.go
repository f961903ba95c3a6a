package web

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAdaptedMetrics: each decision applied counts under its room and
// reason and sets the room's rate gauge; a room the issuer does not list
// and a reason that is no code are not recorded.
func TestAdaptedMetrics(t *testing.T) {
	m := NewMetrics()
	m.Listed([]string{"sale"})
	m.Adapted("sale", "increase", 10, 15)
	m.Adapted("sale", "increase", 15, 20)
	m.Adapted("sale", "cut_latency", 20, 14)
	m.Adapted("gone", "increase", 10, 15)
	m.Adapted("sale", "Not a code!", 14, 1)
	for _, tc := range []struct {
		reason string
		want   float64
	}{{"increase", 2}, {"cut_latency", 1}} {
		if got := testutil.ToFloat64(m.AdaptDecisions.WithLabelValues("sale", tc.reason)); got != tc.want {
			t.Errorf("%s: %g decisions, want %g", tc.reason, got, tc.want)
		}
	}
	if got := testutil.ToFloat64(m.AdaptRate.WithLabelValues("sale")); got != 14 {
		t.Errorf("rate %g, want 14", got)
	}
	if n := testutil.CollectAndCount(m.AdaptDecisions); n != 2 {
		t.Errorf("%d decision series, want 2 (the unlisted room and the bad reason left out)", n)
	}
	m.Listed(nil)
	if n := testutil.CollectAndCount(m.AdaptRate); n != 0 {
		t.Errorf("%d rate series after the room went, want 0", n)
	}
}
