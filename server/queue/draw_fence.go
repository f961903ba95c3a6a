package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// fence writes chunks of a room's drawn order as transactions of plain
// commands, each opened by draw_fence.lua's check:
//
//	WATCH draw withdrawn drawlease
//	EVAL draw_fence.lua (the check)
//	MULTI
//	EXISTS <every key the check reads or writes>
//	ZADD queue <the chunk's places>
//	HSET draw written <the chunk's end>
//	PEXPIRE drawlease <lease>
//	EXEC
//
// The ZADD costs Redis a third less than draw_chunk.lua's. A check that
// refuses touches the draw's hash, so EXEC fails; so does a leave, a draw
// finished or a lease taken over between WATCH and EXEC. On Redis Cluster,
// EXISTS makes EXEC fail whenever the check was refused for the slot's
// keys being on the move (TRYAGAIN, ASK).
type fence struct {
	check                        []any // EVAL draw_fence.lua with its keys, ARGV[1]
	keys                         []any // the check's keys, for EXISTS
	draw, withdrawn, lease, line string
	clock                        string
}

func (e *Engine) fence(roomName string) *fence {
	k := roomKeys(e.ns, roomName)
	f := &fence{draw: k.key("draw"), withdrawn: k.key("withdrawn"), lease: k.key("drawlease"), line: k.key("queue"), clock: e.clockArg()}
	head := e.heads.get(e.ns, e.s.drawFence, roomName)
	f.check = slices.Clone(head)
	f.check[0], f.check[1] = "eval", e.s.drawFence.src
	n := len(e.s.drawFence.keys)
	f.keys = append([]any{"exists"}, head[3:3+n]...)
	return f
}

// open queues the WATCH and the check of chunk c (chunkArgs).
func (f *fence) open(ctx context.Context, p redis.Pipeliner, c []any) *redis.Cmd {
	p.Do(ctx, "watch", f.draw, f.withdrawn, f.lease)
	return p.Do(ctx, append(slices.Clip(f.check), c[0], c[2], c[3], f.clock)...)
}

// commit queues the transaction that writes chunk c, ending at end.
func (f *fence) commit(ctx context.Context, p redis.Pipeliner, c []any, end int) *redis.Cmd {
	p.Do(ctx, "multi")
	p.Do(ctx, f.keys...)
	p.Do(ctx, append([]any{"zadd", f.line}, c[4:]...)...)
	p.Do(ctx, "hset", f.draw, "written", end)
	p.Do(ctx, "pexpire", f.lease, c[1])
	return p.Do(ctx, "exec")
}

// writeFenced writes calls (chunkArgs each) as fenced transactions, all in
// one pipeline (go-redis's Watch adds a WATCH before and an UNWATCH after
// it). It returns how many of calls, in order, it wrote; fewer, with no
// error, when a check or a watched key refused one: draw_chunk.lua then
// writes the rest, and settles why.
func (e *Engine) writeFenced(ctx context.Context, roomName string, calls [][]any, after func(written int, fenced bool)) (int, error) {
	f := e.fence(roomName)
	checks := make([]*redis.Cmd, len(calls))
	execs := make([]*redis.Cmd, len(calls))
	ends := make([]int, len(calls))
	err := e.rdb.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, c := range calls {
				ends[i] = c[2].(int) + (len(c)-4)/2
				checks[i] = f.open(ctx, p, c)
				execs[i] = f.commit(ctx, p, c, ends[i])
			}
			return nil
		})
		return err // each command's own reply is read below
	}, f.draw)
	if checks[0] == nil { // the pipeline was never sent
		return 0, err
	}
	for i, c := range calls {
		start := c[2].(int)
		ok, checkErr := checks[i].Int64()
		res, execErr := execs[i].Slice()
		switch {
		case execErr == nil && (checkErr != nil || ok != 1):
			return i, fmt.Errorf("the chunk at place %d was written though its check did not pass (%d, %v)", start, ok, checkErr)
		case checkErr != nil:
			return i, fmt.Errorf("check the chunk at place %d: %w", start, checkErr)
		case ok != 1, errors.Is(execErr, redis.Nil):
			return i, nil
		case execErr != nil:
			return i, fmt.Errorf("write the chunk at place %d: %w", start, execErr)
		}
		for _, r := range res {
			if err, bad := r.(error); bad {
				return i, fmt.Errorf("write the chunk at place %d: %w", start, err)
			}
		}
		if after != nil {
			after(ends[i], true)
		}
	}
	return len(calls), nil
}
