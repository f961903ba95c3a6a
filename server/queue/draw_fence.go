package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// writeFenced writes calls (chunkArgs each) in one round trip, each as a
// transaction of plain commands that draw_fence.lua checks: WATCH, the
// check, MULTI, ZADD of the chunk's places, HSET of the progress, EXEC.
// The ZADD costs Redis a third less than draw_chunk.lua's. It returns how
// many of calls, in order, it wrote; fewer, with no error, when a check or
// a watched key refused one: draw_chunk.lua then writes the rest, and
// settles why.
func (e *Engine) writeFenced(ctx context.Context, roomName string, calls [][]any, after func(written int, fenced bool)) (int, error) {
	k := roomKeys(e.ns, roomName)
	drawKey, withdrawn, line := k.key("draw"), k.key("withdrawn"), k.key("queue")
	check := slices.Clone(e.heads.get(e.ns, e.s.drawFence, roomName))
	check[0], check[1] = "eval", e.s.drawFence.src
	clock := e.clockArg()
	checks := make([]*redis.Cmd, len(calls))
	execs := make([]*redis.Cmd, len(calls))
	ends := make([]int, len(calls))
	err := e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, c := range calls {
				start := c[2].(int)
				ends[i] = start + (len(c)-4)/2
				p.Do(ctx, "watch", drawKey, withdrawn)
				checks[i] = p.Do(ctx, append(slices.Clip(check), c[0], c[1], start, c[3], clock)...)
				p.Do(ctx, "multi")
				p.Do(ctx, append([]any{"zadd", line}, c[4:]...)...)
				p.Do(ctx, "hset", drawKey, "written", ends[i])
				execs[i] = p.Do(ctx, "exec")
			}
			return nil
		})
		if errors.Is(err, redis.Nil) { // a refused EXEC: read below
			err = nil
		}
		return err
	}, drawKey)
	if err != nil {
		return 0, err
	}
	for i := range calls {
		ok, err := checks[i].Int64()
		if err != nil {
			return i, err
		}
		if ok != 1 {
			return i, nil
		}
		res, err := execs[i].Slice()
		if errors.Is(err, redis.Nil) {
			return i, nil
		}
		if err != nil {
			return i, err
		}
		for _, r := range res {
			if err, bad := r.(error); bad {
				return i, fmt.Errorf("write chunk at place %d: %w", ends[i]-(len(calls[i])-4)/2, err)
			}
		}
		if after != nil {
			after(ends[i], true)
		}
	}
	return len(calls), nil
}
