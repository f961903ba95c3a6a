package queue

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// lastSeen rewrites when the holder of ticket was last seen, as lib.lua
// stores it, so that tests need not wait out abandonAfterSeconds.
func lastSeen(t *testing.T, rdb redis.UniversalClient, name string, ticket int64, ago time.Duration) {
	t.Helper()
	v := (time.Now().Add(-ago).UnixMicro()/2000000)%65535 + 1
	k := testKeys(rdb, name)
	base, _ := rdb.Get(context.Background(), k.key("seenbase")).Int64()
	if err := rdb.SetRange(context.Background(), k.key("seen"), 2*(ticket-base), string([]byte{byte(v >> 8), byte(v)})).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestAbandonment(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60; s.ReturnWithinSeconds = 60 }))
	vs := visitors(t, 6)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	// Tickets 1..6. The first and the fifth have been gone 90 s; the
	// fourth 50 s (still within 60 s); the sixth was gone but came back.
	lastSeen(t, rdb, name, 1, 90*time.Second)
	lastSeen(t, rdb, name, 5, 90*time.Second)
	lastSeen(t, rdb, name, 4, 50*time.Second)
	lastSeen(t, rdb, name, 6, 90*time.Second)
	if err := e.MarkSeen(ctx, name, []int64{6}); err != nil {
		t.Fatal(err)
	}

	sub := rdb.Subscribe(ctx, EventsChannel(DefaultNamespace(rdb), name))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	// A tick of one admission: the abandoned first visitor departs instead
	// of taking it, the second is admitted, and the sweep finds the fifth.
	time.Sleep(20 * time.Millisecond) // credit for the one admission a 1 ms tick allows
	a, err := e.Admit(ctx, name, time.Millisecond, tokens(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[1] {
		t.Fatalf("admitted %v, want only the second visitor", a.Visitors)
	}
	if a.Waiting != 3 {
		t.Fatalf("waiting %d after the tick, want 3 (tickets 3, 4, 6)", a.Waiting)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ParseEvent([]byte(msg.Payload))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.Departed, []int64{1, 5}) || ev.Head != 2 || ev.Waiting != 3 {
		t.Fatalf("event %+v, want departures [1 5], head 2, 3 waiting", ev)
	}
	st, _ := e.Stats(ctx, name)
	if st.Left != 2 || st.Admitted != 1 || st.Waiting+st.Admitted+st.Left != st.Issued {
		t.Fatalf("stats %+v: want 2 left, 1 admitted, all accounted", st)
	}
	p, _ := e.Position(ctx, name, vs[5])
	if p.Rank != 2 {
		t.Fatalf("the sixth visitor is rank %d, want 2 (behind tickets 3 and 4)", p.Rank)
	}

	// The snapshot gives a fresh instance the departure above the head.
	snap, err := e.Snapshot(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Head != 2 || !slices.Equal(snap.Departed, []int64{5}) || snap.Tick != a.Tick || snap.Waiting != 3 {
		t.Fatalf("snapshot %+v, want head 2, departed [5], tick %d", snap, a.Tick)
	}

	// A stale visitor who polls has left; one who enters joins at the end.
	lastSeen(t, rdb, name, 3, 90*time.Second)
	if p, _ := e.Position(ctx, name, vs[2]); p.Status != StatusNotEntered {
		t.Fatalf("a poll by an abandoned visitor says %s, want NOT_ENTERED", p.Status)
	}
	lastSeen(t, rdb, name, 4, 90*time.Second)
	p, _ = e.Enter(ctx, name, vs[3])
	if p.Ticket != 7 || p.Rank != 1 || p.RankUpReason != RankUpReturned {
		t.Fatalf("an abandoned visitor re-entered with ticket %d rank %d (%q), want 7 and 1 (returned)", p.Ticket, p.Rank, p.RankUpReason)
	}
}

func TestAbandonmentDisabled(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 0 }))
	v := visitors(t, 1)[0]
	e.Enter(ctx, name, v)
	lastSeen(t, rdb, name, 1, time.Hour)
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Millisecond, 1); len(a.Visitors) != 1 {
		t.Fatalf("with abandonment off the visitor must be admitted: %+v", a)
	}
}

