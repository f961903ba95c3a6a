package queue

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"waitingroom/server/room"
	"waitingroom/server/token"
	"waitingroom/server/visitor"
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

// TestRandomModeUniform checks that a random tick picks every waiting
// visitor with the same chance, whatever their place in line. Each room
// keeps a line of `waiting` visitors full: each tick admits one, whose place
// (0 = front) is counted in one of `cells` equal groups of places, and a new
// visitor joins at the back. Every tick is an independent draw, so the
// counts must fit a uniform distribution. Two tests, each at a
// significance of 0.0001, so that a fair pick fails about one run in five
// thousand per case:
//   - chi-square over the groups (the critical values below): a pick among
//     the first few, or one that never takes the back, scores in the
//     hundreds;
//   - the mean place against the middle of the line (|z| > 3.89): a pick
//     that leans towards the front or the back of the line.
//
// The short line is a listpack in Redis, the long one (over
// zset-max-listpack-entries, 128) a hash table. There ZRANDMEMBER, which
// admit.lua used before, leaned towards the last to join once the line had
// turned over many times: chi-square 64 and 78, z near 8, after 8,000 ticks
// of one room of 300. The 3,000 ticks here catch that lean only sometimes
// (z from 0 to 3.6 in four runs); they always catch a pick among the first
// few (chi-square in the hundreds).
func TestRandomModeUniform(t *testing.T) {
	cases := []struct {
		name                          string
		waiting, cells, rooms, trials int
		critical                      float64 // chi-square, cells-1 degrees of freedom, P = 0.0001
	}{
		{"8 waiting", 8, 8, 4, 2400, 29.88},
		{"300 waiting", 300, 10, 1, 3000, 33.72},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			var places []int
			var mu sync.Mutex
			// Rooms run in parallel, to overlap the round trips.
			g, gctx := errgroup.WithContext(ctx)
			for range c.rooms {
				// Nobody is ever away here: no sweep of the line per tick.
				e, name, _ := newRoom(t, settings(func(s *room.Settings) {
					s.Mode, s.Rate, s.AbandonAfterSeconds = room.ModeRandom, room.MaxRate, 0
				}))
				g.Go(func() error {
					p, err := randomPlaces(gctx, e, name, c.waiting, c.trials/c.rooms)
					mu.Lock()
					defer mu.Unlock()
					places = append(places, p...)
					return err
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			counts := make([]int, c.cells)
			var sum float64
			for _, p := range places {
				counts[p*c.cells/c.waiting]++
				sum += float64(p)
			}
			expect := float64(len(places)) / float64(c.cells)
			var chi float64
			for _, n := range counts {
				d := float64(n) - expect
				chi += d * d / expect
			}
			// A uniform place in 0..w-1 has mean (w-1)/2, variance (w²-1)/12.
			w := float64(c.waiting)
			z := (sum/float64(len(places)) - (w-1)/2) / math.Sqrt((w*w-1)/12/float64(len(places)))
			t.Logf("chi-square %.1f over %d degrees of freedom, mean place z = %.2f; admissions by place %v",
				chi, c.cells-1, z, counts)
			if chi > c.critical {
				t.Errorf("chi-square %.1f over %d degrees of freedom (critical %.2f): admissions by place are not uniform",
					chi, c.cells-1, c.critical)
			}
			if math.Abs(z) > 3.89 {
				t.Errorf("mean place z = %.2f: random admissions lean towards one end of the line", z)
			}
		})
	}
}

// randomPlaces fills room name's line with waiting visitors and then, for
// each of trials ticks, admits one and refills the line; it returns the
// places in line (0 = front) of those admitted.
func randomPlaces(ctx context.Context, e *Engine, name string, waiting, trials int) ([]int, error) {
	line := make([]string, 0, waiting)
	join := func() error {
		v, err := visitor.NewID()
		if err == nil {
			_, err = e.Enter(ctx, name, v)
		}
		line = append(line, v)
		return err
	}
	for range waiting {
		if err := join(); err != nil {
			return nil, err
		}
	}
	places := make([]int, 0, trials)
	for range trials {
		var a Admission
		// At MaxRate a credit accrues every 0.1 ms: a tick rarely finds
		// none, and then the next one does.
		for len(a.Visitors) == 0 {
			tok, err := token.NewBatch(1)
			if err != nil {
				return places, err
			}
			if a, err = e.Admit(ctx, name, time.Second, tok); err != nil {
				return places, err
			}
		}
		place := slices.Index(line, a.Visitors[0])
		if len(a.Visitors) != 1 || place < 0 {
			return places, fmt.Errorf("admitted %v, want one of the line", a.Visitors)
		}
		places = append(places, place)
		line = slices.Delete(line, place, place+1)
		if err := join(); err != nil {
			return places, err
		}
	}
	return places, nil
}
