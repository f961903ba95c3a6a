package web

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"waitingroom/server/queue"
)

// TestDeparturesMetric exports each room's departures by reason, as the
// issuer's tick reads them from Redis.
func TestDeparturesMetric(t *testing.T) {
	m := NewMetrics()
	m.Ticked("sale", queue.Admission{Departures: queue.Departures{Leaves: 3, Abandoned: 5, Expired: 7}}, 0, nil)
	for reason, want := range map[string]float64{"leave": 3, "abandoned": 5, "expired": 7} {
		if got := testutil.ToFloat64(m.Departures.WithLabelValues("sale", reason)); got != want {
			t.Errorf("waitingroom_departures{reason=%q} = %v, want %v", reason, got, want)
		}
	}
}
