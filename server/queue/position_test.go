package queue

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"waitingroom/server/room"
)

func TestPollingInterval(t *testing.T) {
	tests := []struct {
		rank     int64
		tier     int
		min, max int
	}{
		{0, 1, 1, 1},
		{99, 1, 1, 1},
		{100, 3, 3, 4},
		{999, 3, 3, 4},
		{1000, 5, 5, 7},
		{1 << 40, 5, 5, 7},
	}
	for _, tt := range tests {
		if got := PollingTier(tt.rank); got != tt.tier {
			t.Errorf("PollingTier(%d) = %d, want %d", tt.rank, got, tt.tier)
		}
		seen := map[int]bool{}
		for range 500 {
			got := PollingInterval(tt.rank)
			if got < tt.min || got > tt.max {
				t.Fatalf("PollingInterval(%d) = %d, want %d..%d", tt.rank, got, tt.min, tt.max)
			}
			seen[got] = true
		}
		if len(seen) != tt.max-tt.min+1 {
			t.Errorf("PollingInterval(%d) took %d distinct values, want jitter over %d..%d", tt.rank, len(seen), tt.min, tt.max)
		}
	}
}

func TestEstimatedWait(t *testing.T) {
	tests := []struct {
		rank int64
		rate float64
		want int64
	}{
		{0, 50, 1},
		{49, 50, 1},
		{50, 50, 2},
		{999, 50, 20},
		{9, 0.5, 20},
		{5, 0, 0},
		{5, -1, 0},
		// A deep line at the floor rate: clamped, never an overflow.
		{1 << 62, room.MinRate, MaxEstimatedWait},
		{math.MaxInt64, room.MinRate, MaxEstimatedWait},
		{1 << 40, room.MinRate, MaxEstimatedWait},
		{1000000, room.MinRate, 100000100},
		{-5, 50, 1},
	}
	for _, tt := range tests {
		if got := EstimatedWait(tt.rank, tt.rate); got != tt.want {
			t.Errorf("EstimatedWait(%d, %v) = %d, want %d", tt.rank, tt.rate, got, tt.want)
		}
	}
}

