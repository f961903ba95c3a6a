package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// apiKeyField is the cfg hash's field of the room's API key hash. Only
// SetAPIKeyHash writes it (and a room's creation), never a settings save:
// a save racing a key rotation cannot bring the old key back.
const apiKeyField = "apikey"

// SetAPIKeyHash replaces room name's API key hash (hex SHA-256) with
// hash, alone: the room's other settings are not written. It returns
// room.ErrNotFound for an unknown room.
func (e *Engine) SetAPIKeyHash(ctx context.Context, name, hash string) error {
	if !room.ValidName(name) {
		return fmt.Errorf("queue: set API key: invalid name %q", name)
	}
	n, err := e.run(ctx, e.s.setAPIKey, name, hash).Int64()
	if err != nil {
		return fmt.Errorf("queue: set API key of %s: %w", name, err)
	}
	if n < 0 {
		return room.ErrNotFound
	}
	return nil
}

// APIKeyHash returns room name's API key hash as it is now, "" for none;
// room.ErrNotFound for an unknown room.
func (e *Engine) APIKeyHash(ctx context.Context, name string) (string, error) {
	h, err := e.rdb.HGet(ctx, roomKeys(e.ns, name).key("cfg"), apiKeyField).Result()
	if errors.Is(err, redis.Nil) {
		// No field: a room without a key, or one saved before the field
		// existed (its hash is in the gate's JSON).
		s, err := e.Room(ctx, name)
		return s.Gate.APIKeyHash, err
	}
	if err != nil {
		return "", fmt.Errorf("queue: API key of %s: %w", name, err)
	}
	return h, nil
}
