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

// The registry's keys share one hash tag, so that the beat's one script
// call may touch both on Redis Cluster.
func issuersKey(ns string) string  { return ns + ":{issuers}" }
func drawAsksKey(ns string) string { return ns + ":{issuers}:drawasks" }

// issuersForget is how long an issuer stays in the set past its beat's
// hold before a beat of another removes it: the set sheds the dead only.
const issuersForget = 10 * time.Minute

// scriptNow is the Lua that binds now, in µs: ARGV[arg] (the engine's
// clock, see clockArg) or, when that is "", Redis' TIME.
func scriptNow(arg int) string {
	return "local now = tonumber(ARGV[" + strconv.Itoa(arg) + "])\n" +
		"if not now then\n  local t = redis.call('TIME')\n  now = tonumber(t[1]) * 1000000 + tonumber(t[2])\nend\n"
}

// beatLua records that ARGV[1] is live for ARGV[2] µs from now, drops
// the issuers whose hold ended ARGV[3] µs ago and the asks for a draw
// that ran out, and returns the issuers live now, in order of their ids,
// and the rooms whose draw is asked for. ARGV[4] is the clock (see
// clockArg): "" for Redis' TIME.
const beatLua = `
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', now - tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], math.floor(tonumber(ARGV[3]) / 1000))
local live = redis.call('ZRANGEBYSCORE', KEYS[1], string.format('%d', now), '+inf')
table.sort(live)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format('%d', now))
return {live, redis.call('ZRANGE', KEYS[2], 0, -1)}
`

// askLua asks for ARGV[1]'s draw until ARGV[2] µs from now (ARGV[3]:
// the clock).
const askLua = `
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) / 1000))
return 1
`

// registryScripts are the registry's scripts, each after the Lua that
// binds now (scriptNow).
type registryScripts struct{ beat, ask *redis.Script }

func newRegistryScripts() registryScripts {
	return registryScripts{beat: redis.NewScript(scriptNow(4) + beatLua), ask: redis.NewScript(scriptNow(3) + askLua)}
}

// Beat is what an issuer's beat reads: the issuers live, sorted, and the
// rooms whose draw their owner asked any issuer to run (see AskDraw).
type Beat struct {
	Live, DrawAsks []string
}

// Beat records that the issuer id runs now and counts as live for the
// next live, and returns the issuers live now, id among them, and the
// rooms whose draw is asked for.
func (e *Engine) Beat(ctx context.Context, id string, live time.Duration) (Beat, error) {
	if id == "" || live <= 0 {
		return Beat{}, fmt.Errorf("queue: issuer beat: an id and a positive hold are needed")
	}
	res, err := e.registry.beat.Run(ctx, e.rdb, []string{issuersKey(e.ns), drawAsksKey(e.ns)}, id, live.Microseconds(),
		issuersForget.Microseconds(), e.clockArg()).Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("a reply of %d parts", len(res))
	}
	if err != nil {
		return Beat{}, fmt.Errorf("queue: issuer beat of %s: %w", id, err)
	}
	return Beat{Live: asStrings(res[0]), DrawAsks: asStrings(res[1])}, nil
}

// AskDraw asks every issuer, for the next d, to try room's draw whoever
// owns the room: its owner could not run it (it cannot derive the
// committed seed, see draw.ErrNoSecret), another instance may.
func (e *Engine) AskDraw(ctx context.Context, room string, d time.Duration) error {
	if err := e.registry.ask.Run(ctx, e.rdb, []string{drawAsksKey(e.ns)}, room, d.Microseconds(), e.clockArg()).Err(); err != nil {
		return fmt.Errorf("queue: ask for the draw of %s: %w", room, err)
	}
	return nil
}

// asStrings reads a script's array of strings.
func asStrings(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
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
