package issuer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/draw"
	"waitingroom/server/queue"
	"waitingroom/server/servicetest"
)

// TestOwner: every instance computes the same owner for a room from the
// same issuers, whatever their order; the rooms spread evenly; an issuer
// that leaves hands on its own rooms only; and a loop counts itself
// though the list lacks it.
func TestOwner(t *testing.T) {
	rooms := make([]string, 3000)
	for i := range rooms {
		rooms[i] = fmt.Sprintf("room-%d", i)
	}
	three := []string{"host-a:101-x1", "host-b:202-y2", "host-c:303-z3"}
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"order does not matter", func(t *testing.T) {
			rev := slices.Clone(three)
			slices.Reverse(rev)
			for _, r := range rooms {
				if a, b := Owner(r, three, three[0]), Owner(r, rev, three[2]); a != b {
					t.Fatalf("%s: owner %s from one order, %s from another", r, a, b)
				}
			}
		}},
		{"spread evenly", func(t *testing.T) {
			n := map[string]int{}
			for _, r := range rooms {
				n[Owner(r, three, three[0])]++
			}
			for _, id := range three {
				if n[id] < 900 || n[id] > 1100 {
					t.Errorf("%s owns %d of 3000 rooms, want 900..1100 (%v)", id, n[id], n)
				}
			}
		}},
		{"a leaver hands on only its own rooms", func(t *testing.T) {
			two := three[:2]
			moved := 0
			for _, r := range rooms {
				before, after := Owner(r, three, three[0]), Owner(r, two, two[0])
				if before != three[2] && before != after {
					t.Fatalf("%s moved from %s to %s, though %s is still live", r, before, after, before)
				}
				if before == three[2] {
					moved++
				}
			}
			if moved == 0 {
				t.Fatal("the leaver owned no room")
			}
		}},
		{"self counts though the list lacks it", func(t *testing.T) {
			mine := 0
			for _, r := range rooms {
				if Owner(r, three[:2], three[2]) == three[2] {
					mine++
				}
			}
			if want := 0; mine == want {
				t.Fatalf("a loop missing from the list owns %d rooms, want about a third", mine)
			}
		}},
		{"alone, a loop owns everything", func(t *testing.T) {
			for _, r := range rooms[:100] {
				if o := Owner(r, nil, "solo"); o != "solo" {
					t.Fatalf("%s: owner %s, want solo", r, o)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.check)
	}
}

// countAdmits lists fixed rooms and records which loop admits each one, per
// round; it never touches Redis.
type countAdmits struct {
	rooms []string
	who   string
	mu    *sync.Mutex
	got   map[string][]string // room → the loops that ticked it this round
}

func (c countAdmits) Rooms(context.Context) ([]string, error) { return c.rooms, nil }

func (c countAdmits) Admit(_ context.Context, name string, _ time.Duration, _ []string) (queue.Admission, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got[name] = append(c.got[name], c.who)
	return queue.Admission{Burst: 1}, nil
}

// ownPeers returns an engine on a namespace of the test's own, on clk: the
// registry of the test's issuers, shared with no other test.
func ownPeers(t *testing.T, rdb redis.UniversalClient, clk clockwork.Clock) *queue.Engine {
	t.Helper()
	ns := fmt.Sprintf("wr:share%d:%s", os.Getpid(), t.Name())
	if len(ns) > queue.MaxNamespaceLen {
		ns = ns[:queue.MaxNamespaceLen]
	}
	e := queue.New(rdb, ns)
	e.SetClock(clk.Now)
	t.Cleanup(func() { rdb.Del(context.Background(), ns+":issuers") })
	return e
}

// TestSharedTicks runs three sharing loops, round by round of a fake
// clock: once every loop has beaten, each room is ticked by exactly one
// loop a round, and each loop ticks some. A loop that stops beating
// (killed) keeps its rooms for the one round its beat still holds; they
// are ticked by exactly one survivor from the next. A loop that retires
// hands its rooms on at the next round.
func TestSharedTicks(t *testing.T) {
	rdb := servicetest.Redis(t)
	const tick = time.Second
	fc := clockwork.NewFakeClockAt(time.Now())
	peers := ownPeers(t, rdb, fc)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rooms := make([]string, 60)
	for i := range rooms {
		rooms[i] = fmt.Sprintf("shared-%02d", i)
	}
	var mu sync.Mutex
	got := map[string][]string{}
	ids := []string{"loop-a", "loop-b", "loop-c"}
	loops := map[string]*Loop{}
	for _, id := range ids {
		loops[id] = New(countAdmits{rooms: rooms, who: id, mu: &mu, got: got}, tick, log, nil).WithClock(fc).Share(peers, id)
	}
	ctx := context.Background()
	round := func(live ...string) map[string][]string {
		fc.Advance(tick)
		mu.Lock()
		clear(got)
		mu.Unlock()
		for _, id := range live {
			loops[id].Tick(ctx)
		}
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string][]string, len(got))
		for r, w := range got {
			out[r] = slices.Clone(w)
		}
		return out
	}
	once := func(t *testing.T, got map[string][]string, skip func(room string) bool) map[string]int {
		t.Helper()
		per := map[string]int{}
		for _, r := range rooms {
			if skip != nil && skip(r) {
				if len(got[r]) != 0 {
					t.Errorf("%s ticked by %v, want by none", r, got[r])
				}
				continue
			}
			if len(got[r]) != 1 {
				t.Errorf("%s ticked by %v, want by exactly one loop", r, got[r])
				continue
			}
			per[got[r][0]]++
		}
		return per
	}

	round(ids...) // every loop beats; the first ones saw fewer issuers
	per := once(t, round(ids...), nil)
	for _, id := range ids {
		if per[id] == 0 {
			t.Errorf("%s ticked no room (%v)", id, per)
		}
	}
	owned := func(r string) bool { return Owner(r, ids, ids[0]) == "loop-c" }

	// loop-c is killed: it beats no more, and retires from nothing.
	once(t, round("loop-a", "loop-b"), owned) // its beat still holds
	per = once(t, round("loop-a", "loop-b"), nil)
	if per["loop-c"] != 0 || per["loop-a"]+per["loop-b"] != len(rooms) {
		t.Errorf("after loop-c's beat ended: %v, want all %d rooms on loop-a and loop-b", per, len(rooms))
	}

	// loop-b retires: loop-a takes everything at its next tick.
	loops["loop-b"].retire(ctx)
	if per = once(t, round("loop-a"), nil); per["loop-a"] != len(rooms) {
		t.Errorf("after loop-b retired: %v, want all %d rooms on loop-a", per, len(rooms))
	}
}

