package queue

import (
	"context"
	"testing"

	"waitingroom/server/servicetest"
)

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