func TestParseEvent(t *testing.T) {
	spread250 := 250
	tests := []struct {
		in   string
		ok   bool
		want Event
	}{
		{`{"n":3,"h":10,"t":1700000000000001,"w":5,"r":49.5,"a":["AAAAAAAAAAAAAAAAAAAAAA"],"d":[12,15]}`, true,
			Event{Tick: 3, Head: 10, TimeMicros: 1700000000000001, Waiting: 5, Rate: 49.5, Admitted: []string{"AAAAAAAAAAAAAAAAAAAAAA"}, Departed: []int64{12, 15}}},
		{`{"n":1,"h":0,"t":1,"w":0,"r":50,"a":[],"d":[]}`, true, Event{Tick: 1, TimeMicros: 1, Rate: 50, Admitted: []string{}, Departed: []int64{}}},
		{`not json`, false, Event{}},
		{`{"n":-1,"h":0}`, false, Event{}},
		// The room's readySpreadMs: absent is the server's default (nil).
		{`{"n":2,"h":0,"t":1,"w":0,"r":50,"a":[],"d":[],"rs":250}`, true, Event{Tick: 2, TimeMicros: 1, Rate: 50, ReadySpreadMs: &spread250}},
		{`{"n":2,"h":0,"t":1,"w":0,"r":50,"a":[],"d":[],"rs":0}`, true, Event{Tick: 2, TimeMicros: 1, Rate: 50, ReadySpreadMs: new(int)}},
		{`{"n":2,"h":0,"rs":-1}`, false, Event{}},
		{`{"n":2,"h":0,"rs":1.5}`, false, Event{}},
	}
	for _, tt := range tests {
		got, err := ParseEvent([]byte(tt.in))
		if (err == nil) != tt.ok {
			t.Fatalf("ParseEvent(%s) error %v, want ok %v", tt.in, err, tt.ok)
		}
		if tt.ok && (got.Tick != tt.want.Tick || got.Head != tt.want.Head || got.TimeMicros != tt.want.TimeMicros ||
			got.Waiting != tt.want.Waiting || got.Rate != tt.want.Rate || !slices.Equal(got.Admitted, tt.want.Admitted) ||
			!slices.Equal(got.Departed, tt.want.Departed) || !room.SameReadySpread(got.ReadySpreadMs, tt.want.ReadySpreadMs)) {
			t.Fatalf("ParseEvent(%s) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestSeenStaysBounded: the liveness string does not hold 2 bytes for
// every ticket ever issued (at ticket 2^28 every enter would fail). After a million
// tickets admitted, the cells behind the head are dropped, and abandonment
// still works on the ones kept.
func TestSeenStaysBounded(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60; s.ReturnWithinSeconds = 60 }))
	k := testKeys(rdb, name)
	const issued = 1000000 // tickets already issued and admitted
	rdb.Set(ctx, k.key("seq"), issued, 0)
	rdb.Set(ctx, k.key("head"), issued, 0)
	vs := visitors(t, 3)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	lastSeen(t, rdb, name, issued+1, 90*time.Second) // the first has gone
	time.Sleep(20 * time.Millisecond)
	a, err := e.Admit(ctx, name, time.Millisecond, tokens(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[1] || a.Departures.Abandoned != 1 {
		t.Fatalf("admitted %v with %d abandoned, want the second visitor and the first abandoned", a.Visitors, a.Departures.Abandoned)
	}
	n, err := rdb.StrLen(ctx, k.key("seen")).Result()
	if err != nil || n > 64 {
		t.Fatalf("the liveness string is %d bytes after %d tickets (%v), want it bounded by the line", n, issued+3, err)
	}
	// The third is still waiting, alive, and can still be found abandoned.
	if p, _ := e.Position(ctx, name, vs[2]); p.Status != StatusWaiting || p.Rank != 0 {
		t.Fatalf("the third visitor after the trim: %+v", p)
	}
	lastSeen(t, rdb, name, issued+3, 90*time.Second)
	if p, _ := e.Position(ctx, name, vs[2]); p.Status != StatusNotEntered {
		t.Fatalf("an abandoned visitor after the trim is %s", p.Status)
	}
	if st, _ := e.Stats(ctx, name); st.Abandoned != 2 {
		t.Fatalf("abandoned %d, want 2", st.Abandoned)
	}
}
