package push

import (
	"math/rand/v2"
	"testing"
	"time"

	"waitingroom/server/queue"
)

func TestRankWithDepartures(t *testing.T) {
	var s State
	s.Reset(queue.Snapshot{Tick: 1, Head: 10, Departed: []int64{12, 15}})
	steps := []struct {
		name   string
		event  *queue.Event
		ticket int64
		rank   int64
		passed bool
	}{
		{"right behind the head", nil, 11, 0, false},
		{"behind one departure", nil, 13, 1, false},
		{"behind two departures", nil, 16, 3, false},
		{"a departed ticket itself is passed (left, or admitted in mode random)", nil, 12, 0, true},
		{"admitted", nil, 10, 0, true},
		{"new departure below", &queue.Event{Tick: 2, Head: 10, Departed: []int64{14}}, 16, 2, false},
		{"departure at or below the head is ignored", &queue.Event{Tick: 3, Head: 10, Departed: []int64{9, 10}}, 16, 2, false},
		{"duplicate departure counts once", &queue.Event{Tick: 4, Head: 10, Departed: []int64{14}}, 16, 2, false},
		{"head passes departures", &queue.Event{Tick: 5, Head: 14}, 16, 0, false},
		{"head passes the ticket", &queue.Event{Tick: 6, Head: 16}, 16, 0, true},
		{"far behind", nil, 1000, 983, false},
	}
	for _, st := range steps {
		if st.event != nil {
			if !s.Apply(*st.event) {
				t.Fatalf("%s: in-order event reported as a gap", st.name)
			}
		}
		rank, passed := s.Rank(st.ticket)
		if rank != st.rank || passed != st.passed {
			t.Fatalf("%s: Rank(%d) = %d, %v; want %d, %v", st.name, st.ticket, rank, passed, st.rank, st.passed)
		}
	}
	if s.Departed() != 0 {
		t.Fatalf("departures below the head were kept: %d", s.Departed())
	}
}

func TestGapDetection(t *testing.T) {
	var s State
	tests := []struct {
		tick     int64
		complete bool
	}{{5, true}, {6, true}, {6, true}, {9, false}, {10, true}}
	for _, tt := range tests {
		if got := s.Apply(queue.Event{Tick: tt.tick}); got != tt.complete {
			t.Fatalf("Apply(tick %d) = %v, want %v", tt.tick, got, tt.complete)
		}
	}
	if s.Tick != 10 {
		t.Fatalf("tick %d, want 10", s.Tick)
	}
	if s.Synced() {
		t.Fatal("a gap left the state marked as synced")
	}
	s.Reset(queue.Snapshot{Tick: 10})
	if !s.Synced() {
		t.Fatal("Reset did not mark the state synced")
	}
}

// TestRanksNeverIncrease replays random admissions and departures in random
// order (as events and snapshots can interleave) and checks that no
// waiting ticket's rank ever goes up, and that the final ranks are exact.
func TestRanksNeverIncrease(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, seed))
		const n = 300
		waiting := make(map[int64]bool, n)
		for i := int64(1); i <= n; i++ {
			waiting[i] = true
		}
		var s State
		last := make(map[int64]int64, n)
		var head int64
		var pending []int64
		for tick := int64(1); head < n; tick++ {
			e := queue.Event{Tick: tick}
			for range r.IntN(4) { // departures anywhere in the line
				if tk := head + 1 + r.Int64N(n-head); waiting[tk] {
					waiting[tk] = false
					pending = append(pending, tk)
				}
			}
			e.Departed, pending = pending, nil
			for range r.IntN(6) { // admissions from the front
				for head < n && !waiting[head+1] {
					head++
				}
				if head < n {
					head++
					waiting[head] = false
				}
			}
			e.Head = head
			s.Apply(e)
			var ahead int64
			for tk := int64(1); tk <= n; tk++ {
				if !waiting[tk] {
					continue
				}
				rank, passed := s.Rank(tk)
				if passed {
					t.Fatalf("seed %d: waiting ticket %d reported passed", seed, tk)
				}
				if rank != ahead {
					t.Fatalf("seed %d tick %d: rank of %d is %d, want %d", seed, tick, tk, rank, ahead)
				}
				if prev, ok := last[tk]; ok && rank > prev {
					t.Fatalf("seed %d: rank of %d went up from %d to %d", seed, tk, prev, rank)
				}
				last[tk] = rank
				ahead++
			}
		}
	}
}

