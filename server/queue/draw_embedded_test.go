package queue

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestDrawOnTheEmbeddedRedis runs a pre-queue, its draw and the drawn
// buyers' positions on the embedded Redis of `make run` (which has no Lua
// struct library) as on the real one, with and without campaigns.
func TestDrawOnTheEmbeddedRedis(t *testing.T) {
	mini := miniredis.RunT(t)
	for _, tc := range []struct {
		name     string
		rdb      redis.UniversalClient
		campaign Campaign
	}{
		{"embedded, direct", redis.NewClient(&redis.Options{Addr: mini.Addr()}), Campaign{}},
		{"embedded, campaign", redis.NewClient(&redis.Options{Addr: mini.Addr()}), Campaign{Source: "kakao", Medium: "social", Campaign: "launch"}},
		{"redis, campaign", servicetest.Redis(t), Campaign{Source: "kakao", Medium: "social", Campaign: "launch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := New(tc.rdb, DefaultNamespace(tc.rdb))
			name := servicetest.RoomName(t, tc.rdb)
			set := room.Defaults(name)
			set.Rate = room.MinRate // the drawn stay in line, so their positions are read
			set.PrequeueAt, set.OpensAt = at(-time.Hour), at(time.Hour)
			if err := e.SaveRoom(ctx, name, set); err != nil {
				t.Fatal(err)
			}
			vs := visitors(t, 20)
			for _, v := range vs {
				if p, err := e.EnterFrom(ctx, name, v, "", tc.campaign); err != nil || p.Status != StatusPrequeued {
					t.Fatalf("join the pre-queue: %+v %v", p, err)
				}
			}
			openNow(t, e, name)
			if st, err := e.Draw(ctx, name, DrawOptions{}); err != nil || st != DrawDone {
				t.Fatalf("draw: %v %v", st, err)
			}
			seen := map[int64]bool{}
			for _, v := range vs {
				p, err := e.Position(ctx, name, v)
				if err != nil || p.Status != StatusWaiting {
					t.Fatalf("a drawn buyer's position: %+v %v", p, err)
				}
				if p.Ticket < 1 || p.Ticket > int64(len(vs)) || seen[p.Ticket] {
					t.Fatalf("a drawn buyer shows pre-queue ticket %d (seen %v)", p.Ticket, seen)
				}
				seen[p.Ticket] = true
			}
			counts, err := e.Attribution(ctx, name)
			if err != nil || len(counts) != 1 || counts[0].Campaign != tc.campaign || counts[0].Joined != int64(len(vs)) {
				t.Fatalf("attribution after the draw: %+v %v", counts, err)
			}
		})
	}
}
