package queue

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// MarkPhase records phase as the schedule phase last seen in room, and
// returns the one recorded before ("" when none was). It is one atomic
// SET … GET: of the callers on any instances that mark a new phase at
// once, exactly one is told the old one, so that a change of phase is
// told once.
func (e *Engine) MarkPhase(ctx context.Context, roomName, phase string) (old string, err error) {
	old, err = e.rdb.SetArgs(ctx, roomKeys(e.ns, roomName).key("lastphase"), phase, redis.SetArgs{Get: true}).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return old, err
}