type failingPeers struct{}

func (failingPeers) Beat(context.Context, string, time.Duration) (queue.Beat, error) {
	return queue.Beat{}, errors.New("redis away")
}
func (failingPeers) Retire(context.Context, string) error                 { return nil }
func (failingPeers) AskDraw(context.Context, string, time.Duration) error { return nil }

// TestBeatFailureTicksEverything: a loop that cannot beat ticks every room
// rather than none: a room ticked twice admits what it would once.
func TestBeatFailureTicksEverything(t *testing.T) {
	rooms := []string{"r1", "r2", "r3"}
	var mu sync.Mutex
	got := map[string][]string{}
	l := New(countAdmits{rooms: rooms, who: "solo", mu: &mu, got: got}, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)), nil).
		Share(failingPeers{}, "solo")
	l.Tick(context.Background())
	for _, r := range rooms {
		if len(got[r]) != 1 {
			t.Errorf("%s ticked %d times, want once", r, len(got[r]))
		}
	}
}

// TestBeat: the registry lists the issuers whose beat holds, sorted, and
// drops one that retired or whose hold ended.
func TestBeat(t *testing.T) {
	rdb := servicetest.Redis(t)
	fc := clockwork.NewFakeClockAt(time.Now())
	peers := ownPeers(t, rdb, fc)
	ctx := context.Background()
	steps := []struct {
		name    string
		do      func() (queue.Beat, error)
		advance time.Duration
		want    []string
	}{
		{"the first beat lists itself", func() (queue.Beat, error) { return peers.Beat(ctx, "b", 1500*time.Millisecond) }, 0, []string{"b"}},
		{"a second, sorted", func() (queue.Beat, error) { return peers.Beat(ctx, "a", 3*time.Second) }, 0, []string{"a", "b"}},
		{"b's hold ends, a's holds", func() (queue.Beat, error) { return peers.Beat(ctx, "c", time.Second) }, 2 * time.Second, []string{"a", "c"}},
		{"a retires", func() (queue.Beat, error) {
			if err := peers.Retire(ctx, "a"); err != nil {
				return queue.Beat{}, err
			}
			return peers.Beat(ctx, "c", time.Second)
		}, 0, []string{"c"}},
	}
	for _, s := range steps {
		fc.Advance(s.advance)
		b, err := s.do()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := b.Live; !slices.Equal(got, s.want) {
			t.Errorf("%s: live %v, want %v", s.name, got, s.want)
		}
		if listed, err := peers.Issuers(ctx); err != nil || !slices.Equal(listed, s.want) {
			t.Errorf("%s: Issuers %v (%v), want %v", s.name, listed, err, s.want)
		}
	}
	if _, err := peers.Beat(ctx, "", time.Second); err == nil {
		t.Error("a beat without an id was taken")
	}
}

// TestBeatCarriesDrawAsks: a room's draw asked for is read by every beat
// until the ask runs out.
func TestBeatCarriesDrawAsks(t *testing.T) {
	rdb := servicetest.Redis(t)
	fc := clockwork.NewFakeClockAt(time.Now())
	peers := ownPeers(t, rdb, fc)
	ctx := context.Background()
	if err := peers.AskDraw(ctx, "frozen", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		advance time.Duration
		want    []string
	}{{0, []string{"frozen"}}, {4 * time.Second, []string{"frozen"}}, {2 * time.Second, nil}} {
		fc.Advance(step.advance)
		b, err := peers.Beat(ctx, "a", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.DrawAsks) != len(step.want) || len(step.want) > 0 && b.DrawAsks[0] != step.want[0] {
			t.Errorf("after %v more: asks %v, want %v", step.advance, b.DrawAsks, step.want)
		}
	}
}

