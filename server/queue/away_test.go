package queue

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// ranks returns each visitor's rank as a poll tells it (-1 when not
// waiting). Polling marks the visitor as seen, as a present page does.
func ranks(t *testing.T, e *Engine, name string, vs []string) []int64 {
	t.Helper()
	out := make([]int64, len(vs))
	for i, v := range vs {
		p, err := e.Position(context.Background(), name, v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = -1
		if p.Status == StatusWaiting {
			out[i] = p.Rank
		}
	}
	return out
}

// neverUp fails when a visitor still waiting now ranks higher than before.
func neverUp(t *testing.T, step string, before, after []int64) {
	t.Helper()
	for i := range before {
		if before[i] >= 0 && after[i] > before[i] {
			t.Errorf("%s: visitor %d went from rank %d to %d", step, i+1, before[i], after[i])
		}
	}
}

// awayLine returns a room where visitors unseen for 60 s are away (the
// return window is the default 900 s) and n visitors entered, tickets 1..n.
func awayLine(t *testing.T, n int) (*Engine, string, redis.UniversalClient, []string) {
	t.Helper()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60 }))
	vs := visitors(t, n)
	for _, v := range vs {
		if _, err := e.Enter(context.Background(), name, v); err != nil {
			t.Fatal(err)
		}
	}
	return e, name, rdb, vs
}

func balanced(t *testing.T, e *Engine, name string) Stats {
	t.Helper()
	st, err := e.Stats(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unaccounted() != 0 {
		t.Fatalf("stats %+v: %d tickets unaccounted for", st, st.Unaccounted())
	}
	return st
}

// TestAwayBuyerPassedOverThenLetIn: a buyer away for 3 minutes when their
// turn comes is passed over (the admission goes to the next present buyer),
// comes back within returnWithinSeconds and is let in at the next tick,
// ahead of the line; nobody else's rank ever goes up.
func TestAwayBuyerPassedOverThenLetIn(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 5)
	// Ticket 2's page went away 3 minutes ago: away (over 60 s), but well
	// within the 900 s return window.
	lastSeen(t, rdb, name, 2, 3*time.Minute)
	others := []string{vs[2], vs[3], vs[4]}
	before := ranks(t, e, name, others)

	a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 2)
	if len(a.Visitors) != 2 || a.Visitors[0] != vs[0] || a.Visitors[1] != vs[2] {
		t.Fatalf("admitted %v, want the first and the third (the second passed over)", a.Visitors)
	}
	if a.Departures.Abandoned != 0 || a.Waiting != 2 {
		t.Fatalf("tick %+v: want nobody abandoned and 2 waiting", a)
	}
	st := balanced(t, e, name)
	if st.Away != 1 || st.PassedOver != 1 {
		t.Fatalf("stats %+v: want the second visitor kept aside", st)
	}
	after := ranks(t, e, name, others)
	neverUp(t, "passed over", before, after)
	if after[1] != 0 || after[2] != 1 {
		t.Fatalf("ranks after the pass-over %v, want [-1 0 1]", after)
	}

	// Back within the window: waiting, first in the side list, with the
	// old ticket and no rank going up for anyone.
	p, err := e.Position(ctx, name, vs[1])
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusWaiting || p.Ticket != 2 || p.Rank != 0 || p.RankUpReason != "" {
		t.Fatalf("the returning visitor is told %+v, want WAITING, ticket 2, rank 0", p)
	}
	if st := balanced(t, e, name); st.Away != 0 || st.Returning != 1 || st.Returned != 1 {
		t.Fatalf("stats %+v: want the second visitor returning", st)
	}
	neverUp(t, "returned", after, ranks(t, e, name, others))

	// The next tick of one admission lets the returning visitor in, inside
	// the rate: the fourth keeps waiting at rank 0.
	a = admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[1] {
		t.Fatalf("admitted %v, want the returning second visitor", a.Visitors)
	}
	p, err = e.Position(ctx, name, vs[1])
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusReady || p.Ticket != 2 {
		t.Fatalf("the returned visitor is told %+v, want READY with ticket 2", p)
	}
	if d := time.Until(time.UnixMilli(p.PassExpiresAt)); d < 290*time.Second || d > 301*time.Second {
		t.Fatalf("passExpiresAt is %v away, want the 300 s TTL", d)
	}
	final := ranks(t, e, name, others)
	neverUp(t, "let in", after, final)
	if final[1] != 0 {
		t.Fatalf("the fourth visitor is at rank %d after the returning one went in, want 0", final[1])
	}
	if st := balanced(t, e, name); st.Admitted != 3 || st.Returning != 0 || st.Waiting != 2 {
		t.Fatalf("stats %+v: want 3 admitted, 2 waiting", st)
	}
}