func TestSlotsWait(t *testing.T) {
	wave := &Slots{Rate: 10, MaxActive: 4, Hold: 20, Free: []int64{5000, 5000, 6000, 6000}}
	tests := []struct {
		name  string
		slots *Slots
		rank  int64
		want  float64
		ok    bool
	}{
		{"first of a wave", wave, 0, 5, true},
		{"second wave of the first cycle", wave, 2, 6, true},
		{"next cycle", wave, 5, 25, true},
		{"the rate binds", &Slots{Rate: 1, MaxActive: 4, Hold: 20, Free: []int64{0, 0, 0, 0}}, 3, 4, true},
		{"sampled: between two samples", &Slots{Rate: 1000, MaxActive: 64, Hold: 10, Free: []int64{0, 2000}}, 16, 1, true},
		{"sampled: past the last sample", &Slots{Rate: 1000, MaxActive: 4, Hold: 10, Free: []int64{0, 2000}}, 3, 6, true},
		{"no schedule", nil, 3, 0, false},
		{"no hold", &Slots{Rate: 1, MaxActive: 4, Free: []int64{0}}, 3, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.slots.Wait(tt.rank)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("Wait(%d) = %v, %v; want %v, %v", tt.rank, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestEstimatedWaitAgainstTheTicks holds the ETA of ranks 0..400 against
// a simulated issuer: ticks every second admit the credit accrued at the
// rate (fractions carried), and a position is read at every tenth of the
// second between two ticks. The mean relative error |ETA - real| / real
// stays within 15% over ranks 10-400 and near the front, and the ETA is
// not one tick long: its mean error is within ±0.15 s. At rate 50 the
// ranks under 50 are admitted within the second, where the ETA says its
// floor of 1 s (whole seconds cannot be 15% right there): the rows start
// at 50.
func TestEstimatedWaitAgainstTheTicks(t *testing.T) {
	const tick = time.Second
	tests := []struct {
		rate         float64
		from, to     int64 // ranks
		maxRel, bias float64
	}{
		{10, 10, 400, 0.15, 0.15},
		{10, 10, 39, 0.15, 0.15},
		{50, 50, 400, 0.15, 0.15},
		{50, 50, 199, 0.15, 0.15},
	}
	for _, tt := range tests {
		// admittedAt[k]: the tick, in seconds after the last one, that
		// admits rank k.
		admittedAt := make([]float64, tt.to+1)
		credit, k := 0.0, int64(0)
		for at := 1; k <= tt.to; at++ {
			credit += tt.rate * tick.Seconds()
			for ; credit >= 1-1e-9 && k <= tt.to; k++ {
				credit--
				admittedAt[k] = float64(at) * tick.Seconds()
			}
		}
		var rel, signed float64
		n := 0
		for rank := tt.from; rank <= tt.to; rank++ {
			for tenth := range 10 {
				since := time.Duration(tenth) * tick / 10
				real := admittedAt[rank] - since.Seconds()
				eta := float64(EstimatedWaitAt(rank, tt.rate, TickPhase{Since: since, Tick: tick}))
				rel += math.Abs(eta-real) / real
				signed += eta - real
				n++
			}
		}
		rel, signed = rel/float64(n), signed/float64(n)
		t.Logf("rate %v, ranks %d-%d: mean relative error %.1f%%, mean error %+.2f s", tt.rate, tt.from, tt.to, 100*rel, signed)
		if rel > tt.maxRel || math.Abs(signed) > tt.bias {
			t.Errorf("rate %v, ranks %d-%d: mean relative error %.1f%% (want at most %.0f%%), mean error %+.2f s (want within ±%.2f s)",
				tt.rate, tt.from, tt.to, 100*rel, 100*tt.maxRel, signed, tt.bias)
		}
	}
}

// TestETATellsTheTruth checks the throughput the ETA counts on: the rate,
// followed at once when it changes; the rate at which slots free up when
// maxActive binds (a pass held for its whole TTL until releases say
// otherwise); and no ETA at all while paused.
func TestETATellsTheTruth(t *testing.T) {
	ctx := context.Background()
	eta := func(t *testing.T, e *Engine, name, v string) *int64 {
		t.Helper()
		p, err := e.Position(ctx, name, v)
		if err != nil || p.Status != StatusWaiting {
			t.Fatalf("position %+v %v", p, err)
		}
		return p.EstimatedWaitSeconds
	}
	want := func(t *testing.T, what string, got *int64, w int64) {
		t.Helper()
		if got == nil || *got != w {
			t.Fatalf("%s: ETA %v, want %d s", what, got, w)
		}
	}

	t.Run("rate change", func(t *testing.T) {
		s := settings(func(s *room.Settings) { s.Rate = 10 })
		e, name, _ := newRoom(t, s)
		vs := visitors(t, 100)
		for _, v := range vs {
			e.Enter(ctx, name, v)
		}
		// A measured rate from the old setting must not linger.
		for range 3 {
			admitAfter(t, e, name, 1100*time.Millisecond, time.Second, 20)
		}
		last := vs[len(vs)-1]
		p, _ := e.Position(ctx, name, last)
		s.Rate = 1
		if err := e.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		want(t, "after 10/s -> 1/s", eta(t, e, name, last), p.Rank+1)
	})

	t.Run("between ticks", func(t *testing.T) {
		// Read 600 ms after the last tick (at most a tick): the next is 400
		// ms away, and admits ranks 0-9 at 10/s.
		e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 10; s.AbandonAfterSeconds = 0 }))
		vs := visitors(t, 30)
		for _, v := range vs {
			e.Enter(ctx, name, v)
		}
		now, err := rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		at := now.Add(-600 * time.Millisecond)
		e.SetClock(func() time.Time { return at })
		if a, err := e.Admit(ctx, name, time.Second, tokens(t, 20)); err != nil || len(a.Visitors) != 0 {
			t.Fatalf("tick: %+v %v, want no credit", a, err)
		}
		at = now
		want(t, "rank 10, admitted in 1.4 s", eta(t, e, name, vs[10]), 1)
		want(t, "rank 25, admitted in 2.4 s", eta(t, e, name, vs[25]), 2)
	})

	t.Run("maxActive binds", func(t *testing.T) {
		e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 100; s.MaxActive = 2; s.TokenTTLSeconds = 10 }))
		vs := visitors(t, 7)
		for _, v := range vs {
			e.Enter(ctx, name, v)
		}
		// Two slots, each held up to 10 s: the 7th in line goes in at 30 s.
		want(t, "unmeasured", eta(t, e, name, vs[6]), 30)
		a := admitAfter(t, e, name, 110*time.Millisecond, 100*time.Millisecond, 7)
		if len(a.Visitors) != 2 {
			t.Fatalf("admitted %d, want the 2 slots", len(a.Visitors))
		}
		// Both passes are given up at once: slots free in about 0 s, so
		// the rate binds again.
		for _, v := range a.Visitors {
			e.Leave(ctx, name, v)
		}
		admitAfter(t, e, name, 30*time.Millisecond, 100*time.Millisecond, 0)
		want(t, "measured fast releases", eta(t, e, name, vs[6]), 1)
	})

	t.Run("nobody admitted", func(t *testing.T) {
		s := settings(nil)
		e, name, _ := newRoom(t, s)
		v := visitors(t, 1)[0]
		e.Enter(ctx, name, v)
		s.Mode = room.ModeClosed
		if err := e.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		if got := eta(t, e, name, v); got != nil {
			t.Fatalf("mode closed: ETA %d s, want none", *got)
		}
	})

	t.Run("paused", func(t *testing.T) {
		e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Paused = true }))
		v := visitors(t, 1)[0]
		p, err := e.Enter(ctx, name, v)
		if err != nil || !p.Paused || p.EstimatedWaitSeconds != nil {
			t.Fatalf("paused: %+v %v, want paused and no ETA", p, err)
		}
	})
}

