package queue

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The deployment's issuers are the server instances whose admission loops
// are running: each beats into one sorted set at every tick (member: the
// instance's id, score: until when the beat holds it live, by the
// scripts' clock), and each splits the rooms' ticks among the issuers
// live (see issuer.Loop.Share). Each issuer says how long its own beat
// holds, so that every instance reads the same issuers live whatever its
// own tick.

func issuersKey(ns string) string { return ns + ":issuers" }

// issuersForget is how long an issuer stays in the set past its beat's
// hold before a beat of another removes it: the set sheds the dead only.
const issuersForget = 10 * time.Minute

// beatScript records that ARGV[1] is live for ARGV[2] µs from now, drops
// the issuers whose hold ended ARGV[3] µs ago, and returns the issuers
// live now, in order of their ids. ARGV[4] is the clock (see clockArg):
// "" for Redis' TIME.
var beatScript = redis.NewScript(`
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', now - tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[3]) / 1000))
local live = redis.call('ZRANGEBYSCORE', KEYS[1], string.format('%d', now), '+inf')
table.sort(live)
return live
`)

// Beat records that the issuer id runs now and counts as live for the
// next live, and returns the issuers live now, id among them, sorted.
func (e *Engine) Beat(ctx context.Context, id string, live time.Duration) ([]string, error) {
	if id == "" || live <= 0 {
		return nil, fmt.Errorf("queue: issuer beat: an id and a positive hold are needed")
	}
	ids, err := beatScript.Run(ctx, e.rdb, []string{issuersKey(e.ns)}, id, live.Microseconds(),
		issuersForget.Microseconds(), e.clockArg()).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("queue: issuer beat of %s: %w", id, err)
	}
	return ids, nil
}

// Retire takes the issuer id off the set, so that the others take over
// its rooms at their next tick rather than when its beat grows old.
func (e *Engine) Retire(ctx context.Context, id string) error {
	if err := e.rdb.ZRem(ctx, issuersKey(e.ns), id).Err(); err != nil {
		return fmt.Errorf("queue: retire issuer %s: %w", id, err)
	}
	return nil
}

// Issuers returns the issuers live now, sorted (see Beat).
func (e *Engine) Issuers(ctx context.Context) ([]string, error) {
	now := e.wallNow()
	if e.now == nil {
		t, err := e.rdb.Time(ctx).Result()
		if err != nil {
			return nil, fmt.Errorf("queue: list issuers: %w", err)
		}
		now = t
	}
	ids, err := e.rdb.ZRangeByScore(ctx, issuersKey(e.ns), &redis.ZRangeBy{Min: strconv.FormatInt(now.UnixMicro(), 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, fmt.Errorf("queue: list issuers: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}
