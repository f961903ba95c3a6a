package queue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/token"
	"waitingroom/server/visitor"
)

// newRoom returns an engine and a fresh room with settings s on real Redis.
func newRoom(t *testing.T, s room.Settings) (*Engine, string, redis.UniversalClient) {
	t.Helper()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	if err := e.SaveRoom(context.Background(), name, s); err != nil {
		t.Fatal(err)
	}
	// The first tick of a new room starts its rate clock with no credit.
	if a, err := e.Admit(context.Background(), name, time.Second, nil); err != nil || len(a.Visitors) != 0 {
		t.Fatalf("priming tick: %+v %v", a, err)
	}
	return e, name, rdb
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

// admitAfter lets credit accrue for d, then runs one tick of length tick.
func admitAfter(t *testing.T, e *Engine, name string, d, tick time.Duration, ntok int) Admission {
	t.Helper()
	time.Sleep(d)
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
	left := time.Until(time.UnixMilli(readPass(t, rdb, name, v).expiry))
	if left <= 40*time.Second || left > 42*time.Second {
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
				e.admitNow = func() time.Time { return now }
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