// ageSession rewrites session id as if its pass had taken its slot heldFor
// ago (and the session had started then), and as if its expiry were now
// expiresIn away (a renew, or the end of a fixed session, drawing near).
func ageSession(t *testing.T, e *Engine, rdb redis.UniversalClient, name, id string, heldFor, expiresIn time.Duration) {
	t.Helper()
	ctx := context.Background()
	k := testKeys(rdb, name)
	raw, err := rdb.HGet(ctx, k.key("sessions"), id).Result()
	f := strings.Fields(raw)
	if err != nil || len(f) != 4 {
		t.Fatalf("session record %q: %v", raw, err)
	}
	at := strconv.FormatInt(clockOf(t, e).Now().Add(-heldFor).UnixMilli(), 10)
	f[0], f[1] = at, at
	if err := rdb.HSet(ctx, k.key("sessions"), id, strings.Join(f, " ")).Err(); err != nil {
		t.Fatal(err)
	}
	setSessionExpiry(t, rdb, name, id, clockOf(t, e).Now().Add(expiresIn))
}

// TestGateETAWithSessions: every slot of a gate room (maxActive 5,
// sessionSeconds 30) is held by a live session and one buyer waits at rank
// 0. The ETA follows the sessions' remaining hold: about sessionSeconds
// for fresh idle sessions, and no less for idle sessions renewed past it
// (they are in use, not about to end); a fixed session's remaining time near
// its end; the measured mean hold once releases have been seen. It is read
// as a page reads it (Position) and as the push hub computes it (Snapshot).
func TestGateETAWithSessions(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	const secs = 30
	for _, tc := range []struct {
		name     string
		mode     string
		heldFor  time.Duration // 0: as redeemed just now
		expires  time.Duration // with heldFor: the sessions' expiry from now
		hold     float64       // a measured mean hold, s (0: none yet)
		min, max int64         // the ETA wanted, s
	}{
		{"idle, fresh", room.SessionIdle, 0, 0, 0, secs - 2, secs},
		{"idle, renewed past sessionSeconds", room.SessionIdle, 45 * time.Second, 20 * time.Second, 0, 20, secs},
		{"idle, renewed within sessionSeconds", room.SessionIdle, 20 * time.Second, 28 * time.Second, 0, 27, secs},
		{"fixed, fresh", room.SessionFixed, 0, 0, 0, secs - 2, secs},
		{"fixed, near the end", room.SessionFixed, 25 * time.Second, 5 * time.Second, 0, 4, 5},
		{"idle, measured", room.SessionIdle, 0, 0, 4, 3, 4},
		{"idle, measured, outlived", room.SessionIdle, 10 * time.Second, 25 * time.Second, 4, 3, 4},
		{"fixed, measured, near the end", room.SessionFixed, 28 * time.Second, 2 * time.Second, 4, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name := gateRoom(t, rdb, func(s *room.Settings) {
				s.MaxActive, s.TargetURL, s.SessionSeconds, s.SessionMode = 5, "https://shop.example/buy", secs, tc.mode
			})
			for range 5 {
				_, s := redeemed(t, e, name)
				if tc.heldFor > 0 {
					ageSession(t, e, rdb, name, s.ID, tc.heldFor, tc.expires)
				}
			}
			if tc.hold > 0 {
				if err := rdb.HSet(ctx, testKeys(rdb, name).key("rate"), "hold", fmt.Sprint(tc.hold)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := e.ActiveSessions(ctx, name); err != nil || n != 5 {
				t.Fatalf("%d live sessions (%v), want 5", n, err)
			}
			p, err := e.Enter(ctx, name, visitors(t, 1)[0])
			if err != nil || p.Status != StatusWaiting || p.Rank != 0 || p.EstimatedWaitSeconds == nil {
				t.Fatalf("enter: %+v %v", p, err)
			}
			if w := *p.EstimatedWaitSeconds; w < tc.min || w > tc.max {
				t.Fatalf("position: ETA %d s, want %d..%d s", w, tc.min, tc.max)
			}
			snap, err := e.Snapshot(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if w := ETA(0, snap.Rate, snap.Slots, snap.Paused); w == nil || *w < tc.min || *w > tc.max {
				t.Fatalf("snapshot: ETA %v, slots %+v, want %d..%d s", w, snap.Slots, tc.min, tc.max)
			}
		})
	}
}
