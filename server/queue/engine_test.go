package queue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/token"
	"waitingroom/server/visitor"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// newRoom returns an engine and a fresh room with settings s on real Redis.
// The engine's scripts decide by a fake clock (clockOf) that starts at
// Redis' time and moves only when the test moves it.
func newRoom(t *testing.T, s room.Settings) (*Engine, string, redis.UniversalClient) {
	t.Helper()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	useClock(t, e, rdb)
	if err := e.SaveRoom(context.Background(), name, s); err != nil {
		t.Fatal(err)
	}
	// The first tick of a new room starts its rate clock with no credit.
	if a, err := e.Admit(context.Background(), name, time.Second, nil); err != nil || len(a.Visitors) != 0 {
		t.Fatalf("priming tick: %+v %v", a, err)
	}
	return e, name, rdb
}

// wakeRoom wakes room name after a test wrote its line directly, as the
// join the write stands for would (see wake in lib.lua).
func wakeRoom(t *testing.T, e *Engine, name string) {
	t.Helper()
	if err := e.rdb.HDel(context.Background(), roomKeys(e.ns, name).key("rate"), "asleep", "wakeAt").Err(); err != nil {
		t.Fatal(err)
	}
}

// testKeys names room's keys in the namespace that newRoom's engine uses.
func testKeys(rdb redis.UniversalClient, name string) keys {
	return roomKeys(DefaultNamespace(rdb), name)
}

func settings(mut func(*room.Settings)) room.Settings {
	s := room.Defaults("test")
	if mut != nil {
		mut(&s)
	}
	return s
}

func visitors(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		id, err := visitor.NewID()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = id
	}
	return out
}

func tokens(t testing.TB, n int) []string {
	t.Helper()
	toks, err := token.NewBatch(n)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

// clocks holds the fake clock of each engine newRoom or gateRoom made.
var clocks sync.Map

// useClock makes e's scripts decide by a fake clock that starts at rdb's
// time and moves only when the test moves it (clockOf).
func useClock(t *testing.T, e *Engine, rdb redis.UniversalClient) {
	t.Helper()
	start, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	c := clockwork.NewFakeClockAt(start)
	e.SetClock(c.Now)
	clocks.Store(e, c)
	t.Cleanup(func() { clocks.Delete(e) })
}

// clockOf returns the fake clock of e, an engine newRoom or gateRoom made.
func clockOf(t *testing.T, e *Engine) *clockwork.FakeClock {
	t.Helper()
	c, ok := clocks.Load(e)
	if !ok {
		t.Fatal("clockOf: the engine has no fake clock (useClock)")
	}
	return c.(*clockwork.FakeClock)
}

// admitAfter moves e's clock by d, so that credit accrues for d, then runs
// one tick of length tick.
func admitAfter(t *testing.T, e *Engine, name string, d, tick time.Duration, ntok int) Admission {
	t.Helper()
	clockOf(t, e).Advance(d)
	a, err := e.Admit(context.Background(), name, tick, tokens(t, ntok))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestEnterFirstAndRepeated(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(nil))
	vs := visitors(t, 3)
	steps := []struct {
		visitor    string
		wantRank   int64
		wantTicket int64
		wantTotal  int64
	}{
		{vs[0], 0, 1, 1}, // the seed: first enter is rank 0 of 1
		{vs[0], 0, 1, 1}, // a repeated enter keeps its place
		{vs[1], 1, 2, 2},
		{vs[0], 0, 1, 2},
		{vs[2], 2, 3, 3},
		{vs[1], 1, 2, 3},
	}
	for i, st := range steps {
		p, err := e.Enter(ctx, name, st.visitor)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != StatusWaiting || p.Rank != st.wantRank || p.Ticket != st.wantTicket || p.Waiting != st.wantTotal {
			t.Fatalf("step %d: got %+v, want WAITING rank %d ticket %d total %d", i, p, st.wantRank, st.wantTicket, st.wantTotal)
		}
		if p.EntryToken != nil {
			t.Fatalf("step %d: a waiting visitor got a token", i)
		}
	}
}

func TestUnknownRoom(t *testing.T) {
	rdb := servicetest.Redis(t)
	e := New(rdb, DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb) // never saved
	ctx := context.Background()
	checks := []struct {
		name string
		err  error
	}{
		{"enter", func() error { _, err := e.Enter(ctx, name, "AAAAAAAAAAAAAAAAAAAAAA"); return err }()},
		{"position", func() error { _, err := e.Position(ctx, name, "AAAAAAAAAAAAAAAAAAAAAA"); return err }()},
		{"admit", func() error { _, err := e.Admit(ctx, name, time.Second, nil); return err }()},
		{"room", func() error { _, err := e.Room(ctx, name); return err }()},
	}
	for _, c := range checks {
		if !errors.Is(c.err, room.ErrNotFound) {
			t.Errorf("%s: error %v, want room.ErrNotFound", c.name, c.err)
		}
	}
	if n, _ := rdb.Exists(ctx, testKeys(rdb, name).key("seq"), testKeys(rdb, name).key("queue")).Result(); n != 0 {
		t.Fatalf("entering an unknown room wrote %d keys", n)
	}
}

func TestConcurrentDistinctVisitorsGetUniqueRanks(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(nil))
	const n = 200
	vs := visitors(t, n)
	ranks := make([]int64, n)
	tickets := make([]int64, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range vs {
		wg.Go(func() {
			p, err := e.Enter(ctx, name, vs[i])
			if err != nil {
				errs <- err
				return
			}
			ranks[i], tickets[i] = p.Rank, p.Ticket
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seenRank := make(map[int64]bool)
	seenTicket := make(map[int64]bool)
	for i := range vs {
		if ranks[i] < 0 || ranks[i] >= n || seenRank[ranks[i]] {
			t.Fatalf("rank %d is out of range or repeated", ranks[i])
		}
		if tickets[i] != ranks[i]+1 || seenTicket[tickets[i]] {
			t.Fatalf("ticket %d does not follow rank %d densely", tickets[i], ranks[i])
		}
		seenRank[ranks[i]], seenTicket[tickets[i]] = true, true
	}
}

func TestConcurrentFirstEntersOfOneVisitorGiveOneTicket(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	v := visitors(t, 1)[0]
	const n = 50
	got := make(chan int64, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			p, err := e.Enter(ctx, name, v)
			if err != nil {
				t.Error(err)
				return
			}
			got <- p.Ticket
		})
	}
	close(start)
	wg.Wait()
	close(got)
	for ticket := range got {
		if ticket != 1 {
			t.Fatalf("a concurrent enter got ticket %d, want 1", ticket)
		}
	}
	if seq, _ := rdb.Get(ctx, testKeys(rdb, name).key("seq")).Int64(); seq != 1 {
		t.Fatalf("50 enters by one visitor drew %d tickets, want 1", seq)
	}
	if w, _ := rdb.ZCard(ctx, testKeys(rdb, name).key("queue")).Result(); w != 1 {
		t.Fatalf("line length %d, want 1", w)
	}
}

func TestStatuses(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000 }))
	vs := visitors(t, 3)
	for _, v := range vs[:2] {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	// Rate 1000 with a 1 ms tick admits exactly one visitor per tick.
	a := admitAfter(t, e, name, 20*time.Millisecond, time.Millisecond, 5)
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[0] {
		t.Fatalf("admitted %v, want only the first visitor", a.Visitors)
	}
	tests := []struct {
		name       string
		visitor    string
		wantStatus Status
		wantRank   int64
		wantToken  bool
	}{
		{"admitted", vs[0], StatusReady, 0, true},
		{"waiting", vs[1], StatusWaiting, 0, false},
		{"never entered", vs[2], StatusNotEntered, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := e.Position(ctx, name, tt.visitor)
			if err != nil {
				t.Fatal(err)
			}
			if p.Status != tt.wantStatus || p.Rank != tt.wantRank || (p.EntryToken != nil) != tt.wantToken {
				t.Fatalf("got %+v, want %s rank %d token %v", p, tt.wantStatus, tt.wantRank, tt.wantToken)
			}
			if tt.wantToken && !token.Valid(*p.EntryToken) {
				t.Fatalf("READY token %q is malformed", *p.EntryToken)
			}
		})
	}
	// An admitted visitor who enters again keeps their token and no ticket.
	p, err := e.Enter(ctx, name, vs[0])
	if err != nil || p.Status != StatusReady {
		t.Fatalf("re-enter of an admitted visitor: %+v %v", p, err)
	}
}

