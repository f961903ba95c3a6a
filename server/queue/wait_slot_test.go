package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestBookWait: one network's no-JavaScript joins are booked WaitSpacing
// apart however fast they ask, each its wait after its booking; another
// network is not held up; the bookings expire, stop WaitAhead ahead, and
// go with their room. On Redis and on the embedded Redis.
func TestBookWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		rdb  redis.UniversalClient
	}{{"redis", servicetest.Redis(t)}, {"embedded", redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := New(tc.rdb, DefaultNamespace(tc.rdb))
			name := servicetest.RoomName(t, tc.rdb)
			if err := e.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
				t.Fatal(err)
			}
			const a, b = "203.0.113.0/24", "2001:db8:1:2::/64"
			var first WaitSlot
			for i, step := range []struct {
				network string
				wait    time.Duration
				after   time.Duration // At after first.At
			}{
				{a, 2 * time.Second, 0},
				{a, 2 * time.Second, WaitSpacing},
				{a, 5 * time.Second, 2*WaitSpacing + 3*time.Second}, // a longer wait after its booking
				{a, 2 * time.Second, 3 * WaitSpacing},
				{"", 2 * time.Second, -1}, // an unknown network is one of its own
			} {
				s, err := e.BookWait(ctx, name, step.network, step.wait)
				if err != nil || !s.Booked {
					t.Fatalf("booking %d: %+v %v", i, s, err)
				}
				if i == 0 {
					first = s
					if got := s.At.Sub(s.Now); got != step.wait {
						t.Fatalf("first booking due %v after now, want %v", got, step.wait)
					}
				}
				if step.after >= 0 && s.At.Sub(first.At) != step.after {
					t.Errorf("booking %d of %s: due %v after the first, want %v", i, step.network, s.At.Sub(first.At), step.after)
				}
				if step.after < 0 && s.At.Sub(s.Now) != step.wait {
					t.Errorf("booking %d of %q: due %v after now, want %v", i, step.network, s.At.Sub(s.Now), step.wait)
				}
			}
			other, err := e.BookWait(ctx, name, b, 2*time.Second)
			if err != nil || !other.Booked || other.At.Sub(other.Now) != 2*time.Second {
				t.Errorf("another network: %+v %v, want due in 2 s", other, err)
			}
			time.Sleep(WaitSpacing + 50*time.Millisecond) // b's next booking is free again, and its entry gone
			if again, err := e.BookWait(ctx, name, b, 2*time.Second); err != nil || again.At.Sub(again.Now) != 2*time.Second {
				t.Errorf("another network a spacing later: %+v %v, want due in 2 s", again, err)
			}
			k := testKeys(tc.rdb, name)
			if ttl := tc.rdb.PTTL(ctx, k.key("waitslot")).Val(); ttl <= 0 || ttl > 4*WaitSpacing+time.Second {
				t.Errorf("bookings' TTL %v, want until the last booking has passed", ttl)
			}

			// A flood from one network is booked up to WaitAhead ahead, no
			// further.
			// Bookings are spaced by Redis' own clock (the script's TIME):
			// each WaitSpacing the loop takes frees one more, so the bound
			// counts the loop's own time.
			n := 4
			var refused WaitSlot
			flood := time.Now()
			for ; n < 1000; n++ {
				s, err := e.BookWait(ctx, name, a, 2*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if !s.Booked {
					refused = s
					break
				}
			}
			if want, freed := int(WaitAhead/WaitSpacing), int(time.Since(flood)/WaitSpacing)+1; n < want || n > want+freed+20 {
				t.Errorf("refused after %d bookings, want about %d", n, want)
			}
			if d := refused.At.Sub(refused.Now); d <= 0 || d > time.Second {
				t.Errorf("refused: ask again in %v, want within a second", d)
			}
			if s, err := e.BookWait(ctx, name, b, 2*time.Second); err != nil || !s.Booked {
				t.Errorf("another network after the flood: %+v %v", s, err)
			}

			if _, err := e.DeleteRoom(ctx, name); err != nil {
				t.Fatal(err)
			}
			if n := tc.rdb.Exists(ctx, k.key("waitslot")).Val(); n != 0 {
				t.Error("the bookings outlive their room")
			}
			if _, err := e.BookWait(ctx, name, a, time.Second); !errors.Is(err, room.ErrNotFound) {
				t.Errorf("booking in a deleted room: %v, want room.ErrNotFound", err)
			}
		})
	}
}
