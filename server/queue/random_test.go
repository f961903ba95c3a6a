package queue

import (
	"context"
	"slices"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/server/token"
)

// TestRandomMode: each tick admits at random among the waiting, not the
// front of the line, and the ranks that the hub computes from the events
// still count exactly who is ahead.
func TestRandomMode(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Mode = room.ModeRandom; s.Rate = 20 }))
	vs := visitors(t, 200)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	var admitted []string
	for range 3 {
		time.Sleep(500 * time.Millisecond)
		toks, err := token.NewBatch(40)
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.Admit(ctx, name, time.Second, toks)
		if err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, a.Visitors...)
	}
	if len(admitted) < 20 {
		t.Fatalf("admitted %d, want about 30", len(admitted))
	}
	if slices.Equal(admitted, vs[:len(admitted)]) {
		t.Fatal("random mode admitted the front of the line in order")
	}
	snap, err := e.Snapshot(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		p, err := e.Position(ctx, name, v)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(admitted, v) {
			if p.Status != StatusReady {
				t.Fatalf("admitted %s is %s", v, p.Status)
			}
			continue
		}
		below := 0
		for _, d := range snap.Departed {
			if d < p.Line {
				below++
			}
		}
		if hub := p.Line - snap.Head - 1 - int64(below); p.Status != StatusWaiting || hub != p.Rank {
			t.Fatalf("%s: %+v; the hub's rank is %d", v, p, hub)
		}
	}
}