func TestTokenTTL(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.TokenTTLSeconds = 42 }))
	v := visitors(t, 1)[0]
	if _, err := e.Enter(ctx, name, v); err != nil {
		t.Fatal(err)
	}
	admitAfter(t, e, name, 30*time.Millisecond, time.Second, 5)
	left := time.UnixMilli(readPass(t, rdb, name, v).expiry).Sub(clockOf(t, e).Now())
	if left <= 42*time.Second-time.Millisecond || left > 42*time.Second {
		t.Fatalf("pass expires in %v, want the room's 42 s", left)
	}
	if s, _ := rdb.ZScore(ctx, testKeys(rdb, name).key("active"), v).Result(); int64(s) != readPass(t, rdb, name, v).expiry {
		t.Fatalf("slot expiry %v differs from the pass's", s)
	}
	// Move the clock 42 s on.
	agePass(t, rdb, name, v, 42*time.Second)
	p, err := e.Position(ctx, name, v)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusNotEntered {
		t.Fatalf("after the TTL the visitor is %s, want NOT_ENTERED", p.Status)
	}
	st, _ := e.Stats(ctx, name)
	if st.Active != 0 || st.Expired != 1 {
		t.Fatalf("an expired token still holds a slot: active %d, expired %d", st.Active, st.Expired)
	}
	// The next tick sweeps it, and counts it once.
	e.Admit(ctx, name, time.Second, nil)
	if n, _ := rdb.HLen(ctx, testKeys(rdb, name).key("tokens")).Result(); n != 0 {
		t.Fatalf("%d passes left after the sweep", n)
	}
	if st, _ := e.Stats(ctx, name); st.Expired != 1 || st.Active != 0 {
		t.Fatalf("after the sweep: expired %d, active %d; want 1 and 0", st.Expired, st.Active)
	}
}

func TestOnlyTheBatchIsAdmittedPerTick(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 50 }))
	for _, v := range visitors(t, 300) {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	// The room was idle at its last tick: however long the pause, one tick
	// admits at most its batch (50 at 50/s and a 1 s tick).
	a := admitAfter(t, e, name, 1500*time.Millisecond, time.Second, 200)
	if len(a.Visitors) != 50 || a.Waiting != 250 {
		t.Fatalf("after idle: admitted %d leaving %d, want 50 leaving 250", len(a.Visitors), a.Waiting)
	}
	// On time, a tick admits its batch. The credit follows Redis' clock, so
	// a loaded machine that wakes the test 100 ms late earns five more.
	if a := admitAfter(t, e, name, time.Second, time.Second, 200); len(a.Visitors) < 49 || len(a.Visitors) > 55 {
		t.Fatalf("a tick on time admitted %d, want its batch of 50", len(a.Visitors))
	}
	// A tick 2 s late, with the line backlogged, admits a fifth over its
	// batch (60); the rest of its credit, up to one batch, goes out over
	// the next ticks, never the whole 2.5 s of it.
	if a := admitAfter(t, e, name, 2500*time.Millisecond, time.Second, 200); len(a.Visitors) != 60 || a.Burst != 100 {
		t.Fatalf("a late tick admitted %d (burst %d), want 60", len(a.Visitors), a.Burst)
	}
}

func TestAdmissionOrderIsEnterOrder(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 500 }))
	vs := visitors(t, 60)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	var lastHead int64
	for deadline := time.Now().Add(10 * time.Second); len(got) < len(vs) && time.Now().Before(deadline); {
		a := admitAfter(t, e, name, 20*time.Millisecond, 20*time.Millisecond, 10)
		if a.Head < lastHead {
			t.Fatalf("head went back from %d to %d", lastHead, a.Head)
		}
		lastHead = a.Head
		got = append(got, a.Visitors...)
	}
	if len(got) != len(vs) {
		t.Fatalf("admitted %d of %d", len(got), len(vs))
	}
	for i := range vs {
		if got[i] != vs[i] {
			t.Fatalf("admission %d was %s, want %s (enter order)", i, got[i], vs[i])
		}
	}
	if h, _ := rdb.Get(ctx, testKeys(rdb, name).key("head")).Int64(); h != int64(len(vs)) {
		t.Fatalf("head %d, want %d", h, len(vs))
	}
}

func TestPausedRoomAdmitsNobody(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.Paused = true }))
	for _, v := range visitors(t, 5) {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	if a := admitAfter(t, e, name, 50*time.Millisecond, time.Second, 5); len(a.Visitors) != 0 || a.Waiting != 5 {
		t.Fatalf("a paused room admitted %d", len(a.Visitors))
	}
}

func TestMaxActiveHolds(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.MaxActive = 3 }))
	vs := visitors(t, 10)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	a := admitAfter(t, e, name, 50*time.Millisecond, time.Second, 10)
	a2 := admitAfter(t, e, name, 50*time.Millisecond, time.Second, 10)
	if n := len(a.Visitors) + len(a2.Visitors); n != 3 {
		t.Fatalf("admitted %d with maxActive 3", n)
	}
	st, _ := e.Stats(ctx, name)
	if st.Active != 3 {
		t.Fatalf("active %d, want 3", st.Active)
	}
	// Finishing an order frees a slot for exactly one more.
	p, _ := e.Position(ctx, name, vs[0])
	if p.EntryToken == nil {
		t.Fatalf("first visitor has no token: %+v", p)
	}
	c, err := e.Claim(ctx, name, vs[0], *p.EntryToken, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Consume(ctx, name, vs[0], c.Holder); err != nil {
		t.Fatal(err)
	}
	if a := admitAfter(t, e, name, 50*time.Millisecond, time.Second, 10); len(a.Visitors) != 1 || a.Visitors[0] != vs[3] {
		t.Fatalf("after one consume admitted %v, want only the 4th visitor", a.Visitors)
	}
	// Leaving with an unused token frees a slot too.
	if ok, err := e.Leave(ctx, name, vs[1]); err != nil || !ok {
		t.Fatalf("leave with a READY token: %v %v", ok, err)
	}
	if a := admitAfter(t, e, name, 50*time.Millisecond, time.Second, 10); len(a.Visitors) != 1 || a.Visitors[0] != vs[4] {
		t.Fatalf("after one leave admitted %v, want only the 5th visitor", a.Visitors)
	}
}

