package queue

import (
	"context"
	"errors"
	"strings"
	"testing"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// apiKeyDB is the Redis database of the API key's tests.
const apiKeyDB = 4

// TestAPIKeyHashHasItsOwnField: only SetAPIKeyHash changes the key's hash;
// a settings save, with a stale hash or none, neither brings an old one
// back nor clears it; a room's creation (a restore) writes it.
func TestAPIKeyHashHasItsOwnField(t *testing.T) {
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, apiKeyDB))
	ctx := context.Background()
	e, name := gateRoom(t, rdb, func(s *room.Settings) { s.Gate.TargetURL = "https://shop.example/" })
	oldHash, newHash := strings.Repeat("a", 64), strings.Repeat("b", 64)
	hashOf := func() string {
		t.Helper()
		s, err := e.Room(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := e.APIKeyHash(ctx, name)
		if err != nil || h != s.Gate.APIKeyHash {
			t.Fatalf("APIKeyHash %q %v, Room's %q", h, err, s.Gate.APIKeyHash)
		}
		return h
	}
	if err := e.SetAPIKeyHash(ctx, name, oldHash); err != nil || hashOf() != oldHash {
		t.Fatalf("set: %v", err)
	}
	stale, _ := e.Room(ctx, name)
	if err := e.SetAPIKeyHash(ctx, name, newHash); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, hash string }{{"a save with the old hash", oldHash}, {"a save with none", ""}} {
		s := stale
		s.Title, s.Gate.APIKeyHash = tc.name, tc.hash
		if err := e.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		if h := hashOf(); h != newHash {
			t.Fatalf("after %s the hash is %q", tc.name, h)
		}
	}
	if gate, _ := rdb.HGet(ctx, SettingsKey(e.ns, name), "gate").Result(); strings.Contains(gate, newHash) {
		t.Fatalf("the gate's JSON holds the hash: %s", gate)
	}
	if err := e.SetAPIKeyHash(ctx, "no-such-room-"+name, newHash); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("unknown room: %v", err)
	}
	if n, _ := rdb.Exists(ctx, SettingsKey(e.ns, "no-such-room-"+name)).Result(); n != 0 {
		t.Fatal("SetAPIKeyHash made a cfg hash for an unknown room")
	}

	// Redis lost the room: the record (with the hash) creates it again.
	rec, _ := e.Room(ctx, name)
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.CreateRoom(ctx, name, rec); err != nil || !ok {
		t.Fatalf("restore: %v %v", ok, err)
	}
	if h := hashOf(); h != newHash {
		t.Fatalf("after a restore the hash is %q", h)
	}
}
