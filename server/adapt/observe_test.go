package adapt

import (
	"context"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestObserveOrdersCountsMany: n attempts observed at once count as n
// observed one by one (samples, errors, failures, histogram); n < 1 and
// rooms that are not tracked count nothing.
func TestObserveOrdersCountsMany(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns := testNamespace(t)
	now := time.Now().Truncate(time.Second)
	for _, tt := range []struct {
		name    string
		observe func(r *Recorder, room string)
		samples int64
		errors  int64
	}{
		{"many at once", func(r *Recorder, room string) {
			r.ObserveOrders(room, "placed", 40*time.Millisecond, 95)
			r.ObserveOrders(room, "unavailable", 2*time.Second, 5)
		}, 100, 5},
		{"one by one", func(r *Recorder, room string) {
			for range 95 {
				r.ObserveOrder(room, "placed", 40*time.Millisecond)
			}
			for range 5 {
				r.ObserveOrder(room, "unavailable", 2*time.Second)
			}
		}, 100, 5},
		{"none", func(r *Recorder, room string) {
			r.ObserveOrders(room, "placed", time.Millisecond, 0)
			r.ObserveOrders(room, "unavailable", time.Millisecond, -3)
		}, 0, 0},
		{"not tracked", func(r *Recorder, room string) {
			r.Track([]string{room + "-other"})
			r.ObserveOrders(room, "placed", time.Millisecond, 10)
		}, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			name := servicetest.RoomName(t, rdb)
			r := NewRecorder(rdb, ns, "a", nil, quiet)
			r.now = at(now.Add(-time.Second))
			tt.observe(r, name)
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			rd := NewReader(rdb, ns)
			rd.now = at(now.Add(Landed)) // the second before now has landed
			sig, err := rd.Read(ctx, name, 5)
			if err != nil || sig.Samples != tt.samples || sig.Errors != tt.errors || sig.Failed["unavailable"] != tt.errors {
				t.Fatalf("%+v %v, want %d samples, %d errors", sig, err, tt.samples, tt.errors)
			}
			// 95 of 100 in (30 ms, 50 ms]: the p95 is there.
			if tt.samples > 0 && (sig.P95 <= 30*time.Millisecond || sig.P95 > 50*time.Millisecond) {
				t.Fatalf("p95 %v, want within (30 ms, 50 ms]", sig.P95)
			}
		})
	}
}
