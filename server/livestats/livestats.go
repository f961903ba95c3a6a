// Package livestats keeps a per-second series of each room's live figures
// in Redis for about 15 minutes, for the console's dashboard: the line and
// the admissions (from the issuer's ticks), the orders placed and failed
// with their latency (from every instance's order path), and each
// instance's SSE connection count.
//
// Each room has one hash per minute, named with the room's hash tag (see
// queue.RoomKey), that every instance adds to; its fields are a second's
// offset in the minute and a figure ("17:w"). A room's window is about 17
// keys however busy it is, and a Reader reads it back in as many commands,
// merging nothing but computing percentiles from the summed latency
// histogram.
package livestats

import (
	"strconv"
	"time"

	"waitingroom/server/histogram"
	"waitingroom/server/queue"
)

// Keep is how long a second of a room's series stays in Redis.
const Keep = 15 * time.Minute

// keepFor is the expiry set on a minute's hash at each write: Keep, plus
// the minute it spans, plus a minute so that a series read up to Keep back
// is whole.
const keepFor = Keep + 2*time.Minute

// nBuckets is the number of histogram buckets: len(Bounds) and +Inf.
const nBuckets = 11

// Bounds are the upper bounds of the order latency histogram's buckets; a
// last bucket counts everything slower.
var Bounds = [nBuckets - 1]time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second}

// bucketOf returns the index of took's histogram bucket, len(Bounds) for
// the last, unbounded one.
func bucketOf(took time.Duration) int { return histogram.Bucket(Bounds[:], took) }

// Figures of a second, each a field "<offset>:<figure>" of its minute's
// hash (see field).
const (
	fWaiting   = "w"
	fPrequeued = "pq"
	fActive    = "act"
	fAdmitted  = "adm"
	fRate      = "rate"
	fPlaced    = "pl"
	// fIssuerFailed counts the issuer's failed ticks and draws of the room.
	fIssuerFailed = "ifail"
	fFailed       = "f:" // + reason
	fBucket       = "h"  // + bucket index
)

// minuteKey names room's hash of the minute that holds second sec (Unix).
func minuteKey(ns, room string, sec int64) string {
	return queue.RoomKey(ns, room, "live:m:"+strconv.FormatInt(minuteOf(sec), 10))
}

// minuteOf returns the minute (Unix seconds / 60) that holds second sec.
func minuteOf(sec int64) int64 {
	if sec < 0 && sec%60 != 0 {
		return sec/60 - 1
	}
	return sec / 60
}

// field names figure f of second sec in its minute's hash.
func field(sec int64, f string) string {
	return strconv.FormatInt(sec-minuteOf(sec)*60, 10) + ":" + f
}

func instancesKey(ns string) string { return ns + ":live:instances" }

// Stale is how long an instance's heartbeat counts: older entries are
// ignored and pruned.
const Stale = 10 * time.Second