// TestRoomStartsAgain: a room deleted and created again, or restored after
// Redis lost its data, counts its ticks and tickets from the start; the
// state must follow it rather than keep the old head and tick forever.
func TestRoomStartsAgain(t *testing.T) {
	const born, again = 1000, 2000 // the rooms' creation times
	for _, tt := range []struct {
		name  string
		event bool                // the restart is seen in an event, which asks for a resync
		again func(s *State) bool // reports whether a resync is asked for
	}{
		{"an event below the tick", true, func(s *State) bool { return !s.Apply(queue.Event{Tick: 1, Head: 0}) }},
		{"a snapshot with a lower head", false, func(s *State) bool {
			s.Reset(queue.Snapshot{Tick: 45, Head: 0})
			return false
		}},
		{"the next event, of a room created later", true, func(s *State) bool {
			return !s.Apply(queue.Event{Tick: 41, Head: 0, Born: again})
		}},
		{"a snapshot behind the tick, of a room created later", false, func(s *State) bool {
			s.Reset(queue.Snapshot{Tick: 3, Head: 0, Born: again})
			return false
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			s.Reset(queue.Snapshot{Tick: 1, Head: 0, Born: born})
			for tick := int64(2); tick <= 40; tick++ {
				s.Apply(queue.Event{Tick: tick, Head: tick / 10, Departed: []int64{tick + 100}, Born: born})
			}
			epoch := s.Epoch
			resync := tt.again(&s)
			if s.Epoch != epoch+1 {
				t.Fatalf("epoch %d after the restart, want %d", s.Epoch, epoch+1)
			}
			if tt.event && (!resync || s.Synced()) {
				t.Fatalf("a restarted room's first event did not ask for a snapshot (resync %v, synced %v)", resync, s.Synced())
			}
			if s.Head != 0 || s.Departed() != 0 {
				t.Fatalf("the old room's state survived: head %d, %d departed", s.Head, s.Departed())
			}
			if rank, passed := s.Rank(6); rank != 5 || passed {
				t.Fatalf("ticket 6 of the new room: rank %d, passed %v; want 5", rank, passed)
			}
			if !s.Apply(queue.Event{Tick: s.Tick + 1, Head: 1}) {
				t.Fatal("the next event of the new room reported a gap")
			}
		})
	}
}

func TestPhaseFollowsEvents(t *testing.T) {
	var s State
	s.Reset(queue.Snapshot{Tick: 1})
	s.Apply(queue.Event{Tick: 2, Phase: queue.PhasePrequeue, OpensAt: 5000})
	if s.Phase != queue.PhasePrequeue || s.OpensAt != 5000 {
		t.Fatalf("after a pre-queue tick: %+v", s)
	}
	s.Apply(queue.Event{Tick: 3, Phase: queue.PhaseOpen, OpensAt: 5000})
	if s.Phase != queue.PhaseOpen {
		t.Fatalf("after the draw: %+v", s)
	}
}

// TestReadySpreadFollowsTheRoom: the room's own spread comes with each
// tick's event and with the snapshot, the newest tick's wins, and a room
// without one (absent: nil) follows the server's default.
func TestReadySpreadFollowsTheRoom(t *testing.T) {
	ms := func(n int) *int { return &n }
	const def = 800 * time.Millisecond
	steps := []struct {
		name  string
		event *queue.Event
		snap  *queue.Snapshot
		want  time.Duration
		isSet bool
	}{
		{"a new state follows the default", nil, nil, def, false},
		{"a snapshot without one", nil, &queue.Snapshot{Tick: 1}, def, false},
		{"an event with 250 ms", &queue.Event{Tick: 2, ReadySpreadMs: ms(250)}, nil, 250 * time.Millisecond, true},
		{"an event with no spread", &queue.Event{Tick: 3, ReadySpreadMs: ms(0)}, nil, 0, true},
		{"an older event does not change it", &queue.Event{Tick: 3, ReadySpreadMs: ms(900)}, nil, 0, true},
		{"an event without one: back to the default", &queue.Event{Tick: 4}, nil, def, false},
		{"a snapshot at the tick with 1 s", nil, &queue.Snapshot{Tick: 4, ReadySpreadMs: ms(1000)}, time.Second, true},
		{"an older snapshot does not change it", nil, &queue.Snapshot{Tick: 3, ReadySpreadMs: ms(5)}, time.Second, true},
		{"a snapshot without one", nil, &queue.Snapshot{Tick: 5}, def, false},
		{"a restarted room's event sets it afresh", &queue.Event{Tick: 1, ReadySpreadMs: ms(40)}, nil, 40 * time.Millisecond, true},
	}
	var s State
	for _, st := range steps {
		if st.event != nil {
			s.Apply(*st.event)
		}
		if st.snap != nil {
			s.Reset(*st.snap)
		}
		if got := s.Spread(def); got != st.want || (s.ReadySpread != nil) != st.isSet {
			t.Fatalf("%s: Spread(%v) = %v (own %v), want %v (own %v)", st.name, def, got, s.ReadySpread != nil, st.want, st.isSet)
		}
		if c := s.Clone(); c.Spread(def) != st.want {
			t.Fatalf("%s: the clone's spread is %v, want %v", st.name, c.Spread(def), st.want)
		}
	}
}

