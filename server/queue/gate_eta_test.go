package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// ageSession rewrites session id as if its pass had taken its slot heldFor
// ago (and the session had started then), and as if its expiry were now
// expiresIn away (a renew, or the end of a fixed session, drawing near).
func ageSession(t *testing.T, rdb redis.UniversalClient, name, id string, heldFor, expiresIn time.Duration) {
	t.Helper()
	ctx := context.Background()
	k := testKeys(rdb, name)
	raw, err := rdb.HGet(ctx, k.key("sessions"), id).Result()
	f := strings.Fields(raw)
	if err != nil || len(f) != 4 {
		t.Fatalf("session record %q: %v", raw, err)
	}
	at := strconv.FormatInt(time.Now().Add(-heldFor).UnixMilli(), 10)
	f[0], f[1] = at, at
	if err := rdb.HSet(ctx, k.key("sessions"), id, strings.Join(f, " ")).Err(); err != nil {
		t.Fatal(err)
	}
	setSessionExpiry(t, rdb, name, id, time.Now().Add(expiresIn))
}

// TestGateETAWithSessions: every slot of a gate room (maxActive 5,
// sessionSeconds 30) is held by a live session and one buyer waits at rank
// 0. The ETA follows the sessions' remaining hold: about sessionSeconds
// for fresh idle sessions, and no less for idle sessions renewed past it
// (they are in use, not about to end); a fixed session's remaining time near
// its end; the measured mean hold once releases have been seen. It is read
// as a page reads it (Position) and as the push hub computes it (Snapshot).
func TestGateETAWithSessions(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	const secs = 30
	for _, tc := range []struct {
		name     string
		mode     string
		heldFor  time.Duration // 0: as redeemed just now
		expires  time.Duration // with heldFor: the sessions' expiry from now
		hold     float64       // a measured mean hold, s (0: none yet)
		min, max int64         // the ETA wanted, s
	}{
		{"idle, fresh", room.SessionIdle, 0, 0, 0, secs - 2, secs},
		{"idle, renewed past sessionSeconds", room.SessionIdle, 45 * time.Second, 20 * time.Second, 0, 20, secs},
		{"idle, renewed within sessionSeconds", room.SessionIdle, 20 * time.Second, 28 * time.Second, 0, 27, secs},
		{"fixed, fresh", room.SessionFixed, 0, 0, 0, secs - 2, secs},
		{"fixed, near the end", room.SessionFixed, 25 * time.Second, 5 * time.Second, 0, 4, 5},
		{"idle, measured", room.SessionIdle, 0, 0, 4, 3, 4},
		{"idle, measured, outlived", room.SessionIdle, 10 * time.Second, 25 * time.Second, 4, 3, 4},
		{"fixed, measured, near the end", room.SessionFixed, 28 * time.Second, 2 * time.Second, 4, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name := gateRoom(t, rdb, func(s *room.Settings) {
				s.MaxActive, s.TargetURL, s.SessionSeconds, s.SessionMode = 5, "https://shop.example/buy", secs, tc.mode
			})
			for range 5 {
				_, s := redeemed(t, e, name)
				if tc.heldFor > 0 {
					ageSession(t, rdb, name, s.ID, tc.heldFor, tc.expires)
				}
			}
			if tc.hold > 0 {
				if err := rdb.HSet(ctx, testKeys(rdb, name).key("rate"), "hold", fmt.Sprint(tc.hold)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := e.ActiveSessions(ctx, name); err != nil || n != 5 {
				t.Fatalf("%d live sessions (%v), want 5", n, err)
			}
			p, err := e.Enter(ctx, name, visitors(t, 1)[0])
			if err != nil || p.Status != StatusWaiting || p.Rank != 0 || p.EstimatedWaitSeconds == nil {
				t.Fatalf("enter: %+v %v", p, err)
			}
			if w := *p.EstimatedWaitSeconds; w < tc.min || w > tc.max {
				t.Fatalf("position: ETA %d s, want %d..%d s", w, tc.min, tc.max)
			}
			snap, err := e.Snapshot(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if w := ETA(0, snap.Rate, snap.Slots, snap.Paused); w == nil || *w < tc.min || *w > tc.max {
				t.Fatalf("snapshot: ETA %v, slots %+v, want %d..%d s", w, snap.Slots, tc.min, tc.max)
			}
		})
	}
}