func TestLeave(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	vs := visitors(t, 3)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		visitor string
		want    bool
	}{{vs[1], true}, {vs[1], false}, {visitors(t, 1)[0], false}}
	for i, tt := range tests {
		if ok, err := e.Leave(ctx, name, tt.visitor); err != nil || ok != tt.want {
			t.Fatalf("leave %d: %v %v, want %v", i, ok, err, tt.want)
		}
	}
	p, _ := e.Position(ctx, name, vs[2])
	if p.Rank != 1 || p.Waiting != 2 {
		t.Fatalf("after a leave the last visitor is rank %d of %d, want 1 of 2", p.Rank, p.Waiting)
	}
	if p, _ := e.Position(ctx, name, vs[1]); p.Status != StatusNotEntered {
		t.Fatalf("a visitor who left is %s", p.Status)
	}
	// The departure reaches the next tick's event, so that instances can
	// lower the ranks behind it without asking Redis.
	sub := rdb.Subscribe(ctx, EventsChannel(DefaultNamespace(rdb), name))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	e.Admit(ctx, name, time.Second, nil)
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"d":[2]`; !strings.Contains(msg.Payload, want) {
		t.Fatalf("event %s lacks the departure %s", msg.Payload, want)
	}
	// A visitor who comes back joins at the end of the line.
	p, _ = e.Enter(ctx, name, vs[1])
	if p.Ticket != 4 || p.Rank != 2 {
		t.Fatalf("returning visitor got ticket %d rank %d, want 4 and 2", p.Ticket, p.Rank)
	}
}

// TestAdmitSpreadsTheCatchUp drives the admission ticks on a fake clock:
// a late tick's credit goes out at no more than a fifth over the rate (no
// 1 s window admits more than ceil(1.2 × rate)), and the long-run total
// is still rate × elapsed.
func TestAdmitSpreadsTheCatchUp(t *testing.T) {
	ctx := context.Background()
	const run = 60 // seconds
	// ticks lists the tick times, in seconds from the rate clock's start.
	onTime := func() []float64 {
		var out []float64
		for s := 1.0; s <= run; s++ {
			out = append(out, s)
		}
		return out
	}
	// window is the span, in seconds, that admits at most ceil(1.2 ×
	// rate): 1 s, but 0.9 s for ticks that run up to 100 ms early or
	// late, which keep their whole batch.
	schedules := []struct {
		name   string
		window float64
		ticks  []float64
	}{
		{"on time", 1, onTime()},
		{"jittered by 60 ms", 0.9, func() []float64 {
			out := onTime()
			for i := range out {
				out[i] += 0.03 * float64(i%3-1)
			}
			return out
		}()},
		{"a tick skipped, then two at once", 1, func() []float64 {
			var out []float64
			for _, s := range onTime() {
				switch s {
				case 10, 25, 40:
					continue
				case 11, 26, 41:
					out = append(out, s, s+0.001)
					continue
				}
				out = append(out, s)
			}
			return out
		}()},
		{"late ticks (0.7 s late, the next on time)", 1, func() []float64 {
			var out []float64
			for _, s := range onTime() {
				if s == 10 || s == 25 || s == 40 {
					s += 0.7
				}
				out = append(out, s)
			}
			return out
		}()},
	}
	for _, rate := range []float64{50, 7} {
		for _, sc := range schedules {
			t.Run(fmt.Sprintf("rate %v, %s", rate, sc.name), func(t *testing.T) {
				e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = rate; s.AbandonAfterSeconds = 0 }))
				enterMany(t, e, name, int(rate*run)+100)
				// The fake clock starts where the priming tick left the rate clock.
				ts, err := rdb.HGet(ctx, testKeys(rdb, name).key("rate"), "ts").Int64()
				if err != nil {
					t.Fatal(err)
				}
				start := time.UnixMicro(ts)
				var now time.Time
				e.SetClock(func() time.Time { return now })
				type tick struct {
					at float64
					n  int
				}
				var got []tick
				total := 0
				for _, at := range sc.ticks {
					now = start.Add(time.Duration(at * float64(time.Second)))
					a, err := e.Admit(ctx, name, time.Second, tokens(t, 2*int(rate)+2))
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, tick{at, len(a.Visitors)})
					total += len(a.Visitors)
				}
				limit := int(math.Ceil(1.2 * rate))
				busiest, from := 0, 0.0
				for i := range got {
					n := 0
					for _, u := range got[i:] {
						if u.at < got[i].at+sc.window-1e-9 {
							n += u.n
						}
					}
					if n > busiest {
						busiest, from = n, got[i].at
					}
				}
				if busiest > limit {
					t.Errorf("%d admitted in the %v s from %.3f s, want at most %d", busiest, sc.window, from, limit)
				}
				last := sc.ticks[len(sc.ticks)-1]
				if want := int(math.Floor(rate*last + 1e-9)); total != want {
					t.Errorf("admitted %d in %v s, want exactly %d", total, last, want)
				}
			})
		}
	}
}

// enterMany puts n new visitors in room's line.
func enterMany(t *testing.T, e *Engine, name string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, v := range visitors(t, n) {
		wg.Go(func() {
			if _, err := e.Enter(context.Background(), name, v); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// lastSeen rewrites when the holder of ticket was last seen (ago before
// e's clock), as lib.lua stores it, so that tests need not wait out abandonAfterSeconds.
func lastSeen(t *testing.T, e *Engine, rdb redis.UniversalClient, name string, ticket int64, ago time.Duration) {
	t.Helper()
	v := (clockOf(t, e).Now().Add(-ago).UnixMicro()/2000000)%65535 + 1
	k := testKeys(rdb, name)
	base, _ := rdb.Get(context.Background(), k.key("seenbase")).Int64()
	if err := rdb.SetRange(context.Background(), k.key("seen"), 2*(ticket-base), string([]byte{byte(v >> 8), byte(v)})).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestAbandonment(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60; s.ReturnWithinSeconds = 60 }))
	vs := visitors(t, 6)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	// Tickets 1..6. The first and the fifth have been gone 90 s; the
	// fourth 50 s (still within 60 s); the sixth was gone but came back.
	lastSeen(t, e, rdb, name, 1, 90*time.Second)
	lastSeen(t, e, rdb, name, 5, 90*time.Second)
	lastSeen(t, e, rdb, name, 4, 50*time.Second)
	lastSeen(t, e, rdb, name, 6, 90*time.Second)
	if err := e.MarkSeen(ctx, name, []int64{6}); err != nil {
		t.Fatal(err)
	}

	sub := rdb.Subscribe(ctx, EventsChannel(DefaultNamespace(rdb), name))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	// A tick of one admission: the abandoned first visitor departs instead
	// of taking it, the second is admitted, and the sweep finds the fifth.
	clockOf(t, e).Advance(20 * time.Millisecond) // credit for the one admission a 1 ms tick allows
	a, err := e.Admit(ctx, name, time.Millisecond, tokens(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[1] {
		t.Fatalf("admitted %v, want only the second visitor", a.Visitors)
	}
	if a.Waiting != 3 {
		t.Fatalf("waiting %d after the tick, want 3 (tickets 3, 4, 6)", a.Waiting)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ParseEvent([]byte(msg.Payload))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.Departed, []int64{1, 5}) || ev.Head != 2 || ev.Waiting != 3 {
		t.Fatalf("event %+v, want departures [1 5], head 2, 3 waiting", ev)
	}
	st, _ := e.Stats(ctx, name)
	if st.Left != 2 || st.Admitted != 1 || st.Waiting+st.Admitted+st.Left != st.Issued {
		t.Fatalf("stats %+v: want 2 left, 1 admitted, all accounted", st)
	}
	p, _ := e.Position(ctx, name, vs[5])
	if p.Rank != 2 {
		t.Fatalf("the sixth visitor is rank %d, want 2 (behind tickets 3 and 4)", p.Rank)
	}

	// The snapshot gives a fresh instance the departure above the head.
	snap, err := e.Snapshot(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Head != 2 || !slices.Equal(snap.Departed, []int64{5}) || snap.Tick != a.Tick || snap.Waiting != 3 {
		t.Fatalf("snapshot %+v, want head 2, departed [5], tick %d", snap, a.Tick)
	}

	// A stale visitor who polls has left; one who enters joins at the end.
	lastSeen(t, e, rdb, name, 3, 90*time.Second)
	if p, _ := e.Position(ctx, name, vs[2]); p.Status != StatusNotEntered {
		t.Fatalf("a poll by an abandoned visitor says %s, want NOT_ENTERED", p.Status)
	}
	lastSeen(t, e, rdb, name, 4, 90*time.Second)
	p, _ = e.Enter(ctx, name, vs[3])
	if p.Ticket != 7 || p.Rank != 1 || p.RankUpReason != RankUpReturned {
		t.Fatalf("an abandoned visitor re-entered with ticket %d rank %d (%q), want 7 and 1 (returned)", p.Ticket, p.Rank, p.RankUpReason)
	}
}

func TestAbandonmentDisabled(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 0 }))
	v := visitors(t, 1)[0]
	e.Enter(ctx, name, v)
	lastSeen(t, e, rdb, name, 1, time.Hour)
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Millisecond, 1); len(a.Visitors) != 1 {
		t.Fatalf("with abandonment off the visitor must be admitted: %+v", a)
	}
}

// TestSeenStaysBounded: the liveness string does not hold 2 bytes for
// every ticket ever issued (at ticket 2^28 every enter would fail). After a million
// tickets admitted, the cells behind the head are dropped, and abandonment
// still works on the ones kept.
func TestSeenStaysBounded(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60; s.ReturnWithinSeconds = 60 }))
	k := testKeys(rdb, name)
	const issued = 1000000 // tickets already issued and admitted
	rdb.Set(ctx, k.key("seq"), issued, 0)
	rdb.Set(ctx, k.key("head"), issued, 0)
	vs := visitors(t, 3)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	lastSeen(t, e, rdb, name, issued+1, 90*time.Second) // the first has gone
	clockOf(t, e).Advance(20 * time.Millisecond)
	a, err := e.Admit(ctx, name, time.Millisecond, tokens(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[1] || a.Departures.Abandoned != 1 {
		t.Fatalf("admitted %v with %d abandoned, want the second visitor and the first abandoned", a.Visitors, a.Departures.Abandoned)
	}
	n, err := rdb.StrLen(ctx, k.key("seen")).Result()
	if err != nil || n > 64 {
		t.Fatalf("the liveness string is %d bytes after %d tickets (%v), want it bounded by the line", n, issued+3, err)
	}
	// The third is still waiting, alive, and can still be found abandoned.
	if p, _ := e.Position(ctx, name, vs[2]); p.Status != StatusWaiting || p.Rank != 0 {
		t.Fatalf("the third visitor after the trim: %+v", p)
	}
	lastSeen(t, e, rdb, name, issued+3, 90*time.Second)
	if p, _ := e.Position(ctx, name, vs[2]); p.Status != StatusNotEntered {
		t.Fatalf("an abandoned visitor after the trim is %s", p.Status)
	}
	if st, _ := e.Stats(ctx, name); st.Abandoned != 2 {
		t.Fatalf("abandoned %d, want 2", st.Abandoned)
	}
}

// TestAdmissionReportsFlags: a tick reports the room's paused and sold-out
// flags (the per-room gauges of /metrics come from them), and still admits
// the visitors it returns after them.
func TestAdmissionReportsFlags(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name            string
		paused, soldOut bool
		admitted        int
	}{
		{"open", false, false, 2},
		{"paused", true, false, 0},
		{"sold out", false, true, 0},
		{"paused and sold out", true, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.Paused = tc.paused }))
			if err := e.SetSoldOut(ctx, name, tc.soldOut); err != nil {
				t.Fatal(err)
			}
			for _, v := range visitors(t, 2) {
				if _, err := e.Enter(ctx, name, v); err != nil {
					t.Fatal(err)
				}
			}
			a := admitAfter(t, e, name, 50*time.Millisecond, time.Second, 2)
			if a.Paused != tc.paused || a.SoldOut != tc.soldOut {
				t.Errorf("Admission paused=%v soldOut=%v, want %v %v", a.Paused, a.SoldOut, tc.paused, tc.soldOut)
			}
			if len(a.Visitors) != tc.admitted {
				t.Errorf("admitted %d (%q), want %d", len(a.Visitors), a.Visitors, tc.admitted)
			}
			for _, v := range a.Visitors {
				if len(v) < 16 {
					t.Errorf("admitted visitor %q is not a visitor id: the reply's flags leaked into the list", v)
				}
			}
		})
	}
}

// ranks returns each visitor's rank as a poll tells it (-1 when not
// waiting). Polling marks the visitor as seen, as a present page does.
func ranks(t *testing.T, e *Engine, name string, vs []string) []int64 {
	t.Helper()
	out := make([]int64, len(vs))
	for i, v := range vs {
		p, err := e.Position(context.Background(), name, v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = -1
		if p.Status == StatusWaiting {
			out[i] = p.Rank
		}
	}
	return out
}

// neverUp fails when a visitor still waiting now ranks higher than before.
func neverUp(t *testing.T, step string, before, after []int64) {
	t.Helper()
	for i := range before {
		if before[i] >= 0 && after[i] > before[i] {
			t.Errorf("%s: visitor %d went from rank %d to %d", step, i+1, before[i], after[i])
		}
	}
}

// awayLine returns a room where visitors unseen for 60 s are away (the
// return window is the default 900 s) and n visitors entered, tickets 1..n.
func awayLine(t *testing.T, n int) (*Engine, string, redis.UniversalClient, []string) {
	t.Helper()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60 }))
	vs := visitors(t, n)
	for _, v := range vs {
		if _, err := e.Enter(context.Background(), name, v); err != nil {
			t.Fatal(err)
		}
	}
	return e, name, rdb, vs
}

func balanced(t *testing.T, e *Engine, name string) Stats {
	t.Helper()
	st, err := e.Stats(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unaccounted() != 0 {
		t.Fatalf("stats %+v: %d tickets unaccounted for", st, st.Unaccounted())
	}
	return st
}

// TestAwayBuyerPassedOverThenLetIn: a buyer away for 3 minutes when their
// turn comes is passed over (the admission goes to the next present buyer),
// comes back within returnWithinSeconds and is let in at the next tick,
// ahead of the line; nobody else's rank ever goes up.
func TestAwayBuyerPassedOverThenLetIn(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 5)
	// Ticket 2's page went away 3 minutes ago: away (over 60 s), but well
	// within the 900 s return window.
	lastSeen(t, e, rdb, name, 2, 3*time.Minute)
	others := []string{vs[2], vs[3], vs[4]}
	before := ranks(t, e, name, others)

	a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 2)
	if len(a.Visitors) != 2 || a.Visitors[0] != vs[0] || a.Visitors[1] != vs[2] {
		t.Fatalf("admitted %v, want the first and the third (the second passed over)", a.Visitors)
	}
	if a.Departures.Abandoned != 0 || a.Waiting != 2 {
		t.Fatalf("tick %+v: want nobody abandoned and 2 waiting", a)
	}
	st := balanced(t, e, name)
	if st.Away != 1 || st.PassedOver != 1 {
		t.Fatalf("stats %+v: want the second visitor kept aside", st)
	}
	after := ranks(t, e, name, others)
	neverUp(t, "passed over", before, after)
	if after[1] != 0 || after[2] != 1 {
		t.Fatalf("ranks after the pass-over %v, want [-1 0 1]", after)
	}

	// Back within the window: waiting, first in the side list, with the
	// old ticket and no rank going up for anyone.
	p, err := e.Position(ctx, name, vs[1])
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusWaiting || p.Ticket != 2 || p.Rank != 0 || p.RankUpReason != "" {
		t.Fatalf("the returning visitor is told %+v, want WAITING, ticket 2, rank 0", p)
	}
	if st := balanced(t, e, name); st.Away != 0 || st.Returning != 1 || st.Returned != 1 {
		t.Fatalf("stats %+v: want the second visitor returning", st)
	}
	neverUp(t, "returned", after, ranks(t, e, name, others))

	// The next tick of one admission lets the returning visitor in, inside
	// the rate: the fourth keeps waiting at rank 0.
	a = admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[1] {
		t.Fatalf("admitted %v, want the returning second visitor", a.Visitors)
	}
	p, err = e.Position(ctx, name, vs[1])
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusReady || p.Ticket != 2 {
		t.Fatalf("the returned visitor is told %+v, want READY with ticket 2", p)
	}
	if d := time.Until(time.UnixMilli(p.PassExpiresAt)); d < 290*time.Second || d > 301*time.Second {
		t.Fatalf("passExpiresAt is %v away, want the 300 s TTL", d)
	}
	final := ranks(t, e, name, others)
	neverUp(t, "let in", after, final)
	if final[1] != 0 {
		t.Fatalf("the fourth visitor is at rank %d after the returning one went in, want 0", final[1])
	}
	if st := balanced(t, e, name); st.Admitted != 3 || st.Returning != 0 || st.Waiting != 2 {
		t.Fatalf("stats %+v: want 3 admitted, 2 waiting", st)
	}
}

// TestAwayBuyerWhoseTurnHasNotCome keeps their place: away for 3 minutes,
// not yet at the front, they come back to the same ticket and rank.
func TestAwayBuyerWhoseTurnHasNotCome(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 3)
	lastSeen(t, e, rdb, name, 3, 3*time.Minute)
	admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1) // the sweep runs too
	p, err := e.Enter(ctx, name, vs[2])
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != StatusWaiting || p.Ticket != 3 || p.Rank != 1 || p.RankUpReason != "" {
		t.Fatalf("the returning visitor is told %+v, want ticket 3 at rank 1", p)
	}
	balanced(t, e, name)
}

// TestAwayBuyerLapses: past the return window a passed-over buyer departs
// as abandoned, and a leave from the side list counts as a leave.
func TestAwayBuyerLapses(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 3)
	lastSeen(t, e, rdb, name, 1, 3*time.Minute)
	lastSeen(t, e, rdb, name, 2, 3*time.Minute)
	a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[2] {
		t.Fatalf("admitted %v, want the third (two passed over)", a.Visitors)
	}
	// The first's window ends now; the second leaves.
	if err := rdb.ZAdd(ctx, testKeys(rdb, name).key("away"), redisZ(1, vs[0])).Err(); err != nil {
		t.Fatal(err)
	}
	if left, err := e.Leave(ctx, name, vs[1]); err != nil || !left {
		t.Fatalf("leave from the side list: %v %v", left, err)
	}
	a = admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if a.Departures.Abandoned != 1 || a.Departures.Leaves != 1 || len(a.Visitors) != 0 {
		t.Fatalf("tick %+v: want one abandoned, one leave, nobody admitted", a)
	}
	if st := balanced(t, e, name); st.Away != 0 || st.Returning != 0 {
		t.Fatalf("stats %+v: want nobody kept aside", st)
	}
	if p, _ := e.Position(ctx, name, vs[0]); p.Status != StatusNotEntered {
		t.Fatalf("a lapsed visitor is told %s, want NOT_ENTERED", p.Status)
	}
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }

// TestAwayBuyerInRandomMode: in mode random the away buyer drawn at their
// turn is passed over just the same, and let in on return.
func TestAwayBuyerInRandomMode(t *testing.T) {
	ctx := context.Background()
	e, name, rdb, vs := awayLine(t, 5)
	s, err := e.Room(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s.Mode = room.ModeRandom
	if err := e.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	lastSeen(t, e, rdb, name, 3, 3*time.Minute)
	a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 5)
	if len(a.Visitors) != 4 || a.Waiting != 0 {
		t.Fatalf("tick %+v: want the 4 present admitted and the away one passed over", a)
	}
	if st := balanced(t, e, name); st.Away != 1 {
		t.Fatalf("stats %+v: want one away", st)
	}
	if p, _ := e.Enter(ctx, name, vs[2]); p.Status != StatusWaiting || p.Rank != 0 {
		t.Fatalf("the returning visitor is told %+v, want WAITING at rank 0", p)
	}
	a = admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1)
	if len(a.Visitors) != 1 || a.Visitors[0] != vs[2] {
		t.Fatalf("admitted %v, want the returning visitor", a.Visitors)
	}
	balanced(t, e, name)
}

// BenchmarkEnter measures the enter script for new visitors, from many
// goroutines over one client pool.
func BenchmarkEnter(b *testing.B) {
	rdb := servicetest.Redis(b)
	name := servicetest.RoomName(b, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	if err := e.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			id, _ := visitor.NewID()
			if _, err := e.Enter(ctx, name, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAdmit measures one admission tick of a 50-visitor batch (the
// seeds' rate at a 1 s tick) from a deep line.
func BenchmarkAdmit(b *testing.B) {
	rdb := servicetest.Redis(b)
	name := servicetest.RoomName(b, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	s := room.Defaults(name)
	s.Rate = room.MaxRate
	if err := e.SaveRoom(context.Background(), name, s); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const batch = 50
	k := testKeys(rdb, name)
	need := b.N*batch + batch
	for start := 0; start < need; start += 10000 {
		pipe := rdb.Pipeline()
		for i := start; i < min(start+10000, need); i++ {
			id, _ := visitor.NewID()
			pipe.ZAdd(ctx, k.key("queue"), redis.Z{Score: float64(i + 1), Member: id})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	rdb.Set(ctx, k.key("seq"), strconv.Itoa(need), 0)
	toks := tokens(b, batch)
	e.Admit(ctx, name, time.Second, nil)
	time.Sleep(10 * time.Millisecond)
	b.ResetTimer()
	admitted := 0
	for range b.N {
		a, err := e.Admit(ctx, name, time.Second, toks)
		if err != nil {
			b.Fatal(err)
		}
		admitted += len(a.Visitors)
	}
	b.StopTimer()
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
}

// TestConservationUnderCancelledTicks runs enters, leaves and admission
// ticks concurrently, cancelling ticks at random points. Every ticket ever
// issued must still be waiting, admitted or left for a counted reason, and
// every admitted visitor must hold a pass or have given it up.
func TestConservationUnderCancelledTicks(t *testing.T) {
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 2000 }))
	// Ticks race the enters and leaves on Redis' own clock: the credit
	// accrues while they run.
	e.SetClock(nil)
	ctx := context.Background()
	vs := visitors(t, 600)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ticks, cancelled int
	var mu sync.Mutex
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				d := time.Duration(rand.IntN(1500)) * time.Microsecond
				if rand.IntN(10) == 0 { // some very short ones, so that a fast Redis still sees cancellations
					d = time.Duration(rand.IntN(20)) * time.Microsecond
				}
				tctx, cancel := context.WithTimeout(ctx, d)
				_, err := e.Admit(tctx, name, 5*time.Millisecond, tokens(t, 20))
				cancel()
				mu.Lock()
				ticks++
				if err != nil {
					cancelled++
				}
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
			}
		})
	}
	var enterWG sync.WaitGroup
	var leaves atomic.Int64
	for w := range 6 {
		enterWG.Go(func() {
			for i := w; i < len(vs); i += 6 {
				if _, err := e.Enter(ctx, name, vs[i]); err != nil {
					t.Error(err)
					return
				}
				if i%7 == 0 {
					ok, err := e.Leave(ctx, name, vs[i])
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						leaves.Add(1)
					}
				}
			}
		})
	}
	enterWG.Wait()
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if cancelled == 0 || cancelled == ticks {
		t.Fatalf("%d of %d ticks were cancelled; the test needs some of each", cancelled, ticks)
	}

	st, err := e.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Issued != int64(len(vs)) {
		t.Fatalf("issued %d tickets for %d visitors", st.Issued, len(vs))
	}
	if st.Unaccounted() != 0 || st.Left != st.Leaves+st.Abandoned {
		t.Fatalf("lost tickets: waiting %d + away %d + returning %d + admitted %d + leaves %d + abandoned %d != issued %d (left %d)",
			st.Waiting, st.Away, st.Returning, st.Admitted, st.Leaves, st.Abandoned, st.Issued, st.Left)
	}
	if st.Admitted != st.Active+st.Consumed+st.Forfeited+st.Expired {
		t.Fatalf("lost passes: admitted %d != active %d + consumed %d + forfeited %d + expired %d",
			st.Admitted, st.Active, st.Consumed, st.Forfeited, st.Expired)
	}
	if st.Leaves+st.Forfeited != leaves.Load() || st.Abandoned != 0 || st.Expired != 0 {
		t.Fatalf("%d leaves succeeded; counted %d from the line, %d passes given up, %d abandoned, %d expired",
			leaves.Load(), st.Leaves, st.Forfeited, st.Abandoned, st.Expired)
	}
	var inQueue, withToken, gone int64
	k := testKeys(rdb, name)
	for _, v := range vs {
		_, zerr := rdb.ZScore(ctx, k.key("queue"), v).Result()
		var n int64
		if raw, err := rdb.HGet(ctx, k.key("tokens"), v).Result(); err == nil && !strings.Contains(raw, " U ") {
			n = 1 // a pass, not the tombstone of a used one
		}
		switch {
		case zerr == nil && n == 1:
			t.Fatalf("visitor %s is both waiting and admitted", v)
		case zerr == nil:
			inQueue++
		case n == 1:
			withToken++
		default:
			gone++
		}
	}
	if inQueue != st.Waiting || withToken != st.Admitted-st.Forfeited || gone != st.Left+st.Forfeited {
		t.Fatalf("per-visitor audit: %d waiting, %d with token, %d gone; counters say %d, %d-%d, %d+%d",
			inQueue, withToken, gone, st.Waiting, st.Admitted, st.Forfeited, st.Left, st.Forfeited)
	}
	t.Logf("%d ticks (%d cancelled): %d admitted, %d waiting, %d left", ticks, cancelled, st.Admitted, st.Waiting, st.Left)
}

// TestDeparturesByReason: each way out of the room is counted on its own,
// so that issued = waiting + admitted + leaves + abandoned and admitted =
// active + consumed + forfeited + expired can be audited by reason.
func TestDeparturesByReason(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60; s.ReturnWithinSeconds = 60 }))
	vs := visitors(t, 7)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Leave(ctx, name, vs[6]); err != nil { // leaves the line
		t.Fatal(err)
	}
	lastSeen(t, e, rdb, name, 6, 90*time.Second) // abandons it
	a := admitAfter(t, e, name, 20*time.Millisecond, 5*time.Millisecond, 4)
	if len(a.Visitors) != 4 || a.Departures != (Departures{Leaves: 1, Abandoned: 1}) {
		t.Fatalf("tick: %d admitted, departures %+v; want 4 and one leave, one abandoned", len(a.Visitors), a.Departures)
	}
	// Of the four passes: one orders, one is given up, one runs out.
	p, _ := e.Position(ctx, name, vs[0])
	c, err := e.Claim(ctx, name, vs[0], *p.EntryToken, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Consume(ctx, name, vs[0], c.Holder); err != nil {
		t.Fatal(err)
	}
	if ok, _ := e.Leave(ctx, name, vs[1]); !ok {
		t.Fatal("giving up a pass")
	}
	agePass(t, rdb, name, vs[2], time.Hour)
	a, err = e.Admit(ctx, name, time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Departures{Leaves: 1, Abandoned: 1, Expired: 1}
	if a.Departures != want {
		t.Fatalf("tick departures %+v, want %+v", a.Departures, want)
	}
	st, err := e.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Departures != want || st.Left != 2 || st.Consumed != 1 || st.Forfeited != 1 || st.Active != 1 || st.Admitted != 4 || st.Waiting != 1 {
		t.Fatalf("stats %+v", st)
	}
	if st.Unaccounted() != 0 || st.Admitted != st.Active+st.Consumed+st.Forfeited+st.Expired {
		t.Fatalf("stats %+v do not add up", st)
	}
}

// TestEnterReportsCreated: Position.Created is set by the enter that made
// a new place, never by one that found it, by a read, or by a lapsed
// visitor put back at the end; leaving and entering again makes one.
func TestEnterReportsCreated(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) {
		s.AbandonAfterSeconds, s.ReturnWithinSeconds = 60, 60
	}))
	vs := visitors(t, 2)
	steps := []struct {
		name string
		do   func() (Position, error)
		want bool
	}{
		{"first enter", func() (Position, error) { return e.Enter(ctx, name, vs[0]) }, true},
		{"enter again", func() (Position, error) { return e.Enter(ctx, name, vs[0]) }, false},
		{"position", func() (Position, error) { return e.Position(ctx, name, vs[0]) }, false},
		{"enter after leaving", func() (Position, error) {
			if _, err := e.Leave(ctx, name, vs[0]); err != nil {
				return Position{}, err
			}
			return e.Enter(ctx, name, vs[0])
		}, true},
		{"another visitor", func() (Position, error) { return e.Enter(ctx, name, vs[1]) }, true},
		{"lapsed, back at the end", func() (Position, error) {
			lastSeen(t, e, rdb, name, 2, 90*time.Second)
			p, err := e.Enter(ctx, name, vs[0])
			if err == nil && p.RankUpReason != RankUpReturned {
				t.Fatalf("the visitor did not lapse: %+v", p)
			}
			return p, err
		}, false},
	}
	for _, s := range steps {
		p, err := s.do()
		if err != nil || p.Created != s.want {
			t.Fatalf("%s: created %v (%+v, %v), want %v", s.name, p.Created, p, err, s.want)
		}
	}
}

// TestMemoryPerWaitingVisitor keeps a waiting visitor within the 200-byte
// budget: the line, the liveness cells and the room's other keys, measured
// with MEMORY USAGE over every key of the room. A visitor who joined by a
// campaign link also holds its campaign's short id while waiting
// (ATTRIBUTION: a 2-byte cell, like the liveness cells), within the same
// budget (see BENCHMARKS.md).
func TestMemoryPerWaitingVisitor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      func(i int) Campaign
		budget float64
	}{
		{"direct", func(int) Campaign { return Campaign{} }, 200},
		{"campaigns", func(i int) Campaign {
			return Campaign{Source: "newsletter", Medium: "email", Campaign: fmt.Sprint("spring-sale-", i%50)}
		}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) { memoryPerWaitingVisitor(t, tc.c, tc.budget) })
	}
}

func memoryPerWaitingVisitor(t *testing.T, campaign func(i int) Campaign, budget float64) {
	if testing.Short() {
		t.Skip("20,000 enters")
	}
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	const n = 20000
	vs := visitors(t, n)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := e.EnterFrom(ctx, name, vs[i], "", campaign(i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	keys, err := rdb.Keys(ctx, testKeys(rdb, name).prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, k := range keys {
		b, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		total += b
	}
	per := float64(total) / n
	t.Logf("%d waiting visitors: %.1f bytes each over %d keys", n, per, len(keys))
	if per > budget {
		t.Fatalf("%.1f bytes per waiting visitor, over the %.0f-byte budget", per, budget)
	}
}

// TestRandomMode: each tick admits at random among the waiting, not the
// front of the line, and the ranks that the hub computes from the events
// still count exactly who is ahead.
func TestRandomMode(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Mode = room.ModeRandom; s.Rate = 20 }))
	vs := visitors(t, 200)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	var admitted []string
	for range 3 {
		clockOf(t, e).Advance(500 * time.Millisecond)
		toks, err := token.NewBatch(40)
		if err != nil {
			t.Fatal(err)
		}
		a, err := e.Admit(ctx, name, time.Second, toks)
		if err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, a.Visitors...)
	}
	if len(admitted) < 20 {
		t.Fatalf("admitted %d, want about 30", len(admitted))
	}
	if slices.Equal(admitted, vs[:len(admitted)]) {
		t.Fatal("random mode admitted the front of the line in order")
	}
	snap, err := e.Snapshot(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		p, err := e.Position(ctx, name, v)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(admitted, v) {
			if p.Status != StatusReady {
				t.Fatalf("admitted %s is %s", v, p.Status)
			}
			continue
		}
		below := 0
		for _, d := range snap.Departed {
			if d < p.Line {
				below++
			}
		}
		if hub := p.Line - snap.Head - 1 - int64(below); p.Status != StatusWaiting || hub != p.Rank {
			t.Fatalf("%s: %+v; the hub's rank is %d", v, p, hub)
		}
	}
}

// TestRandomModeUniform checks that a random tick picks every waiting
// visitor with the same chance, whatever their place in line. Each room
// keeps a line of `waiting` visitors full: each tick admits one, whose place
// (0 = front) is counted in one of `cells` equal groups of places, and a new
// visitor joins at the back. Every tick is an independent draw, so the
// counts must fit a uniform distribution. Two tests, each at a
// significance of 0.0001, so that a fair pick fails about one run in five
// thousand per case:
//   - chi-square over the groups (the critical values below): a pick among
//     the first few, or one that never takes the back, scores in the
//     hundreds;
//   - the mean place against the middle of the line (|z| > 3.89): a pick
//     that leans towards the front or the back of the line.
//
// The short line is a listpack in Redis, the long one (over
// zset-max-listpack-entries, 128) a hash table. There ZRANDMEMBER, which
// admit.lua used before, leaned towards the last to join once the line had
// turned over many times: chi-square 64 and 78, z near 8, after 8,000 ticks
// of one room of 300. The 3,000 ticks here catch that lean only sometimes
// (z from 0 to 3.6 in four runs); they always catch a pick among the first
// few (chi-square in the hundreds).
func TestRandomModeUniform(t *testing.T) {
	cases := []struct {
		name                          string
		waiting, cells, rooms, trials int
		critical                      float64 // chi-square, cells-1 degrees of freedom, P = 0.0001
	}{
		{"8 waiting", 8, 8, 4, 2400, 29.88},
		{"300 waiting", 300, 10, 1, 3000, 33.72},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			var places []int
			var mu sync.Mutex
			// Rooms run in parallel, to overlap the round trips.
			g, gctx := errgroup.WithContext(ctx)
			for range c.rooms {
				// Nobody is ever away here: no sweep of the line per tick.
				e, name, _ := newRoom(t, settings(func(s *room.Settings) {
					s.Mode, s.Rate, s.AbandonAfterSeconds = room.ModeRandom, room.MaxRate, 0
				}))
				g.Go(func() error {
					p, err := randomPlaces(gctx, e, clockOf(t, e), name, c.waiting, c.trials/c.rooms)
					mu.Lock()
					defer mu.Unlock()
					places = append(places, p...)
					return err
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			counts := make([]int, c.cells)
			var sum float64
			for _, p := range places {
				counts[p*c.cells/c.waiting]++
				sum += float64(p)
			}
			expect := float64(len(places)) / float64(c.cells)
			var chi float64
			for _, n := range counts {
				d := float64(n) - expect
				chi += d * d / expect
			}
			// A uniform place in 0..w-1 has mean (w-1)/2, variance (w²-1)/12.
			w := float64(c.waiting)
			z := (sum/float64(len(places)) - (w-1)/2) / math.Sqrt((w*w-1)/12/float64(len(places)))
			t.Logf("chi-square %.1f over %d degrees of freedom, mean place z = %.2f; admissions by place %v",
				chi, c.cells-1, z, counts)
			if chi > c.critical {
				t.Errorf("chi-square %.1f over %d degrees of freedom (critical %.2f): admissions by place are not uniform",
					chi, c.cells-1, c.critical)
			}
			if math.Abs(z) > 3.89 {
				t.Errorf("mean place z = %.2f: random admissions lean towards one end of the line", z)
			}
		})
	}
}

// randomPlaces fills room name's line with waiting visitors and then, for
// each of trials ticks, admits one and refills the line; it returns the
// places in line (0 = front) of those admitted. Each tick is a millisecond
// after the last on c, e's clock.
func randomPlaces(ctx context.Context, e *Engine, c *clockwork.FakeClock, name string, waiting, trials int) ([]int, error) {
	line := make([]string, 0, waiting)
	join := func() error {
		v, err := visitor.NewID()
		if err == nil {
			_, err = e.Enter(ctx, name, v)
		}
		line = append(line, v)
		return err
	}
	for range waiting {
		if err := join(); err != nil {
			return nil, err
		}
	}
	places := make([]int, 0, trials)
	for range trials {
		var a Admission
		// At MaxRate a millisecond accrues credit for ten: the tick admits
		// the one its token allows.
		for len(a.Visitors) == 0 {
			c.Advance(time.Millisecond)
			tok, err := token.NewBatch(1)
			if err != nil {
				return places, err
			}
			if a, err = e.Admit(ctx, name, time.Second, tok); err != nil {
				return places, err
			}
		}
		place := slices.Index(line, a.Visitors[0])
		if len(a.Visitors) != 1 || place < 0 {
			return places, fmt.Errorf("admitted %v, want one of the line", a.Visitors)
		}
		places = append(places, place)
		line = slices.Delete(line, place, place+1)
		if err := join(); err != nil {
			return places, err
		}
	}
	return places, nil
}

// TestQuietRoomSleeps: a tick that finds a room quiet (nobody in line or
// pre-queue, no pass, session or tombstone) puts it to sleep until its
// schedule's next change; the ticks after run nothing (Slept) until a
// join, a setting or a sell-out wakes it, which its channel tells with
// WakeMessage, or its wakeAt comes. A room with someone in line or a pass
// held never sleeps.
func TestQuietRoomSleeps(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		set  func(*room.Settings)
		// before runs before the first tick; wake, between the tick that
		// put the room to sleep and the next (nil: nothing).
		before, wake func(t *testing.T, e *Engine, name string)
		asleep       bool // after the first tick
		woken        bool // a wake message, and the next tick runs
		wakeAt       bool // the room's WakeAt is its opening
	}{
		{name: "empty", asleep: true},
		{name: "someone in line", before: func(t *testing.T, e *Engine, name string) { enterMany(t, e, name, 1) },
			set: func(s *room.Settings) { s.Rate = room.MinRate }},
		{name: "a pass held", before: func(t *testing.T, e *Engine, name string) {
			enterMany(t, e, name, 1)
			if a := admitAfter(t, e, name, time.Second, time.Second, 1); len(a.Visitors) != 1 || a.Asleep {
				t.Fatalf("the admission: %+v", a)
			}
		}},
		{name: "woken by a join", asleep: true, woken: true,
			wake: func(t *testing.T, e *Engine, name string) { enterMany(t, e, name, 1) }},
		{name: "woken by a setting", asleep: true, woken: true, wake: func(t *testing.T, e *Engine, name string) {
			if err := e.SaveRoom(ctx, name, settings(func(s *room.Settings) { s.Rate = 7 })); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "woken by a sell-out", asleep: true, woken: true, wake: func(t *testing.T, e *Engine, name string) {
			if err := e.SetSoldOut(ctx, name, true); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "scheduled", asleep: true, wakeAt: true, set: func(s *room.Settings) { s.OpensAt = at(time.Hour) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			set := settings(tt.set)
			e, name, rdb := newRoom(t, set)
			if tt.before != nil {
				tt.before(t, e, name)
			}
			a := admitAfter(t, e, name, time.Second, time.Second, 4)
			if a.Asleep != tt.asleep { // an empty room slept from newRoom's tick on
				t.Fatalf("the first tick: asleep %t, want %t", a.Asleep, tt.asleep)
			}
			if !tt.asleep {
				return
			}
			var wakeIn time.Duration
			if set.OpensAt != nil {
				wakeIn = set.OpensAt.Truncate(time.Millisecond).Sub(clockOf(t, e).Now().Truncate(time.Millisecond))
			}
			if a.WakeIn != wakeIn {
				t.Fatalf("wakeIn %v, want %v (to the opening, or none)", a.WakeIn, wakeIn)
			}
			snap, err := e.Snapshot(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			tick := snap.Tick
			if a = admitAfter(t, e, name, time.Second, time.Second, 4); !a.Slept || !a.Asleep {
				t.Fatalf("the tick after: %+v, want one that slept", a)
			}
			if tt.wakeAt {
				clockOf(t, e).Advance(time.Hour)
				if a = admitAfter(t, e, name, time.Second, time.Second, 4); a.Slept || a.Tick != tick+1 || a.Phase != PhaseOpen {
					t.Fatalf("the tick past wakeAt: %+v, want the open room's next tick", a)
				}
				return
			}
			if tt.wake == nil {
				return
			}
			sub := rdb.Subscribe(ctx, EventsChannel(e.Namespace(), name))
			t.Cleanup(func() { sub.Close() })
			if _, err := sub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			tt.wake(t, e, name)
			msg, err := sub.ReceiveMessage(ctx)
			if err != nil || msg.Payload != WakeMessage {
				t.Fatalf("after the wake the channel carried %v %v, want %q", msg, err, WakeMessage)
			}
			if a = admitAfter(t, e, name, time.Second, time.Second, 4); a.Slept || a.Tick != tick+1 {
				t.Fatalf("the tick after the wake: %+v, want the room's next tick", a)
			}
		})
	}
}

// TestSleepingRoomWithAJoinThatDidNotWakeIt: a join written by an
// instance that does not wake rooms (a version without sleep, during a
// rolling deploy) leaves the mark in place; the next tick finds the line
// and runs.
func TestSleepingRoomWithAJoinThatDidNotWakeIt(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000 }))
	if a := admitAfter(t, e, name, time.Second, time.Second, 4); !a.Asleep {
		t.Fatalf("the empty room: %+v, want it asleep", a)
	}
	rdb.ZAdd(ctx, testKeys(rdb, name).key("queue"), redis.Z{Score: 1, Member: visitors(t, 1)[0]})
	if a := admitAfter(t, e, name, time.Second, time.Second, 4); a.Slept || len(a.Visitors) != 1 {
		t.Fatalf("the tick after the join: %+v, want it run and the buyer admitted", a)
	}
}
