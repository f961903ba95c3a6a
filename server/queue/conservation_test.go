package queue

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestConservationUnderCancelledTicks runs enters, leaves and admission
// ticks concurrently, cancelling ticks at random points. Every ticket ever
// issued must still be waiting, admitted or left for a counted reason, and
// every admitted visitor must hold a pass or have given it up.
func TestConservationUnderCancelledTicks(t *testing.T) {
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 2000 }))
	ctx := context.Background()
	vs := visitors(t, 600)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ticks, cancelled int
	var mu sync.Mutex
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				d := time.Duration(rand.IntN(1500)) * time.Microsecond
				if rand.IntN(10) == 0 { // some very short ones, so that a fast Redis still sees cancellations
					d = time.Duration(rand.IntN(20)) * time.Microsecond
				}
				tctx, cancel := context.WithTimeout(ctx, d)
				_, err := e.Admit(tctx, name, 5*time.Millisecond, tokens(t, 20))
				cancel()
				mu.Lock()
				ticks++
				if err != nil {
					cancelled++
				}
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
			}
		})
	}
	var enterWG sync.WaitGroup
	var leaves atomic.Int64
	for w := range 6 {
		enterWG.Go(func() {
			for i := w; i < len(vs); i += 6 {
				if _, err := e.Enter(ctx, name, vs[i]); err != nil {
					t.Error(err)
					return
				}
				if i%7 == 0 {
					ok, err := e.Leave(ctx, name, vs[i])
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						leaves.Add(1)
					}
				}
			}
		})
	}
	enterWG.Wait()
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if cancelled == 0 || cancelled == ticks {
		t.Fatalf("%d of %d ticks were cancelled; the test needs some of each", cancelled, ticks)
	}

	st, err := e.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Issued != int64(len(vs)) {
		t.Fatalf("issued %d tickets for %d visitors", st.Issued, len(vs))
	}
	if st.Unaccounted() != 0 || st.Left != st.Leaves+st.Abandoned {
		t.Fatalf("lost tickets: waiting %d + away %d + returning %d + admitted %d + leaves %d + abandoned %d != issued %d (left %d)",
			st.Waiting, st.Away, st.Returning, st.Admitted, st.Leaves, st.Abandoned, st.Issued, st.Left)
	}
	if st.Admitted != st.Active+st.Consumed+st.Forfeited+st.Expired {
		t.Fatalf("lost passes: admitted %d != active %d + consumed %d + forfeited %d + expired %d",
			st.Admitted, st.Active, st.Consumed, st.Forfeited, st.Expired)
	}
	if st.Leaves+st.Forfeited != leaves.Load() || st.Abandoned != 0 || st.Expired != 0 {
		t.Fatalf("%d leaves succeeded; counted %d from the line, %d passes given up, %d abandoned, %d expired",
			leaves.Load(), st.Leaves, st.Forfeited, st.Abandoned, st.Expired)
	}
	var inQueue, withToken, gone int64
	k := testKeys(rdb, name)
	for _, v := range vs {
		_, zerr := rdb.ZScore(ctx, k.key("queue"), v).Result()
		var n int64
		if raw, err := rdb.HGet(ctx, k.key("tokens"), v).Result(); err == nil && !strings.Contains(raw, " U ") {
			n = 1 // a pass, not the tombstone of a used one
		}
		switch {
		case zerr == nil && n == 1:
			t.Fatalf("visitor %s is both waiting and admitted", v)
		case zerr == nil:
			inQueue++
		case n == 1:
			withToken++
		default:
			gone++
		}
	}
	if inQueue != st.Waiting || withToken != st.Admitted-st.Forfeited || gone != st.Left+st.Forfeited {
		t.Fatalf("per-visitor audit: %d waiting, %d with token, %d gone; counters say %d, %d-%d, %d+%d",
			inQueue, withToken, gone, st.Waiting, st.Admitted, st.Forfeited, st.Left, st.Forfeited)
	}
	t.Logf("%d ticks (%d cancelled): %d admitted, %d waiting, %d left", ticks, cancelled, st.Admitted, st.Waiting, st.Left)
}

// TestDeparturesByReason: each way out of the room is counted on its own,
// so that issued = waiting + admitted + leaves + abandoned and admitted =
// active + consumed + forfeited + expired can be audited by reason.
func TestDeparturesByReason(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60; s.ReturnWithinSeconds = 60 }))
	vs := visitors(t, 7)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Leave(ctx, name, vs[6]); err != nil { // leaves the line
		t.Fatal(err)
	}
	lastSeen(t, rdb, name, 6, 90*time.Second) // abandons it
	a := admitAfter(t, e, name, 20*time.Millisecond, 5*time.Millisecond, 4)
	if len(a.Visitors) != 4 || a.Departures != (Departures{Leaves: 1, Abandoned: 1}) {
		t.Fatalf("tick: %d admitted, departures %+v; want 4 and one leave, one abandoned", len(a.Visitors), a.Departures)
	}
	// Of the four passes: one orders, one is given up, one runs out.
	p, _ := e.Position(ctx, name, vs[0])
	c, err := e.Claim(ctx, name, vs[0], *p.EntryToken, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Consume(ctx, name, vs[0], c.Holder); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.Leave(ctx, name, vs[1]); !ok {
		t.Fatal("giving up a pass")
	}
	agePass(t, rdb, name, vs[2], time.Hour)
	a, err = e.Admit(ctx, name, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Departures{Leaves: 1, Abandoned: 1, Expired: 1}
	if a.Departures != want {
		t.Fatalf("tick departures %+v, want %+v", a.Departures, want)
	}
	st, err := e.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Departures != want || st.Left != 2 || st.Consumed != 1 || st.Forfeited != 1 || st.Active != 1 || st.Admitted != 4 || st.Waiting != 1 {
		t.Fatalf("stats %+v", st)
	}
	if st.Unaccounted() != 0 || st.Admitted != st.Active+st.Consumed+st.Forfeited+st.Expired {
		t.Fatalf("stats %+v do not add up", st)
	}
}
