package livestats

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/histogram"
	"waitingroom/server/queue"
)

// Second is one second of a room's live figures. Waiting, Prequeued,
// Active and Rate are as of the last tick in that second (zero when none
// ran); Admitted, Placed and Failed (by reason) are totals over the second,
// summed over every instance; P50 and P95 are the order latency's, from
// the merged histogram (zero without orders).
type Second struct {
	At                                   time.Time
	Waiting, Prequeued, Active, Admitted int64
	Placed                               int64
	// IssuerFailed counts the issuers' failed ticks and draws of the room.
	IssuerFailed int64
	Failed       map[string]int64
	P50, P95     time.Duration
	Rate         float64
	// Ticked reports that an admission tick ran in that second (the line
	// and the rate are as of it); the rate alone cannot say, since an
	// adaptive room's may be 0.
	Ticked bool
}

// Instance is one server instance's last heartbeat.
type Instance struct {
	ID   string
	SSE  int64
	Seen time.Time
}

// Reader reads the series back.
type Reader struct {
	rdb redis.UniversalClient
	ns  string
	clk clockwork.Clock
}

// NewReader returns a Reader for the deployment namespace ns.
func NewReader(rdb redis.UniversalClient, ns string) *Reader {
	return &Reader{rdb: rdb, ns: ns, clk: clockwork.NewRealClock()}
}

// WithClock has the reader take now from clk (the series' last second,
// the heartbeats' age), and returns the reader.
func (r *Reader) WithClock(clk clockwork.Clock) *Reader {
	r.clk = clk
	return r
}

// Series returns one Second per second from since (at most Keep ago) to
// now, oldest first; seconds nobody recorded are zero, and so are the
// seconds before the room was created: a room deleted and created again
// under the same name does not show the old room's last minutes. It reads
// the room's minute hashes that the window spans (at most MaxSeriesReads
// commands in one pipeline, whatever they hold).
func (r *Reader) Series(ctx context.Context, room string, since time.Time) ([]Second, error) {
	now := r.clk.Now().Unix()
	from := max(since.Unix(), now-int64(Keep/time.Second))
	if from > now {
		return nil, nil
	}
	pipe := r.rdb.Pipeline()
	created := pipe.HGet(ctx, queue.SettingsKey(r.ns, room), queue.CreatedField)
	first := minuteOf(from)
	cmds := make([]*redis.MapStringStringCmd, 0, minuteOf(now)-first+1)
	for m := first; m <= minuteOf(now); m++ {
		cmds = append(cmds, pipe.HGetAll(ctx, minuteKey(r.ns, room, m*60)))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("livestats: series %s: %w", room, err)
	}
	// Unknown (a room created before the field existed): every second counts.
	firstSec := int64(math.MinInt64)
	if ms, err := strconv.ParseInt(created.Val(), 10, 64); err == nil {
		firstSec = ms / 1000
	}
	// Each second's figures, by its offset from from.
	secs := make([]map[string]string, now-from+1)
	for i, c := range cmds {
		base := (first + int64(i)) * 60
		for f, v := range c.Val() {
			off, name, ok := strings.Cut(f, ":")
			o, err := strconv.ParseInt(off, 10, 64)
			sec := base + o
			if !ok || err != nil || o < 0 || o >= 60 || sec < from || sec > now || sec < firstSec {
				continue
			}
			if secs[sec-from] == nil {
				secs[sec-from] = map[string]string{}
			}
			secs[sec-from][name] = v
		}
	}
	out := make([]Second, len(secs))
	for i, h := range secs {
		out[i] = parseSecond(time.Unix(from+int64(i), 0), h)
	}
	return out, nil
}

// MaxSeriesReads bounds the Redis commands of one Series: the settings'
// creation time and the minutes that Keep spans.
const MaxSeriesReads = 1 + int(Keep/time.Minute) + 2

func parseSecond(at time.Time, h map[string]string) Second {
	s := Second{At: at}
	var hist [nBuckets]int64
	num := func(v string) int64 { n, _ := strconv.ParseInt(v, 10, 64); return n }
	for f, v := range h {
		switch {
		case f == fWaiting:
			s.Waiting, s.Ticked = num(v), true
		case f == fPrequeued:
			s.Prequeued = num(v)
		case f == fActive:
			s.Active = num(v)
		case f == fAdmitted:
			s.Admitted = num(v)
		case f == fRate:
			s.Rate, _ = strconv.ParseFloat(v, 64)
		case f == fPlaced:
			s.Placed = num(v)
		case f == fIssuerFailed:
			s.IssuerFailed = num(v)
		case strings.HasPrefix(f, fFailed):
			if s.Failed == nil {
				s.Failed = map[string]int64{}
			}
			s.Failed[f[len(fFailed):]] = num(v)
		case strings.HasPrefix(f, fBucket):
			if i, err := strconv.Atoi(f[len(fBucket):]); err == nil && i >= 0 && i < nBuckets {
				hist[i] = num(v)
			}
		}
	}
	s.P50, s.P95 = Quantile(hist, 0.5), Quantile(hist, 0.95)
	return s
}

// Quantile estimates the q-quantile (0 < q ≤ 1) of a latency histogram
// with Bounds (see histogram.Quantile). It is 0 for an empty histogram.
func Quantile(hist [nBuckets]int64, q float64) time.Duration {
	return histogram.Quantile(Bounds[:], hist[:], q)
}

// Instances returns the instances that sent a heartbeat in the last Stale,
// and prunes the others.
func (r *Reader) Instances(ctx context.Context) ([]Instance, error) {
	h, err := r.rdb.HGetAll(ctx, instancesKey(r.ns)).Result()
	if err != nil {
		return nil, fmt.Errorf("livestats: instances: %w", err)
	}
	now := r.clk.Now()
	var out []Instance
	var stale []string
	for id, v := range h {
		c, ms, _ := strings.Cut(v, " ")
		n, err1 := strconv.ParseInt(c, 10, 64)
		at, err2 := strconv.ParseInt(ms, 10, 64)
		seen := time.UnixMilli(at)
		if err1 != nil || err2 != nil || now.Sub(seen) > Stale {
			stale = append(stale, id)
			continue
		}
		out = append(out, Instance{ID: id, SSE: n, Seen: seen})
	}
	if len(stale) > 0 {
		if err := r.rdb.HDel(ctx, instancesKey(r.ns), stale...).Err(); err != nil {
			return nil, fmt.Errorf("livestats: prune instances: %w", err)
		}
	}
	sortInstances(out)
	return out, nil
}

func sortInstances(in []Instance) {
	slices.SortFunc(in, func(a, b Instance) int { return strings.Compare(a.ID, b.ID) })
}
