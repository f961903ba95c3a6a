package adapt

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/servicetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func at(t time.Time) clockwork.Clock { return clockwork.NewFakeClockAt(t) }

// TestSignalMergesInstances: two instances' attempts in a room merge into
// one signal over the window: the shop's attempts and failures, the p95 of
// the merged histogram, every failure by reason, the pool's figures; the
// seconds outside the window are not counted, and every second expires.
func TestSignalMergesInstances(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	ns := testNamespace(t)
	now := time.Now().Truncate(time.Second)
	pool := func() sql.DBStats { return sql.DBStats{MaxOpenConnections: 10, InUse: 9} }
	a := NewRecorder(rdb, ns, "a", nil, quiet)
	b := NewRecorder(rdb, ns, "b", pool, quiet)

	a.clk, b.clk = at(now.Add(-2*time.Second)), at(now.Add(-2*time.Second))
	for range 90 {
		a.ObserveOrder(name, "placed", 20*time.Millisecond)
	}
	for range 5 {
		b.ObserveOrder(name, "unavailable", 900*time.Millisecond)
	}
	b.ObserveOrder(name, "sold_out", 30*time.Millisecond)
	b.ObserveOrder(name, "token_used", time.Millisecond) // not the shop's
	flush := func() {
		t.Helper()
		for _, r := range []*Recorder{a, b} {
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	flush()
	a.clk = at(now.Add(-1 * time.Second))
	for range 4 {
		a.ObserveOrder(name, "placed", 25*time.Millisecond)
	}
	a.clk = at(now.Add(-20 * time.Second)) // outside any window
	a.ObserveOrder(name, "unavailable", 9*time.Second)
	a.clk = at(now) // the current second: not read yet
	a.ObserveOrder(name, "unavailable", 9*time.Second)
	flush()

	rd := NewReader(rdb, ns)
	rd.clk = at(now.Add(Landed)) // the second before now has landed
	sig, err := rd.Read(ctx, name, 5)
	if err != nil {
		t.Fatal(err)
	}
	if sig.Samples != 100 || sig.Errors != 5 || sig.ErrorRate() != 0.05 {
		t.Fatalf("samples %d errors %d rate %g, want 100 5 0.05", sig.Samples, sig.Errors, sig.ErrorRate())
	}
	if sig.Failed["unavailable"] != 5 || sig.Failed["sold_out"] != 1 || sig.Failed["token_used"] != 1 || len(sig.Failed) != 3 {
		t.Fatalf("failed %v", sig.Failed)
	}
	// 95 of 100 at or under 30 ms, 5 in (750 ms, 1 s]: p95 is 30 ms.
	if sig.P95 < 20*time.Millisecond || sig.P95 > 30*time.Millisecond {
		t.Fatalf("p95 %v, want within (20 ms, 30 ms]", sig.P95)
	}
	if sig.PoolUse != 0.9 {
		t.Fatalf("pool use %g, want 0.9", sig.PoolUse)
	}
	// The exact mean, merged over both instances: (90×20 + 5×900 + 30)
	// ms over 96 in the older second, 25 ms in the newer.
	if older, newer := sig.Secs[len(sig.Secs)-2].Mean(), sig.Secs[len(sig.Secs)-1].Mean(); older != 65937*time.Microsecond || newer != 25*time.Millisecond {
		t.Fatalf("means %v and %v, want 65.937ms and 25ms", older, newer)
	}
	// A window of the last second only, and the same from the whole
	// window's breakdown.
	if sig, err := rd.Read(ctx, name, 1); err != nil || sig.Samples != 4 || sig.Errors != 0 {
		t.Fatalf("last second: %+v %v, want 4 samples", sig, err)
	}
	if last := sig.Last(1); last.Seconds != 1 || last.Samples != 4 || last.Errors != 0 || last.P95 > 30*time.Millisecond ||
		last.PoolUse != 0.9 || last.Failed["unavailable"] != 5 {
		t.Fatalf("Last(1) = %+v, want the last second's 4 orders, the window's failures and pool", last)
	}
	if two := sig.Last(2); two.Samples != 100 || two.Errors != 5 || two.P95 != sig.P95 {
		t.Fatalf("Last(2) = %+v, want the two seconds with orders", two)
	}
	// A second is read once the flushes after its end have landed: until
	// then the newest is the one before.
	rd.clk = at(now.Add(Landed - time.Millisecond))
	if sig, err := rd.Read(ctx, name, 1); err != nil || sig.Samples != 96 || sig.Errors != 5 {
		t.Fatalf("before the last second landed: %+v %v, want the second before (96 samples)", sig, err)
	}
	ttl, err := rdb.TTL(ctx, signalKey(ns, name, now.Add(-2*time.Second).Unix())).Result()
	if err != nil || ttl <= 0 || ttl > keepSeconds*time.Second {
		t.Fatalf("ttl %v %v, want within %d s", ttl, err, keepSeconds)
	}
	// An empty room: no samples, no p95.
	if sig, err := rd.Read(ctx, name+"x", 5); err != nil || sig.Samples != 0 || sig.P95 != 0 {
		t.Fatalf("empty: %+v %v", sig, err)
	}
}

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
			r.clk = at(now.Add(-time.Second))
			tt.observe(r, name)
			if err := r.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			rd := NewReader(rdb, ns)
			rd.clk = at(now.Add(Landed)) // the second before now has landed
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