// TestAwayBuyerWhoseTurnHasNotCome keeps their place: away for 3 minutes,
// not yet at the front, they come back to the same ticket and rank.
func TestAwayBuyerWhoseTurnHasNotCome(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 3)
	lastSeen(t, rdb, name, 3, 3*time.Minute)
	admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1) // the sweep runs too
	p, err := e.Enter(ctx, name, vs[2])
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusWaiting || p.Ticket != 3 || p.Rank != 1 || p.RankUpReason != "" {
		t.Fatalf("the returning visitor is told %+v, want ticket 3 at rank 1", p)
	}
	balanced(t, e, name)
}

// TestAwayBuyerLapses: past the return window a passed-over buyer departs
// as abandoned, and a leave from the side list counts as a leave.
func TestAwayBuyerLapses(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 3)
	lastSeen(t, rdb, name, 1, 3*time.Minute)
	lastSeen(t, rdb, name, 2, 3*time.Minute)
	a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[2] {
		t.Fatalf("admitted %v, want the third (two passed over)", a.Visitors)
	}
	// The first's window ends now; the second leaves.
	if err := rdb.ZAdd(ctx, testKeys(rdb, name).key("away"), redisZ(1, vs[0])).Err(); err != nil {
		t.Fatal(err)
	}
	if left, err := e.Leave(ctx, name, vs[1]); err != nil || !left {
		t.Fatalf("leave from the side list: %v %v", left, err)
	}
	a = admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if a.Departures.Abandoned != 1 || a.Departures.Leaves != 1 || len(a.Visitors) != 0 {
		t.Fatalf("tick %+v: want one abandoned, one leave, nobody admitted", a)
	}
	if st := balanced(t, e, name); st.Away != 0 || st.Returning != 0 {
		t.Fatalf("stats %+v: want nobody kept aside", st)
	}
	if p, _ := e.Position(ctx, name, vs[0]); p.Status != StatusNotEntered {
		t.Fatalf("a lapsed visitor is told %s, want NOT_ENTERED", p.Status)
	}
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// TestAwayBuyerInRandomMode: in mode random the away buyer drawn at their
// turn is passed over just the same, and let in on return.
func TestAwayBuyerInRandomMode(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 5)
	s, err := e.Room(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s.Mode = room.ModeRandom
	if err := e.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	lastSeen(t, rdb, name, 3, 3*time.Minute)
	a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 5)
	if len(a.Visitors) != 4 || a.Waiting != 0 {
		t.Fatalf("tick %+v: want the 4 present admitted and the away one passed over", a)
	}
	if st := balanced(t, e, name); st.Away != 1 {
		t.Fatalf("stats %+v: want one away", st)
	}
	if p, _ := e.Enter(ctx, name, vs[2]); p.Status != StatusWaiting || p.Rank != 0 {
		t.Fatalf("the returning visitor is told %+v, want WAITING at rank 0", p)
	}
	a = admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[2] {
		t.Fatalf("admitted %v, want the returning visitor", a.Visitors)
	}
	balanced(t, e, name)
}
