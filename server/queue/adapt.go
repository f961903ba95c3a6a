package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// AdaptRoom is what the adaptive controller (server/adapt) reads of an
// adaptive room before it decides: the settings, the rate as set, the
// line, and the last decision applied.
type AdaptRoom struct {
	Adapt   room.Adapt
	Rate    float64
	Paused  bool
	Waiting int64
	// N counts the decisions applied: ApplyAdapt takes a decision only
	// while it is still the N read.
	N int64
	// Last is when the last decision was applied (Redis TIME), zero for
	// none; LastReason is its reason.
	Last       time.Time
	LastReason string
	// ByOrders: the room's orderRate is below its maxRate and its orders go
	// through the order bucket, so Adapt.MaxRate is the orderRate
	// (room.Adapt.Ceiling), the controller's ceiling.
	ByOrders bool
	// Knee is the controller's estimate of the shop's capacity, in
	// admissions a second (0: none yet), shared by every instance.
	Knee float64
	// LastCut is when the controller last cut the rate (zero: never).
	LastCut time.Time
	// Base is the controller's no-load order p95 (0: none yet).
	Base time.Duration
}

// adaptiveKey is the set of the rooms whose adaptive admission is on, so
// that the controller of a deployment without any costs one command a
// second, not one per room. AdaptRooms checks each room's own setting:
// the set may only hold a room too many for a moment.
func adaptiveKey(ns string) string { return ns + ":adaptive" }

// markAdaptive adds room name to the adaptive rooms' set, or takes it out.
func (e *Engine) markAdaptive(ctx context.Context, name string, on bool) error {
	var err error
	if on {
		err = e.rdb.SAdd(ctx, adaptiveKey(e.ns), name).Err()
	} else {
		err = e.rdb.SRem(ctx, adaptiveKey(e.ns), name).Err()
	}
	if err != nil {
		return fmt.Errorf("queue: mark room %s adaptive: %w", name, err)
	}
	return nil
}

// AdaptiveRooms returns the names of the rooms marked adaptive, unsorted.
func (e *Engine) AdaptiveRooms(ctx context.Context) ([]string, error) {
	names, err := e.rdb.SMembers(ctx, adaptiveKey(e.ns)).Result()
	if err != nil {
		return nil, fmt.Errorf("queue: list adaptive rooms: %w", err)
	}
	return names, nil
}

// adaptCfgFields are the settings AdaptRooms reads, in the order it reads
// them.
var adaptCfgFields = []string{"adaptive", "rate", "paused", "minRate", "maxRate", "targetP95Ms", "maxErrorRate",
	"orderRate", "gateOn", "mode", "healthURL"}

