package queue

import (
	"context"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestEnterReportsCreated: Position.Created is set by the enter that made
// a new place, never by one that found it, by a read, or by a lapsed
// visitor put back at the end; leaving and entering again makes one.
func TestEnterReportsCreated(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) {
		s.AbandonAfterSeconds, s.ReturnWithinSeconds = 60, 60
	}))
	vs := visitors(t, 2)
	steps := []struct {
		name string
		do   func() (Position, error)
		want bool
	}{
		{"first enter", func() (Position, error) { return e.Enter(ctx, name, vs[0]) }, true},
		{"enter again", func() (Position, error) { return e.Enter(ctx, name, vs[0]) }, false},
		{"position", func() (Position, error) { return e.Position(ctx, name, vs[0]) }, false},
		{"enter after leaving", func() (Position, error) {
			if _, err := e.Leave(ctx, name, vs[0]); err != nil {
				return Position{}, err
			}
			return e.Enter(ctx, name, vs[0])
		}, true},
		{"another visitor", func() (Position, error) { return e.Enter(ctx, name, vs[1]) }, true},
		{"lapsed, back at the end", func() (Position, error) {
			lastSeen(t, rdb, name, 2, 90*time.Second)
			p, err := e.Enter(ctx, name, vs[0])
			if err == nil && p.RankUpReason != RankUpReturned {
				t.Fatalf("the visitor did not lapse: %+v", p)
			}
			return p, err
		}, false},
	}
	for _, s := range steps {
		p, err := s.do()
		if err != nil || p.Created != s.want {
			t.Fatalf("%s: created %v (%+v, %v), want %v", s.name, p.Created, p, err, s.want)
		}
	}
}