// drawingRoom lists one room that every tick reports waiting for its
// draw, and draws it as draw says.
type drawingRoom struct {
	name  string
	mu    *sync.Mutex
	draws *[]string // the loops that tried the draw
	who   string
	fail  error
}

func (d drawingRoom) Rooms(context.Context) ([]string, error) { return []string{d.name}, nil }

func (d drawingRoom) Admit(context.Context, string, time.Duration, []string) (queue.Admission, error) {
	return queue.Admission{Phase: "drawing", Burst: 1}, nil
}

func (d drawingRoom) Draw(context.Context, string, queue.DrawOptions) (queue.DrawState, error) {
	d.mu.Lock()
	*d.draws = append(*d.draws, d.who)
	d.mu.Unlock()
	return queue.DrawNone, d.fail
}

// TestOwnerThatCannotDrawAsksTheOthers: the owner of a room waiting for
// its draw that cannot derive the committed seed asks every issuer, and
// the next tick of another loop tries the draw though it does not own the
// room.
func TestOwnerThatCannotDrawAsksTheOthers(t *testing.T) {
	rdb := servicetest.Redis(t)
	fc := clockwork.NewFakeClockAt(time.Now())
	peers := ownPeers(t, rdb, fc)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const room = "frozen-room"
	ids := []string{"loop-a", "loop-b"}
	owner := Owner(room, ids, ids[0])
	var mu sync.Mutex
	var draws []string
	loops := map[string]*Loop{}
	for _, id := range ids {
		var fail error
		if id == owner {
			fail = fmt.Errorf("queue: draw: %w", draw.ErrNoSecret)
		}
		loops[id] = New(drawingRoom{name: room, mu: &mu, draws: &draws, who: id, fail: fail}, time.Second, log, nil).
			WithClock(fc).Share(peers, id)
	}
	other := ids[0]
	if other == owner {
		other = ids[1]
	}
	ctx := context.Background()
	round := func() {
		fc.Advance(time.Second)
		for _, id := range ids {
			loops[id].Tick(ctx)
			loops[id].wg.Wait() // the draws the tick started
		}
	}
	round() // both beat; the first may have seen itself alone
	mu.Lock()
	draws = nil
	mu.Unlock()
	round() // the owner tries, fails and asks; the other tries at its tick
	round()
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(draws, owner) || !slices.Contains(draws, other) {
		t.Fatalf("draws tried by %v, want the owner %s and, asked, %s", draws, owner, other)
	}
}

// TestFailingLoopStopsBeating: a loop whose every admission fails for
// failingTicks ticks stops beating, so that its rooms go to the others
// once its beat runs out; a tick that works puts it back.
func TestFailingLoopStopsBeating(t *testing.T) {
	rdb := servicetest.Redis(t)
	fc := clockwork.NewFakeClockAt(time.Now())
	peers := ownPeers(t, rdb, fc)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	broken := &switchAdmit{rooms: []string{"r1", "r2", "r3", "r4"}}
	broken.fail.Store(true)
	l := New(broken, time.Second, log, nil).WithClock(fc).Share(peers, "broken")
	ctx := context.Background()
	for i := range failingTicks {
		fc.Advance(time.Second)
		l.Tick(ctx)
		if live, _ := peers.Issuers(ctx); !slices.Contains(live, "broken") {
			t.Fatalf("tick %d: the loop left the issuers after %d failing ticks, want after %d", i+1, i+1, failingTicks)
		}
	}
	fc.Advance(2 * time.Second) // past its last beat's hold
	l.Tick(ctx)
	if live, _ := peers.Issuers(ctx); slices.Contains(live, "broken") {
		t.Fatalf("issuers %v after %d failing ticks, want the loop gone", live, failingTicks)
	}
	broken.fail.Store(false)
	l.Tick(ctx) // works: it beats again from the next tick
	fc.Advance(time.Second)
	l.Tick(ctx)
	if live, _ := peers.Issuers(ctx); !slices.Contains(live, "broken") {
		t.Fatalf("issuers %v after a tick that worked, want the loop back", live)
	}
}

// switchAdmit lists fixed rooms and fails every admission while fail is
// set.
type switchAdmit struct {
	rooms []string
	fail  atomic.Bool
}

func (s *switchAdmit) Rooms(context.Context) ([]string, error) { return s.rooms, nil }

func (s *switchAdmit) Admit(context.Context, string, time.Duration, []string) (queue.Admission, error) {
	if s.fail.Load() {
		return queue.Admission{}, errors.New("script error")
	}
	return queue.Admission{Burst: 1}, nil
}