// AdaptRooms returns, by name, the rooms of names whose adaptive admission
// is on, read in one pipeline. Rooms that are off, unknown or whose
// settings do not parse are left out.
func (e *Engine) AdaptRooms(ctx context.Context, names []string) (map[string]AdaptRoom, error) {
	type cmds struct {
		cfg     *redis.SliceCmd
		waiting []*redis.IntCmd // each line's (LINES)
		state   *redis.SliceCmd
	}
	cs := make([]cmds, len(names))
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, name := range names {
			k := roomKeys(e.ns, name)
			cs[i] = cmds{
				cfg:   p.HMGet(ctx, k.key("cfg"), adaptCfgFields...),
				state: p.HMGet(ctx, k.key("adapt"), "n", "ms", "reason", "knee", "cut", "baseUs"),
			}
			for l := range maxLines {
				cs[i].waiting = append(cs[i].waiting, p.ZCard(ctx, k.key(lineKey(l, "queue"))))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue: adaptive rooms: %w", err)
	}
	out := make(map[string]AdaptRoom)
	for i, name := range names {
		c := cs[i].cfg.Val()
		if len(c) != len(adaptCfgFields) || asString(c[0]) != "1" {
			continue
		}
		r := AdaptRoom{Paused: asString(c[2]) == "1"}
		for _, w := range cs[i].waiting {
			r.Waiting += w.Val()
		}
		var errs [5]error
		r.Rate, errs[0] = strconv.ParseFloat(asString(c[1]), 64)
		r.Adapt.MinRate, errs[1] = strconv.ParseFloat(asString(c[3]), 64)
		r.Adapt.MaxRate, errs[2] = strconv.ParseFloat(asString(c[4]), 64)
		r.Adapt.TargetP95Ms, errs[3] = strconv.Atoi(asString(c[5]))
		r.Adapt.MaxErrorRate, errs[4] = strconv.ParseFloat(asString(c[6]), 64)
		if errs != [5]error{} {
			continue
		}
		r.Adapt.Adaptive = true
		r.Adapt.HealthURL = asString(c[10])
		// The order bucket caps the controller (room.Adapt.Ceiling).
		if orderRate, err := strconv.ParseFloat(asString(c[7]), 64); err == nil {
			r.Adapt.MaxRate, r.ByOrders = r.Adapt.Ceiling(orderRate, room.OrdersBucketed(asString(c[8]) == "1", asString(c[9])))
		}
		if st := cs[i].state.Val(); len(st) == 6 {
			r.N, _ = strconv.ParseInt(asString(st[0]), 10, 64)
			r.Last = unixMilli(asString(st[1]))
			r.LastReason = asString(st[2])
			r.Knee, _ = strconv.ParseFloat(asString(st[3]), 64)
			r.LastCut = unixMilli(asString(st[4]))
			us, _ := strconv.ParseInt(asString(st[5]), 10, 64)
			r.Base = time.Duration(us) * time.Microsecond
		}
		out[name] = r
	}
	return out, nil
}

// AdaptDecision is one decision of the controller, made from an AdaptRoom
// read: the rate it read (From, with the decision count N) and the one it
// sets (To), why, and the signal it saw.
type AdaptDecision struct {
	N        int64
	From, To float64
	Reason   string
	// MinGap is the least time since the last decision applied, by Redis
	// TIME, for this one to be taken.
	MinGap    time.Duration
	P95       time.Duration
	ErrorRate float64
	Samples   int64
	// Knee and Base are the estimates to keep (AdaptRoom.Knee, Base); Cut
	// marks a cut, whose time the room keeps (AdaptRoom.LastCut).
	Knee float64
	Base time.Duration
	Cut  bool
}

// ApplyAdapt applies d to room atomically (adapt.lua) and reports whether
// it did: not when the room is no longer adaptive, when another decision
// was applied since d's read (any instance's), or within d.MinGap of the
// last one. The rate it writes is the one admit.lua reads at the next tick.
func (e *Engine) ApplyAdapt(ctx context.Context, name string, d AdaptDecision) (bool, string, error) {
	res, err := e.run(ctx, e.s.adapt, name, d.N, ratio(d.From), ratio(d.To), d.Reason, d.MinGap.Milliseconds(),
		d.P95.Milliseconds(), strconv.FormatFloat(d.ErrorRate, 'f', 4, 64), d.Samples, ratio(d.Knee), flag(d.Cut), d.Base.Microseconds()).Slice()
	if err != nil {
		return false, "", fmt.Errorf("queue: apply adaptive decision %s: %w", name, err)
	}
	if len(res) != 2 {
		return false, "", fmt.Errorf("queue: apply adaptive decision %s: unexpected reply %v", name, res)
	}
	return asInt(res[0]) == 1, asString(res[1]), nil
}

// unixMilli parses a time kept as Unix milliseconds; zero if it does not.
func unixMilli(s string) time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// ratio formats a rate as the cfg hash holds it.
func ratio(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// AdaptHistoryLen is how many changes a room's history keeps (adapt.lua
// trims it to this many).
const AdaptHistoryLen = 300

// AdaptChange is one entry of a room's controller history: a decision
// applied that changed the rate, or whose reason differed from the one
// before (so that a hold is explained once, not every second).
type AdaptChange struct {
	// At is when it was applied, by Redis TIME.
	At       time.Time
	From, To float64
	Reason   string
	// P95, ErrorRate and Samples are the signal it was decided on.
	P95       time.Duration
	ErrorRate float64
	Samples   int64
}

// AdaptHistory returns room's last n changes (at most AdaptHistoryLen),
// newest first; none for a room without any. An entry that does not parse
// is left out.
func (e *Engine) AdaptHistory(ctx context.Context, name string, n int) ([]AdaptChange, error) {
	n = min(n, AdaptHistoryLen)
	if n <= 0 {
		return nil, nil
	}
	raw, err := e.rdb.LRange(ctx, roomKeys(e.ns, name).key("adapthist"), 0, int64(n-1)).Result()
	if err != nil {
		return nil, fmt.Errorf("queue: adaptive history %s: %w", name, err)
	}
	out := make([]AdaptChange, 0, len(raw))
	for _, s := range raw {
		if c, ok := parseAdaptChange(s); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// parseAdaptChange reads one history entry, "ms from to p95 err samples
// reason" (adapt.lua).
func parseAdaptChange(s string) (AdaptChange, bool) {
	f := strings.SplitN(s, " ", 7)
	if len(f) != 7 {
		return AdaptChange{}, false
	}
	var c AdaptChange
	var errs [6]error
	var ms, p95 int64
	ms, errs[0] = strconv.ParseInt(f[0], 10, 64)
	c.From, errs[1] = strconv.ParseFloat(f[1], 64)
	c.To, errs[2] = strconv.ParseFloat(f[2], 64)
	p95, errs[3] = strconv.ParseInt(f[3], 10, 64)
	c.ErrorRate, errs[4] = strconv.ParseFloat(f[4], 64)
	c.Samples, errs[5] = strconv.ParseInt(f[5], 10, 64)
	if errs != [6]error{} {
		return AdaptChange{}, false
	}
	c.At, c.P95, c.Reason = time.UnixMilli(ms), time.Duration(p95)*time.Millisecond, f[6]
	return c, true
}
