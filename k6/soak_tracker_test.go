package k6

import (
	"fmt"
	"testing"
	"time"
)

// TestMissed: a silence up to the last event's "every" TICKs, and one
// more, is the cadence, not a loss; only the TICKs beyond it are lost.
func TestMissed(t *testing.T) {
	const s = 1_000_000 // µs
	tests := []struct {
		name            string
		last, at, every int64
		tick            time.Duration
		want            int64
	}{
		{"next tick", 5 * s, 6 * s, 1, time.Second, 0},
		{"one tick late: slack", 7 * s, 9 * s, 1, time.Second, 0},
		{"two ticks of silence beyond", 7 * s, 11 * s, 1, time.Second, 2},
		{"no every: every tick", 7 * s, 10 * s, 0, time.Second, 1},
		{"far back, on schedule", 100 * s, 130 * s, 30, time.Second, 0},
		{"early: a quarter less, or a correction", 100 * s, 120 * s, 30, time.Second, 0},
		{"far back, one event lost", 100 * s, 160 * s, 30, time.Second, 29},
		{"short ticks", 10 * s, 11 * s, 2, 250 * time.Millisecond, 1},
		{"no tick given: 1 s", 7 * s, 10 * s, 1, 0, 1},
		{"without a time", 0, 50 * s, 1, time.Second, 0},
		{"the same time", 9 * s, 9 * s, 1, time.Second, 0},
	}
	for _, tt := range tests {
		if got := missed(tt.last, tt.at, tt.every, tt.tick); got != tt.want {
			t.Errorf("%s: missed(%d, %d, every %d, %v) = %d, want %d", tt.name, tt.last, tt.at, tt.every, tt.tick, got, tt.want)
		}
	}
}

// ev is one event a tracker takes: id, name and "every" (0: none).
type ev struct {
	id    int64
	name  string
	every int64
}

func (e ev) data() []byte {
	t := e.id * 1_000_000
	if e.every == 0 {
		return fmt.Appendf(nil, `{"rank":5,"t":%d}`, t)
	}
	return fmt.Appendf(nil, `{"rank":5,"every":%d,"t":%d}`, e.every, t)
}

// TestTrackerCountsLostAndDuplicates: the snapshot on connect starts the
// stream; duplicates are ids already seen; the losses are cadence-aware,
// by the "every" of the last event received, snapshot's included.
func TestTrackerCountsLostAndDuplicates(t *testing.T) {
	p := func(id, every int64) ev { return ev{id, "position", every} }
	tests := []struct {
		name      string
		events    []ev
		lost, dup int64
	}{
		{"every tick, from an unclassed server", []ev{p(5, 0), p(6, 0), p(7, 0), p(7, 0), p(10, 0), p(9, 0), p(11, 0), p(0, 0), p(12, 0)}, 1, 2},
		{"far back, on schedule", []ev{p(100, 30), p(130, 30), p(160, 10), p(170, 1), p(171, 1)}, 0, 0},
		{"far back, one event lost", []ev{p(100, 30), p(160, 30)}, 29, 0},
		{"a late event beyond the cadence", []ev{p(100, 5), p(107, 5)}, 1, 0},
		{"the snapshot's every counts", []ev{p(100, 30), p(125, 1), p(126, 1)}, 0, 0},
		{"the cadence shortens near the front", []ev{p(100, 30), p(110, 2), p(112, 1), p(115, 1)}, 1, 0},
		{"a ready event changes nothing", []ev{p(100, 30), {0, "ready", 0}, p(130, 30)}, 0, 0},
		{"a duplicate keeps the cadence of the newest", []ev{p(100, 30), p(130, 30), p(100, 1), p(160, 30)}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newShards(1)
			tr := tracker{sh: &sh[0], c: &soakCounts{}, classed: true}
			for _, e := range tt.events {
				tr.event(e.id, []byte(e.name), e.data())
			}
			if c := tr.c; c.lost.Load() != tt.lost || c.dups.Load() != tt.dup || c.events.Load() != int64(len(tt.events)) {
				t.Fatalf("lost %d, duplicates %d, events %d; want %d, %d, %d", c.lost.Load(), c.dups.Load(), c.events.Load(),
					tt.lost, tt.dup, len(tt.events))
			}
		})
	}
}

// rawEvent is one event as the SSE client passes it to a tracker.
type rawEvent struct {
	id         int64
	name, data string
}

// TestTrackerTimesByClass: while measuring, each timed event goes under
// its tick id (ready events have none) and its class; the snapshot on
// connect and events without "t" are not timed.
func TestTrackerTimesByClass(t *testing.T) {
	tests := []struct {
		name    string
		classed bool
		events  []rawEvent
		ticks   int // distinct tick ids timed
		timed   int // events timed under a tick id
		classes map[string]int
	}{
		{"a waiting room's stream", true, []rawEvent{
			{5, "position", `{"every":1,"t":1}`}, // the snapshot
			{6, "position", `{"every":1,"t":1}`},
			{7, "position", `{"every":30,"t":1}`},
			{37, "position", `{"every":30}`}, // no "t": not timed
			{0, "ready", `{"status":"READY","t":1}`},
		}, 2, 2, map[string]int{ClassFront: 1, ClassBack: 1, ClassReady: 1}},
		{"a ready snapshot on connect is not a tick's", true, []rawEvent{
			{0, "ready", `{"status":"READY","t":1}`},
		}, 0, 0, map[string]int{}},
		{"the reference: tick ids only", false, []rawEvent{
			{1, "position", `{"t":1}`}, {2, "position", `{"t":1}`}, {3, "position", `{"t":1}`},
		}, 2, 2, map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh := newShards(1)
			c := &soakCounts{}
			c.measuring.Store(true)
			tr := tracker{sh: &sh[0], c: c, classed: tt.classed}
			for _, e := range tt.events {
				tr.event(e.id, []byte(e.name), []byte(e.data))
			}
			timed := 0
			for _, ls := range sh[0].byTick {
				timed += len(ls)
			}
			if len(sh[0].byTick) != tt.ticks || timed != tt.timed {
				t.Fatalf("%d ticks, %d events timed by tick; want %d and %d", len(sh[0].byTick), timed, tt.ticks, tt.timed)
			}
			if len(sh[0].byClass) != len(tt.classes) {
				t.Fatalf("classes %v, want %v", sh[0].byClass, tt.classes)
			}
			for class, n := range tt.classes {
				if len(sh[0].byClass[class]) != n {
					t.Fatalf("%s: %d events, want %d", class, len(sh[0].byClass[class]), n)
				}
			}
		})
	}
}
