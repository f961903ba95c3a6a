package issuer

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/queue"
)

// sleepyRoom is an Admitter of one room whose ticks answer as told: the
// next answer, and a hook run inside the tick (as a wake published while
// the tick's script ran).
type sleepyRoom struct {
	name   string
	calls  int
	answer queue.Admission
	during func()
}

func (r *sleepyRoom) Rooms(context.Context) ([]string, error) { return []string{r.name}, nil }

func (r *sleepyRoom) Admit(context.Context, string, time.Duration, []string) (queue.Admission, error) {
	r.calls++
	if r.during != nil {
		r.during()
		r.during = nil
	}
	return r.answer, nil
}

// TestSleepingRoomIsLeft: a room that answers asleep is left until it is
// woken, until its wakeAt, or for SleepCheck at most; a wake heard while
// the tick that put it to sleep ran keeps it awake; a room that answers
// awake is ticked every time.
func TestSleepingRoomIsLeft(t *testing.T) {
	const tick = 250 * time.Millisecond
	asleep := func(wakeIn time.Duration) queue.Admission { return queue.Admission{Asleep: true, WakeIn: wakeIn} }
	slept := func(wakeIn time.Duration) queue.Admission {
		return queue.Admission{Asleep: true, Slept: true, WakeIn: wakeIn}
	}
	tests := []struct {
		name string
		// first is the answer of the tick that finds the room asleep;
		// then runs after it, and ticks must each call Admit or not.
		first queue.Admission
		then  func(l *Loop, clk *clockwork.FakeClock, r *sleepyRoom)
		ticks []bool
	}{
		{name: "awake", first: queue.Admission{Waiting: 1},
			then: func(*Loop, *clockwork.FakeClock, *sleepyRoom) {}, ticks: []bool{true}},
		{name: "asleep", first: asleep(0),
			then: func(*Loop, *clockwork.FakeClock, *sleepyRoom) {}, ticks: []bool{false, false}},
		{name: "slept answer sleeps too", first: slept(0),
			then: func(*Loop, *clockwork.FakeClock, *sleepyRoom) {}, ticks: []bool{false}},
		{name: "woken", first: asleep(0),
			then: func(l *Loop, clk *clockwork.FakeClock, _ *sleepyRoom) {
				clk.Advance(tick)
				l.Wake("r")
			}, ticks: []bool{true}},
		{name: "all woken", first: asleep(0),
			then: func(l *Loop, clk *clockwork.FakeClock, _ *sleepyRoom) {
				clk.Advance(tick)
				l.WakeAll()
			}, ticks: []bool{true}},
		{name: "another room woken", first: asleep(0),
			then: func(l *Loop, clk *clockwork.FakeClock, _ *sleepyRoom) {
				clk.Advance(tick)
				l.Wake("other")
			}, ticks: []bool{false}},
		{name: "wakeAt comes", first: asleep(3 * time.Second),
			then: func(_ *Loop, clk *clockwork.FakeClock, _ *sleepyRoom) { clk.Advance(3 * time.Second) }, ticks: []bool{true}},
		{name: "before wakeAt", first: asleep(3 * time.Second),
			then:  func(_ *Loop, clk *clockwork.FakeClock, _ *sleepyRoom) { clk.Advance(3*time.Second - time.Millisecond) },
			ticks: []bool{false}},
		{name: "wakeAt past SleepCheck", first: asleep(time.Hour),
			then: func(_ *Loop, clk *clockwork.FakeClock, _ *sleepyRoom) { clk.Advance(SleepCheck) }, ticks: []bool{true}},
		{name: "SleepCheck", first: asleep(0),
			then: func(_ *Loop, clk *clockwork.FakeClock, _ *sleepyRoom) { clk.Advance(SleepCheck) }, ticks: []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clockwork.NewFakeClock()
			r := &sleepyRoom{name: "r", answer: tt.first}
			l := New(r, tick, slog.New(slog.NewTextHandler(io.Discard, nil)), nil).WithClock(clk)
			l.Tick(context.Background())
			if r.calls != 1 {
				t.Fatalf("the first tick called Admit %d times", r.calls)
			}
			r.answer = queue.Admission{Asleep: true, Slept: true}
			tt.then(l, clk, r)
			for i, want := range tt.ticks {
				before := r.calls
				l.Tick(context.Background())
				if got := r.calls > before; got != want {
					t.Fatalf("tick %d after: Admit called %t, want %t", i+1, got, want)
				}
			}
		})
	}
}

// TestWakeDuringTheTickKeepsTheRoomAwake: a wake heard while the tick that
// found the room quiet ran came after its answer was made: the room is
// ticked again.
func TestWakeDuringTheTickKeepsTheRoomAwake(t *testing.T) {
	for _, all := range []bool{false, true} {
		clk := clockwork.NewFakeClock()
		r := &sleepyRoom{name: "r", answer: queue.Admission{Asleep: true}}
		l := New(r, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)), nil).WithClock(clk)
		r.during = func() {
			if all {
				l.WakeAll()
			} else {
				l.Wake("r")
			}
		}
		l.Tick(context.Background())
		l.Tick(context.Background())
		if r.calls != 2 {
			t.Fatalf("all=%t: Admit called %d times in two ticks, want 2", all, r.calls)
		}
	}
}

// listedRooms is sleepyRoom with a list of rooms the test sets.
type listedRooms struct {
	*sleepyRoom
	names []string
}

func (r *listedRooms) Rooms(context.Context) ([]string, error) { return r.names, nil }

// TestDeletedSleepingRoomIsForgotten: a room that slept and is no longer
// listed leaves nothing behind in the loop.
func TestDeletedSleepingRoomIsForgotten(t *testing.T) {
	clk := clockwork.NewFakeClock()
	r := &listedRooms{sleepyRoom: &sleepyRoom{name: "r", answer: queue.Admission{Asleep: true}}, names: []string{"a", "b"}}
	l := New(r, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)), nil).WithClock(clk)
	l.Tick(context.Background())
	if len(l.asleep) != 2 {
		t.Fatalf("%d rooms asleep, want 2", len(l.asleep))
	}
	r.names = []string{"b"}
	l.Tick(context.Background())
	if _, ok := l.asleep["a"]; ok || len(l.asleep) != 1 {
		t.Fatalf("asleep %v, want b only", l.asleep)
	}
}
