package queue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/room"
)

func TestOrderBucket(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.OrderRate = 2; s.OrderBurst = 3 }))
	for i := range 3 {
		if _, err := e.TakeOrderSlot(ctx, name); err != nil {
			t.Fatalf("take %d of a full bucket of 3: %v", i+1, err)
		}
	}
	wait, err := e.TakeOrderSlot(ctx, name)
	if !errors.Is(err, ErrRateLimited) || wait <= 0 || wait > 500*time.Millisecond {
		t.Fatalf("empty bucket: %v, retry after %v; want ErrRateLimited within 500 ms at 2/s", err, wait)
	}
	clockOf(t, e).Advance(wait + 20*time.Millisecond)
	if _, err := e.TakeOrderSlot(ctx, name); err != nil {
		t.Fatalf("after the refill: %v", err)
	}
	if _, err := e.TakeOrderSlot(ctx, "no-such-room-bucket"); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("unknown room: %v", err)
	}
}

func TestSoldOut(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000 }))
	vs := visitors(t, 2)
	if _, err := e.Enter(ctx, name, vs[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.SetSoldOut(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	p, err := e.Enter(ctx, name, vs[1])
	if err != nil || p.Status != StatusNotEntered || !p.SoldOut {
		t.Fatalf("enter into a sold-out room: %+v %v; want NOT_ENTERED and soldOut", p, err)
	}
	sub := rdb.Subscribe(ctx, EventsChannel(DefaultNamespace(rdb), name))
	defer sub.Close()
	sub.Receive(ctx)
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 5); len(a.Visitors) != 0 {
		t.Fatalf("a sold-out room admitted %v", a.Visitors)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ParseEvent([]byte(msg.Payload))
	if err != nil || !bool(ev.SoldOut) || !strings.Contains(msg.Payload, `"s":1`) {
		t.Fatalf("tick event %s does not say sold out (%v)", msg.Payload, err)
	}
	snap, _ := e.Snapshot(ctx, name)
	st, _ := e.Stats(ctx, name)
	if !snap.SoldOut || !st.SoldOut {
		t.Fatalf("snapshot %+v / stats %+v do not say sold out", snap, st)
	}
	if err := e.SetSoldOut(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	if p, _ := e.Enter(ctx, name, vs[1]); p.Status != StatusWaiting || p.SoldOut {
		t.Fatalf("after reopening: %+v", p)
	}
	if err := e.SetSoldOut(ctx, "no-such-room-soldout", true); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("unknown room: %v", err)
	}
}

// TestPassthrough is the no-room baseline: everyone waiting is admitted at
// the next tick, whatever the rate, and the order bucket lets all through.
func TestPassthrough(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) {
		s.Rate, s.OrderRate, s.OrderBurst, s.Mode = 1, 0.01, 1, room.ModePassthrough
	}))
	for _, v := range visitors(t, 300) {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	a, err := e.Admit(ctx, name, time.Second, tokens(t, 50))
	if err != nil || len(a.Visitors) != 50 || a.Burst < 250+100 {
		t.Fatalf("first tick: %d admitted, asks for %d tokens (%v); want 50 and room for the rest", len(a.Visitors), a.Burst, err)
	}
	if a, _ := e.Admit(ctx, name, time.Second, tokens(t, a.Burst)); len(a.Visitors) != 250 || a.Waiting != 0 {
		t.Fatalf("second tick: %d admitted, %d waiting; want all 250", len(a.Visitors), a.Waiting)
	}
	for i := range 5 {
		if _, err := e.TakeOrderSlot(ctx, name); err != nil {
			t.Fatalf("order %d in passthrough: %v", i, err)
		}
	}
}

// TestChangeSoldOut: of many calls at once, exactly one changes the flag
// each way; an unknown room is an error.
func TestChangeSoldOut(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(nil))
	for _, soldOut := range []bool{true, false, true} {
		var changed atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				ok, err := e.ChangeSoldOut(ctx, name, soldOut)
				if err != nil {
					t.Error(err)
				}
				if ok {
					changed.Add(1)
				}
			})
		}
		wg.Wait()
		if n := changed.Load(); n != 1 {
			t.Fatalf("sold out → %v: %d calls changed the flag, want 1", soldOut, n)
		}
		if st, err := e.Stats(ctx, name); err != nil || st.SoldOut != soldOut {
			t.Fatalf("stats %+v %v, want soldOut %v", st, err, soldOut)
		}
	}
	if _, err := e.ChangeSoldOut(ctx, "no-such-room-soldout", true); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("unknown room: %v", err)
	}
}
