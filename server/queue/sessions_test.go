package queue

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestSessionModes: an idle session is renewed by activity and ends
// sessionSeconds after the last; a fixed one is never renewed. The
// session's expiry is moved instead of waiting for it.
func TestSessionModes(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	for _, mode := range []string{room.SessionIdle, room.SessionFixed} {
		t.Run(mode, func(t *testing.T) {
			e, name := gateRoom(t, rdb, func(s *room.Settings) { s.SessionSeconds, s.SessionMode = 30, mode })
			_, s := redeemed(t, e, name)
			if s.Mode != mode || s.IdleSeconds != 30 || s.Expires.Sub(s.Started) != 30*time.Second {
				t.Fatalf("session %+v", s)
			}
			soon := clockOf(t, e).Now().Add(5 * time.Second).Truncate(time.Millisecond)
			setSessionExpiry(t, rdb, name, s.ID, soon)
			got, err := e.TouchSession(ctx, name, s.ID, true)
			if err != nil {
				t.Fatal(err)
			}
			renewed := got.Expires.After(clockOf(t, e).Now().Add(25 * time.Second))
			if mode == room.SessionIdle && !renewed {
				t.Fatalf("an idle session was not renewed: expires %v", got.Expires)
			}
			if mode == room.SessionFixed && !got.Expires.Equal(soon) {
				t.Fatalf("a fixed session moved from %v to %v", soon, got.Expires)
			}
			// Without renew, nothing moves.
			if again, _ := e.TouchSession(ctx, name, s.ID, false); !again.Expires.Equal(got.Expires) {
				t.Fatalf("a touch without renew moved %v to %v", got.Expires, again.Expires)
			}
			// sessionSeconds without activity: the next tick ends it as idle.
			setSessionExpiry(t, rdb, name, s.ID, clockOf(t, e).Now().Add(-time.Millisecond))
			if st, _ := e.Stats(ctx, name); st.Sessions != 0 || st.SessionsIdle != 1 || st.Expired != 0 {
				t.Fatalf("stats before the sweep %+v", st)
			}
			if n, _ := e.ActiveSessions(ctx, name); n != 0 {
				t.Fatalf("%d live sessions past their expiry", n)
			}
			a, err := e.Admit(ctx, name, time.Second, nil)
			if err != nil || a.Sessions != (SessionCounts{Opened: 1, Idle: 1}) || a.Departures.Expired != 0 {
				t.Fatalf("the sweeping tick: %+v %v", a, err)
			}
			if st, _ := e.Stats(ctx, name); st.Sessions != 0 || st.SessionsIdle != 1 || st.Active != 0 || st.Expired != 0 {
				t.Fatalf("stats after the sweep %+v", st)
			}
			if n := rdb.HLen(ctx, testKeys(rdb, name).key("sessions")).Val(); n != 0 {
				t.Fatalf("%d session records after the sweep", n)
			}
			if _, err := e.TouchSession(ctx, name, s.ID, true); !errors.Is(err, ErrSessionGone) {
				t.Fatalf("touch of an idle session: %v", err)
			}
		})
	}
}

