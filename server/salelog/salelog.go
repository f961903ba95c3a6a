// Package salelog tells the story of a sale in the server's log: one
// structured line when a room opens, pauses, resumes, sells out, is
// reopened, deleted or has its rate changed (also kept in the audit log
// when a Recorder is set), and a summary per room every interval while it
// has a line: waiting, admitted/s, orders/s and failed orders by reason.
//
// The rates are global (from the room's counters in Redis, the same on
// every instance); the failures are this instance's. Nothing secret is
// logged: no tokens, no visitor ids.
package salelog

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/queue"
)

// Event is what happened to a room.
type Event string

// The events of a sale.
const (
	// Created: the room was created, not open yet (scheduled, closed or
	// paused); Opened: the sale opened, at creation or on schedule.
	Created  Event = "created"
	Opened   Event = "opened"
	Paused   Event = "paused"
	Resumed  Event = "resumed"
	SoldOut  Event = "sold out"
	Reopened Event = "reopened" // open again after selling out, or closing
	Deleted  Event = "deleted"
	// RateChanged: the room's admission rate changed ("old", "new");
	// Closed: the room was put in mode closed; Draining: new joins
	// stopped while the line is still served.
	RateChanged Event = "rate changed"
	Closed      Event = "closed"
	Draining    Event = "draining"
	// PrequeueOpened: the room's pre-queue opened on schedule.
	PrequeueOpened Event = "prequeue opened"
	// AdaptiveOn and AdaptiveOff: adaptive admission was turned on (with
	// its bounds, target and budget) or off (by hand, or by a manual
	// rate). The controller's own changes are not events: they are
	// logged and counted (server/adapt).
	AdaptiveOn  Event = "adaptive on"
	AdaptiveOff Event = "adaptive off"
)

// Events are all the events of a sale, for the views that name them.
var Events = []Event{Created, Opened, Paused, Resumed, SoldOut, Reopened, Deleted, RateChanged, Closed, Draining, PrequeueOpened,
	AdaptiveOn, AdaptiveOff}

// Counters are the rooms' live counters, in Redis.
type Counters interface {
	Rooms(ctx context.Context) ([]string, error)
	Stats(ctx context.Context, room string) (queue.Stats, error)
}

// Log writes the sale's events and summaries.
type Log struct {
	counters Counters
	log      *slog.Logger
	// recorder, when set, keeps every event in the audit log.
	recorder  Recorder
	recording sync.WaitGroup // events queued or being written
	pending   chan audit.Entry
	writerMu  sync.Mutex
	writing   bool // a writer is draining pending

	mu       sync.Mutex
	failures map[string]map[string]int64 // room -> reason -> count, since the last summary
}

// New returns a Log that reads counters and writes to log.
func New(counters Counters, log *slog.Logger) *Log {
	return &Log{counters: counters, log: log, failures: map[string]map[string]int64{}}
}

// Event logs one event of room, with attrs (key, value pairs) after it.
func (l *Log) Event(room string, ev Event, attrs ...any) {
	if ev == Deleted {
		l.mu.Lock()
		delete(l.failures, room)
		l.mu.Unlock()
	}
	l.log.Info("sale event", append([]any{"room", room, "event", string(ev)}, attrs...)...)
	l.record(room, ev, attrs)
}

// Failed counts one failed order attempt in room, for the next summary.
func (l *Log) Failed(room, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.failures[room]
	if m == nil {
		m = map[string]int64{}
		l.failures[room] = m
	}
	m[reason]++
}

// Run writes a summary every interval until ctx is done.
func (l *Log) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	l.RunTicks(ctx, time.Now(), t.C)
}

// RunTicks writes a summary at each tick until ctx is done: the counters
// are read when it starts (the baseline, at start) and at every tick, and
// each summary covers the time between two reads by the ticks' own times.
// Run drives it with a ticker; a test drives it with a channel and times
// of its own.
func (l *Log) RunTicks(ctx context.Context, start time.Time, ticks <-chan time.Time) {
	prev, _ := l.snapshot(ctx)
	last := start
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticks:
			cur, err := l.snapshot(ctx)
			if err != nil {
				if ctx.Err() == nil {
					l.log.Warn("sale summary: read counters", "err", err)
				}
				continue
			}
			if prev != nil { // without a baseline, this read becomes it
				l.summarize(prev, cur, now.Sub(last))
			}
			prev, last = cur, now
		}
	}
}

// snapshot reads every room's counters.
func (l *Log) snapshot(ctx context.Context) (map[string]queue.Stats, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	names, err := l.counters.Rooms(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]queue.Stats, len(names))
	for _, name := range names {
		st, err := l.counters.Stats(ctx, name)
		if err != nil {
			continue // deleted meanwhile
		}
		out[name] = st
	}
	return out, nil
}

// summarize logs one line per room that has a line, or had activity, over
// the interval from prev to cur.
func (l *Log) summarize(prev, cur map[string]queue.Stats, over time.Duration) {
	l.mu.Lock()
	failures := l.failures
	l.failures = map[string]map[string]int64{}
	l.mu.Unlock()
	secs := max(over.Seconds(), 1e-3)
	for _, name := range slices.Sorted(maps.Keys(cur)) {
		st, before := cur[name], prev[name] // a new room counts from zero
		admitted := max(st.Admitted-before.Admitted, 0)
		orders := max(st.Consumed-before.Consumed, 0)
		var failed int64
		var reasons []any
		for _, reason := range slices.Sorted(maps.Keys(failures[name])) {
			n := failures[name][reason]
			failed += n
			reasons = append(reasons, slog.Int64(reason, n))
		}
		if st.Waiting == 0 && admitted == 0 && orders == 0 && failed == 0 {
			continue
		}
		l.log.Info("sale summary", "room", name, "waiting", st.Waiting, "active", st.Active,
			"admittedPerSec", perSec(admitted, secs), "ordersPerSec", perSec(orders, secs),
			"failedOrders", failed, slog.Group("failures", reasons...),
			"soldOut", st.SoldOut, "interval", over.Round(time.Millisecond).String())
	}
}

func perSec(n int64, secs float64) float64 {
	return math.Round(float64(n)/secs*100) / 100
}
