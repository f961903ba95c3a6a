package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/redis/go-redis/v9"

	"waitingroom/k6"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/visitor"
)

// memoryCommand measures Redis memory per waiting visitor, everything
// included (the line, the ticket counter, the liveness cells, the room's
// state), beside a bare ZSET of the same number of 22-character members.
func memoryCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("redis-memory", flag.ContinueOnError)
	url := fs.String("redis-url", "redis://127.0.0.1:6379/11", "a Redis database to fill and flush (it is FLUSHDB'd)")
	n := fs.Int("n", 100000, "waiting visitors")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n < 1000 || *n > 5000000 {
		return errors.New("redis-memory: -n out of 1000..5000000")
	}
	opt, err := redis.ParseURL(*url)
	if err != nil {
		return fmt.Errorf("redis-memory: %w", err)
	}
	opt.PoolSize = 32
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		return err
	}
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	if err := eng.SaveRoom(ctx, "memory", room.Defaults("memory")); err != nil {
		return err
	}
	ids := make([]string, *n)
	for i := range ids {
		if ids[i], err = visitor.NewID(); err != nil {
			return err
		}
	}
	before, err := k6.UsedMemory(ctx, rdb)
	if err != nil {
		return err
	}
	if err := k6.Parallel(*n, 32, func(i int) error { _, err := eng.Enter(ctx, "memory", ids[i]); return err }); err != nil {
		return err
	}
	after, err := k6.UsedMemory(ctx, rdb)
	if err != nil {
		return err
	}
	perVisitor := float64(after-before) / float64(*n)

	// The reference: a bare ZSET entry with a 22-character member.
	base, _ := k6.UsedMemory(ctx, rdb)
	for i := 0; i < *n; i += 1000 {
		pipe := rdb.Pipeline()
		for j := i; j < min(i+1000, *n); j++ {
			pipe.ZAdd(ctx, "bare", redis.Z{Score: float64(j), Member: ids[j]})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
	bare, _ := k6.UsedMemory(ctx, rdb)
	rdb.FlushDB(ctx)
	fmt.Fprintf(stdout, "%s waiting visitors: %.1f bytes each, everything included (used_memory %d -> %d)\n",
		strconv.Itoa(*n), perVisitor, before, after)
	fmt.Fprintf(stdout, "reference, a bare ZSET entry with a 22-character member: %.1f bytes\n", float64(bare-base)/float64(*n))
	return nil
}