// TestTouchEndsAnExpiredSession: a session past its expiry is gone to a
// touch even before the sweep, and counts as idle once.
func TestTouchEndsAnExpiredSession(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, nil)
	_, s := redeemed(t, e, name)
	setSessionExpiry(t, rdb, name, s.ID, clockOf(t, e).Now().Add(-time.Millisecond))
	if _, err := e.TouchSession(ctx, name, s.ID, true); !errors.Is(err, ErrSessionGone) {
		t.Fatalf("touch: %v", err)
	}
	if _, err := e.Admit(ctx, name, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.Stats(ctx, name); st.SessionsIdle != 1 || st.SessionsEnded != 0 || st.Active != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestEndedSessionFreesItsSlot: with maxActive 1, a session holds the
// slot; its end lets exactly one more in, and the ETA's mean hold is the
// session's real hold, not the pass TTL.
func TestEndedSessionFreesItsSlot(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, func(s *room.Settings) { s.MaxActive = 1 })
	vs := visitors(t, 3)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 3); len(a.Visitors) != 1 || a.Visitors[0] != vs[0] {
		t.Fatalf("admitted %v", a.Visitors)
	}
	p, _ := e.Position(ctx, name, vs[0])
	jti := newID(t)
	if _, err := e.MintPass(ctx, name, vs[0], *p.EntryToken, jti); err != nil {
		t.Fatal(err)
	}
	s, err := e.Redeem(ctx, name, jti, newID(t))
	if err != nil {
		t.Fatal(err)
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 3); len(a.Visitors) != 0 || a.Active != 1 ||
		a.Sessions != (SessionCounts{Live: 1, Opened: 1}) {
		t.Fatalf("admitted %v (active %d) while the session holds the only slot", a.Visitors, a.Active)
	}
	clockOf(t, e).Advance(300 * time.Millisecond)
	if err := e.EndSession(ctx, name, s.ID); err != nil {
		t.Fatal(err)
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 3); len(a.Visitors) != 1 || a.Visitors[0] != vs[1] {
		t.Fatalf("after the end admitted %v, want only the second visitor", a.Visitors)
	}
	hold, err := rdb.HGet(ctx, testKeys(rdb, name).key("rate"), "hold").Float64()
	if err != nil || hold < 0.3 || hold > 2 {
		t.Fatalf("mean hold %v s (%v), want the session's ~0.4 s", hold, err)
	}
	// The slot schedule that waiting pages read follows it.
	snap, err := e.Snapshot(ctx, name)
	if err != nil || snap.Slots == nil || math.Abs(snap.Slots.Hold-hold) > 0.001 {
		t.Fatalf("snapshot slots %+v %v", snap.Slots, err)
	}
}

// TestMaxActiveUnderSessionChurn: 3 instances admit, redeem and end
// sessions at once; the live members of the active set never exceed
// maxActive.
func TestMaxActiveUnderSessionChurn(t *testing.T) {
	const maxActive, buyers = 4, 60
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rdb := gateRedis(t)
	e0, name := gateRoom(t, rdb, func(s *room.Settings) { s.Rate, s.MaxActive = 500, maxActive })
	e0.SetClock(nil) // three instances churn on Redis' own clock
	engines := []*Engine{e0, New(gateRedis(t), e0.Namespace()), New(gateRedis(t), e0.Namespace())}
	for _, v := range visitors(t, buyers) {
		if _, err := e0.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	var peak, samples atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		key := testKeys(rdb, name).key("active")
		for {
			select {
			case <-stop:
				return
			default:
			}
			now := time.Now().UnixMilli()
			n, err := rdb.ZCount(ctx, key, "("+strconv.FormatInt(now, 10), "+inf").Result()
			if err != nil {
				return
			}
			samples.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
		}
	})
	var ended atomic.Int64
	var wg sync.WaitGroup
	for i, e := range engines {
		wg.Go(func() {
			for ended.Load() < buyers && ctx.Err() == nil {
				a, err := e.Admit(ctx, name, 20*time.Millisecond, tokens(t, 20))
				if err != nil {
					t.Error(err)
					return
				}
				for j, v := range a.Visitors {
					wg.Go(func() {
						p, err := e.Position(ctx, name, v)
						if err != nil || p.EntryToken == nil {
							t.Errorf("position %+v %v", p, err)
							return
						}
						jti := newID(t)
						if _, err := e.MintPass(ctx, name, v, *p.EntryToken, jti); err != nil {
							t.Error(err)
							return
						}
						other := engines[(i+j+1)%3] // the shop's call reaches another instance
						s, err := other.Redeem(ctx, name, jti, newID(t))
						if err != nil {
							t.Error(err)
							return
						}
						time.Sleep(time.Duration(5+(i*7+j*13)%30) * time.Millisecond)
						if _, err := e.TouchSession(ctx, name, s.ID, true); err != nil {
							t.Error(err)
						}
						if err := engines[(i+j+2)%3].EndSession(ctx, name, s.ID); err != nil {
							t.Error(err)
						}
						ended.Add(1)
					})
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	if ended.Load() != buyers {
		t.Fatalf("%d of %d sessions ended", ended.Load(), buyers)
	}
	if peak.Load() > maxActive || peak.Load() < 2 || samples.Load() < 100 {
		t.Fatalf("peak %d live slots over %d samples, maxActive %d", peak.Load(), samples.Load(), maxActive)
	}
	st, _ := e0.Stats(ctx, name)
	if st.SessionsOpened != buyers || st.SessionsEnded != buyers || st.Sessions != 0 || st.Active != 0 || st.Admitted != buyers {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("peak %d of %d over %d samples", peak.Load(), maxActive, samples.Load())
}
