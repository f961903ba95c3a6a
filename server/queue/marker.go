package queue

import (
	"context"
	"fmt"
	"time"
)

// markerKey is the deployment's data marker: set once the rooms are in
// Redis, never expiring, so that its absence means Redis lost its data
// (a restart without persistence, a flush, a failover to an empty
// replica). It lives in the deployment's namespace, beside the rooms set.
func markerKey(ns string) string { return ns + ":marker" }

// SetMarker records that Redis holds the deployment's rooms.
func (e *Engine) SetMarker(ctx context.Context) error {
	if err := e.rdb.Set(ctx, markerKey(e.ns), time.Now().UTC().Format(time.RFC3339), 0).Err(); err != nil {
		return fmt.Errorf("queue: set data marker: %w", err)
	}
	return nil
}

// HasMarker reports whether the data marker is still there.
func (e *Engine) HasMarker(ctx context.Context) (bool, error) {
	n, err := e.rdb.Exists(ctx, markerKey(e.ns)).Result()
	if err != nil {
		return false, fmt.Errorf("queue: read data marker: %w", err)
	}
	return n == 1, nil
}

// Ping reports whether Redis answers.
func (e *Engine) Ping(ctx context.Context) error {
	if err := e.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("queue: ping: %w", err)
	}
	return nil
}
