package queue

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// Deletion is what DeleteRoom removed.
type Deletion struct {
	// Existed reports that the room had settings or was in the rooms set.
	Existed bool
	// Keys is the number of the room's keys deleted, its settings included.
	Keys int64
}

// DeleteRoom removes room name and its line: first from the rooms set (the
// issuers stop ticking it) and its settings (every script then answers
// "not found", so nobody enters again), then every other key under the
// room's prefix: line, tokens, counters. The keys are found with SCAN, on
// every master of a Cluster, and unlinked in batches, so that a long line
// never blocks Redis. Deleting an unknown room is not an error: Existed is
// false.
func (e *Engine) DeleteRoom(ctx context.Context, name string) (Deletion, error) {
	if !room.ValidName(name) {
		return Deletion{}, fmt.Errorf("queue: delete room: invalid name %q", name)
	}
	k := roomKeys(name)
	removed, err := e.rdb.SRem(ctx, roomsKey, name).Result()
	if err != nil {
		return Deletion{}, fmt.Errorf("queue: delete room %s: %w", name, err)
	}
	cfg, err := e.rdb.Unlink(ctx, k.cfg).Result()
	if err != nil {
		return Deletion{}, fmt.Errorf("queue: delete room %s: %w", name, err)
	}
	d := Deletion{Existed: removed > 0 || cfg > 0, Keys: cfg}
	pattern := globEscape(k.prefix) + "*"
	switch c := e.rdb.(type) {
	case *redis.ClusterClient:
		// All of a room's keys share its hash tag, so one master holds
		// them; asking each is simpler than finding it.
		var mu sync.Mutex
		err = c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			n, err := unlinkMatching(ctx, node, pattern)
			mu.Lock()
			d.Keys += n
			mu.Unlock()
			return err
		})
	case *redis.Client:
		var n int64
		n, err = unlinkMatching(ctx, c, pattern)
		d.Keys += n
	default:
		err = fmt.Errorf("unsupported Redis client %T", e.rdb)
	}
	if err != nil {
		return d, fmt.Errorf("queue: delete keys of room %s: %w", name, err)
	}
	return d, nil
}

// unlinkMatching unlinks every key of c that matches pattern, in batches.
func unlinkMatching(ctx context.Context, c *redis.Client, pattern string) (int64, error) {
	var total int64
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return total, err
		}
		if len(keys) > 0 {
			n, err := c.Unlink(ctx, keys...).Result()
			total += n
			if err != nil {
				return total, err
			}
		}
		if next == 0 {
			return total, nil
		}
		cursor = next
	}
}

// globEscape quotes the characters that SCAN's MATCH pattern treats as
// wildcards.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