func TestSpread(t *testing.T) {
	d := func(v time.Duration) *time.Duration { return &v }
	for _, tt := range []struct {
		name string
		own  *time.Duration
		def  time.Duration
		want time.Duration
	}{
		{"none: the default", nil, 800 * time.Millisecond, 800 * time.Millisecond},
		{"none, no default", nil, 0, 0},
		{"its own", d(300 * time.Millisecond), 800 * time.Millisecond, 300 * time.Millisecond},
		{"its own, over a default of none", d(300 * time.Millisecond), 0, 300 * time.Millisecond},
		{"its own zero beats the default", d(0), 800 * time.Millisecond, 0},
	} {
		s := State{ReadySpread: tt.own}
		if got := s.Spread(tt.def); got != tt.want {
			t.Errorf("%s: Spread(%v) = %v, want %v", tt.name, tt.def, got, tt.want)
		}
	}
}

// TestRankInLines: in a room with lines each line's ranks count its own
// head and departures, and its rate and waiting count are its own.
func TestRankInLines(t *testing.T) {
	var s State
	s.Reset(queue.Snapshot{Tick: 1, Head: 4, Waiting: 9, Rate: 10, Lines: []queue.LineState{
		{Head: 4, Waiting: 5, Rate: 7}, {Head: 2, Waiting: 4, Rate: 3, Departed: []int64{5}},
	}})
	line1 := func(t int64) int64 { return queue.LineTicket(1, t) }
	steps := []struct {
		name   string
		event  *queue.Event
		ticket int64
		rank   int64
		passed bool
		rate   float64
	}{
		{"first line", nil, 7, 2, false, 7},
		{"second line, below a departure", nil, line1(4), 1, false, 3},
		{"second line, above a departure", nil, line1(6), 2, false, 3},
		{"second line, the departure", nil, line1(5), 0, true, 3},
		{"second line, passed", nil, line1(2), 0, true, 3},
		{"a line the room does not have", nil, queue.LineTicket(2, 9), 0, true, 10},
		{"the second line's head moves", &queue.Event{Tick: 2, Head: 4, Waiting: 8, Rate: 10, Lines: []queue.LineState{
			{Head: 4, Waiting: 5, Rate: 5}, {Head: 4, Waiting: 3, Rate: 5, Departed: []int64{8}},
		}}, line1(9), 2, false, 5},
		{"the first line is untouched by it", nil, 7, 2, false, 5},
		{"the room loses its lines", &queue.Event{Tick: 3, Head: 4, Waiting: 5, Rate: 10}, 7, 2, false, 10},
	}
	for _, st := range steps {
		if st.event != nil && !s.Apply(*st.event) {
			t.Fatalf("%s: a gap in consecutive ticks", st.name)
		}
		rank, passed := s.Rank(st.ticket)
		if rank != st.rank || passed != st.passed || s.RateOf(st.ticket) != st.rate {
			t.Fatalf("%s: rank %d passed %v rate %v, want %d %v %v", st.name, rank, passed, s.RateOf(st.ticket), st.rank, st.passed, st.rate)
		}
	}
}

// TestOlderSnapshotKeepsLinesDropped: an older snapshot that still has
// lines does not bring back the lines a newer event dropped.
func TestOlderSnapshotKeepsLinesDropped(t *testing.T) {
	var s State
	lines := []queue.LineState{{Head: 1, Waiting: 2, Rate: 7}, {Head: 1, Waiting: 2, Rate: 3}}
	s.Reset(queue.Snapshot{Tick: 1, Rate: 10, Lines: lines})
	if !s.Apply(queue.Event{Tick: 2, Rate: 10}) {
		t.Fatal("a gap in consecutive ticks")
	}
	s.Reset(queue.Snapshot{Tick: 1, Rate: 10, Lines: lines})
	if r := s.RateOf(5); r != 10 {
		t.Fatalf("the first line's rate %v after an older snapshot, want the room's 10", r)
	}
}
