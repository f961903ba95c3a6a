package queue

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// roomKeyCount counts the room's keys that exist. Every key of a room is
// one of keyNames and shares its hash tag, so this works on a Cluster too,
// where KEYS would ask one node only.
func roomKeyCount(t *testing.T, rdb redis.UniversalClient, name string) int {
	t.Helper()
	k := testKeys(rdb, name)
	n := 0
	for key := range keyNames {
		c, err := rdb.Exists(context.Background(), k.key(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		n += int(c)
	}
	return n
}

func TestDeleteRoom(t *testing.T) {
	real := servicetest.Redis(t)
	mini := miniredis.RunT(t)
	for _, tc := range []struct {
		name string
		rdb  redis.UniversalClient
	}{{"redis", real}, {"embedded", redis.NewClient(&redis.Options{Addr: mini.Addr()})}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := New(tc.rdb, DefaultNamespace(tc.rdb))
			gone, kept := servicetest.RoomName(t, tc.rdb), servicetest.RoomName(t, tc.rdb)
			for _, name := range []string{gone, kept} {
				if err := e.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
					t.Fatal(err)
				}
				e.Admit(ctx, name, time.Second, nil)
				for _, v := range visitors(t, 30) {
					if _, err := e.Enter(ctx, name, v); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(20 * time.Millisecond)
				if _, err := e.Admit(ctx, name, time.Second, tokens(t, 5)); err != nil {
					t.Fatal(err)
				}
				if _, err := e.MarkPhase(ctx, name, PhaseOpen); err != nil {
					t.Fatal(err)
				}
			}
			keptBefore := roomKeyCount(t, tc.rdb, kept)
			if n := roomKeyCount(t, tc.rdb, gone); n < 5 {
				t.Fatalf("the room has only %d keys before its deletion", n)
			}

			d, err := e.DeleteRoom(ctx, gone)
			if err != nil || !d.Existed || d.Keys < 5 {
				t.Fatalf("delete: %+v %v", d, err)
			}
			if n := roomKeyCount(t, tc.rdb, gone); n != 0 {
				t.Fatalf("%d keys of the deleted room remain", n)
			}
			if rooms, _ := e.Rooms(ctx); slices.Contains(rooms, gone) || !slices.Contains(rooms, kept) {
				t.Fatalf("rooms set after delete: %v", rooms)
			}
			if _, err := e.Room(ctx, gone); !errors.Is(err, room.ErrNotFound) {
				t.Fatalf("settings of a deleted room: %v", err)
			}
			if _, err := e.Enter(ctx, gone, visitors(t, 1)[0]); !errors.Is(err, room.ErrNotFound) {
				t.Fatalf("enter into a deleted room: %v", err)
			}
			// The other room is untouched.
			if n := roomKeyCount(t, tc.rdb, kept); n != keptBefore {
				t.Fatalf("the other room went from %d keys to %d", keptBefore, n)
			}
			if st, err := e.Stats(ctx, kept); err != nil || st.Issued != 30 || st.Waiting+st.Admitted != 30 {
				t.Fatalf("the other room: %+v %v", st, err)
			}
			if d, err := e.DeleteRoom(ctx, gone); err != nil || d.Existed || d.Keys != 0 {
				t.Fatalf("second delete: %+v %v", d, err)
			}
		})
	}
}

func TestMarker(t *testing.T) {
	// A namespace of its own: the marker is one key per deployment.
	rdb := servicetest.Redis(t)
	ns := "t-marker-" + servicetest.RoomName(t, rdb)
	e := New(rdb, ns)
	ctx := context.Background()
	t.Cleanup(func() { rdb.Del(context.Background(), markerKey(ns)) })
	if ok, err := e.HasMarker(ctx); ok || err != nil {
		t.Fatalf("marker before it was set: %v %v", ok, err)
	}
	if err := e.SetMarker(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.HasMarker(ctx); !ok || err != nil {
		t.Fatalf("marker after it was set: %v %v", ok, err)
	}
	if ttl := rdb.TTL(ctx, markerKey(ns)).Val(); ttl != -1 {
		t.Fatalf("the marker expires (TTL %v)", ttl)
	}
	if other := New(rdb, ns+"-other"); other != nil {
		if ok, err := other.HasMarker(ctx); ok || err != nil {
			t.Fatalf("another namespace sees the marker: %v %v", ok, err)
		}
	}
	rdb.Del(ctx, markerKey(ns)) // Redis lost its data
	if ok, err := e.HasMarker(ctx); ok || err != nil {
		t.Fatalf("marker after it was lost: %v %v", ok, err)
	}
	if err := e.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}
