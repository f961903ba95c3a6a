package issuer

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/audit"
	"waitingroom/server/draw"
	"waitingroom/server/livestats"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/salelog"
	"waitingroom/server/servicetest"
	"waitingroom/server/token"
	"waitingroom/server/visitor"
)

// oneRoom narrows an engine to one room, so that parallel tests sharing a
// Redis database do not tick each other's rooms.
type oneRoom struct {
	*queue.Engine
	name string
}

func (o oneRoom) Rooms(context.Context) ([]string, error) { return []string{o.name}, nil }

type countObs struct{ admitted, errs atomic.Int64 }

func (c *countObs) Ticked(_ string, a queue.Admission, _ time.Duration, err error) {
	c.admitted.Add(int64(len(a.Visitors)))
	if err != nil {
		c.errs.Add(1)
	}
}

// TestGlobalRateIsExactAcrossInstances runs one issuer loop on one room,
// three loops on another and three loops that share the ticks on a
// third, side by side for 10 s of a fake clock (moved in
// steps of 100 ms, each once every loop waits for its next tick) at 50
// admissions per second and the default 1 s tick. Both must admit exactly
// rate × 10: more instances must not multiply the rate. A last
// tick at the 10 s mark collects the credit accrued since the loops' last
// tick, so the window's edge is not counted as a loss; the whole credit
// the rate state still owes then (what the spread held back from late
// ticks, at most a fifth over the rate a second) counts as
// admitted-to-come, not as lost.
func TestGlobalRateIsExactAcrossInstances(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	fc := clockwork.NewFakeClockAt(time.Now())
	eng.SetClock(fc.Now)
	ctx := context.Background()
	const rate, run = 50.0, 10 * time.Second
	const tick = time.Second
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	peers := ownPeers(t, rdb, fc)
	cases := []struct {
		name      string
		instances int
		share     bool // the loops share the room's ticks (Share)
	}{{"one instance", 1, false}, {"three instances", 3, false}, {"three instances sharing", 3, true}}
	type result struct {
		name      string
		admitted  int64
		owed      int64
		obs       *countObs
		room      string
		instances int
	}
	results := make([]*result, len(cases))
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var loops sync.WaitGroup
	all := 0
	for i, c := range cases {
		name := servicetest.RoomName(t, rdb)
		s := room.Defaults(name)
		s.Rate = rate
		if err := eng.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		// A backlog larger than the run can drain.
		for range 800 {
			id, _ := visitor.NewID()
			if _, err := eng.Enter(ctx, name, id); err != nil {
				t.Fatal(err)
			}
		}
		results[i] = &result{name: c.name, obs: &countObs{}, room: name, instances: c.instances}
		if _, err := eng.Admit(ctx, name, tick, nil); err != nil { // start the room's clock
			t.Fatal(err)
		}
		for k := range c.instances {
			l := New(oneRoom{eng, name}, tick, log, results[i].obs).WithClock(fc)
			if c.share {
				l.Share(peers, fmt.Sprintf("issuer-%d", k))
			}
			loops.Go(func() { l.Run(runCtx) })
			all++
		}
	}
	hang, stop := context.WithTimeout(ctx, time.Minute) // catches a hang only
	defer stop()
	for range run / (100 * time.Millisecond) {
		if err := fc.BlockUntilContext(hang, all); err != nil {
			t.Fatal("the loops did not come back to wait for their next tick")
		}
		fc.Advance(100 * time.Millisecond)
	}
	if err := fc.BlockUntilContext(hang, all); err != nil {
		t.Fatal("the loops did not come back to wait for their next tick")
	}
	cancel()
	loops.Wait()
	for _, res := range results {
		final, err := eng.Admit(ctx, res.room, tick, tokensN(t, 2*int(rate)))
		if err != nil {
			t.Fatal(err)
		}
		res.obs.admitted.Add(int64(len(final.Visitors)))
		st, err := eng.Stats(ctx, res.room)
		if err != nil {
			t.Fatal(err)
		}
		res.admitted = st.Admitted
		res.owed = int64(st.Credit)
		if at := fc.Now().Truncate(time.Microsecond); !st.CreditAt.Equal(at) {
			t.Errorf("%s: stats say the last tick ran at %v, want %v", res.name, st.CreditAt, at)
		}
	}
	for _, r := range results {
		want := rate * run.Seconds()
		dev := (float64(r.admitted+r.owed) - want) / want
		t.Logf("%s: admitted %d and owed %d (%.2f%% off rate × 10 s), %d tick errors",
			r.name, r.admitted, r.owed, 100*dev, r.obs.errs.Load())
		if float64(r.admitted+r.owed) != want {
			t.Errorf("%s: admitted %d and owed %d, want %.0f", r.name, r.admitted, r.owed, want)
		}
		if limit := int64(1.2*rate*run.Seconds()) + int64(rate); r.admitted > limit {
			t.Errorf("%s: admitted %d, over a fifth above the rate (%d)", r.name, r.admitted, limit)
		}
		if r.obs.admitted.Load() != r.admitted {
			t.Errorf("%s: loops report %d admitted, Redis %d", r.name, r.obs.admitted.Load(), r.admitted)
		}
		// The measured rate feeds the ETA: it must have found the real rate.
		st, _ := eng.Stats(ctx, r.room)
		if math.Abs(st.RateEWMA-rate)/rate > 0.1 {
			t.Errorf("%s: measured admission rate %.2f, want %.0f ± 10%%", r.name, st.RateEWMA, rate)
		}
		id, _ := visitor.NewID()
		p, err := eng.Enter(ctx, r.room, id)
		if err != nil {
			t.Fatal(err)
		}
		wantETA := float64(p.Rank+1) / rate
		if p.EstimatedWaitSeconds == nil || math.Abs(float64(*p.EstimatedWaitSeconds)-wantETA) > 0.15*wantETA+1 {
			t.Errorf("%s: ETA %v s for rank %d, want about %.0f s", r.name, p.EstimatedWaitSeconds, p.Rank, wantETA)
		}
	}
}

// TestTickSkipsUnknownRooms checks that a room listed but without
// settings is skipped without stopping the others.
func TestTickSkipsUnknownRooms(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	good := servicetest.RoomName(t, rdb)
	ghost := servicetest.RoomName(t, rdb)
	s := room.Defaults(good)
	s.Rate = 1000
	if err := eng.SaveRoom(ctx, good, s); err != nil {
		t.Fatal(err)
	}
	id, _ := visitor.NewID()
	if _, err := eng.Enter(ctx, good, id); err != nil {
		t.Fatal(err)
	}
	obs := &countObs{}
	clock := redisClock(t, rdb)
	eng.SetClock(clock.Now)
	l := New(twoRooms{eng, []string{ghost, good}}, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)), obs)
	l.Tick(ctx) // starts the clock
	clock.Advance(20 * time.Millisecond)
	l.Tick(ctx)
	if obs.admitted.Load() != 1 {
		t.Fatalf("admitted %d, want the one visitor of the good room", obs.admitted.Load())
	}
	if obs.errs.Load() != 2 {
		t.Fatalf("%d tick errors, want 2 (the ghost room, twice)", obs.errs.Load())
	}
}

func tokensN(t *testing.T, n int) []string {
	t.Helper()
	toks, err := token.NewBatch(n)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

type twoRooms struct {
	*queue.Engine
	names []string
}

func (r twoRooms) Rooms(context.Context) ([]string, error) { return r.names, nil }

// recordTokens counts the tokens each tick passes.
type recordTokens struct {
	oneRoom
	mu     sync.Mutex
	passed []int
}

func (r *recordTokens) Admit(ctx context.Context, name string, tick time.Duration, tokens []string) (queue.Admission, error) {
	r.mu.Lock()
	r.passed = append(r.passed, len(tokens))
	r.mu.Unlock()
	return r.oneRoom.Admit(ctx, name, tick, tokens)
}

// TestIssuerKeepsUpWithTheCeilingRate: a room at room.MaxRate on a 2 s
// tick asks for two batches of 20,000 tokens (a late tick catches up). The
// issuer passes what the ceiling needs, not a fixed 20,000 tokens a tick
// whatever the settings accept.
func TestIssuerKeepsUpWithTheCeilingRate(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	name := servicetest.RoomName(t, rdb)
	s := room.Defaults(name)
	s.Rate = room.MaxRate
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	id, _ := visitor.NewID() // someone in line: the room does not sleep
	if _, err := eng.Enter(ctx, name, id); err != nil {
		t.Fatal(err)
	}
	const tick = 2 * time.Second
	rec := &recordTokens{oneRoom: oneRoom{eng, name}}
	l := New(rec, tick, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	l.Tick(ctx)
	l.Tick(ctx)
	want := 2 * int(room.MaxRate*tick.Seconds())
	if len(rec.passed) != 2 || rec.passed[1] != want {
		t.Fatalf("tokens passed per tick %v, want %d at the second tick", rec.passed, want)
	}
	if got := MaxTokensPerTick(tick); got != want {
		t.Fatalf("MaxTokensPerTick(%v) = %d, want %d", tick, got, want)
	}
}

// TestIssuersDriveTheDraw: three issuer loops on one room past its opening
// draw the pre-queue once, and then admit in the drawn order.
func TestIssuersDriveTheDraw(t *testing.T) {
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	s := room.Defaults(name)
	s.Rate = 1000
	pre, open := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	s.PrequeueAt, s.OpensAt = &pre, &open
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	var byTicket []string
	var tickets []int64
	for range 30 {
		id, _ := visitor.NewID()
		p, err := eng.Enter(ctx, name, id)
		if err != nil || p.Status != queue.StatusPrequeued {
			t.Fatalf("enter: %+v %v", p, err)
		}
		byTicket, tickets = append(byTicket, id), append(tickets, p.Ticket)
	}
	info, err := eng.DrawInfo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.OpensAt = &now
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	obs := &orderObs{}
	fc := clockwork.NewFakeClockAt(time.Now())
	loops := make([]*Loop, 3)
	for i := range loops {
		e := queue.New(rdb, queue.DefaultNamespace(rdb))
		e.SetClock(fc.Now)
		loops[i] = New(oneRoom{e, name}, 100*time.Millisecond, log, obs)
	}
	// Rounds of a tick of each loop, one after the other (obs needs no
	// lock), then the draws those ticks started, then 50 ms of the clock.
	for round := 0; len(obs.admitted) < len(byTicket); round++ {
		if round == 200 {
			t.Fatalf("%d admitted after %d rounds, want %d", len(obs.admitted), round, len(byTicket))
		}
		for _, l := range loops {
			l.Tick(ctx)
		}
		for _, l := range loops {
			l.wg.Wait()
		}
		fc.Advance(50 * time.Millisecond)
	}
	admitted := obs.admitted
	done, err := eng.DrawInfo(ctx, name)
	if err != nil || !done.Done || done.Commitment != info.Commitment {
		t.Fatalf("draw info %+v %v", done, err)
	}
	seed, _ := hex.DecodeString(done.Seed)
	var want []string
	for _, j := range draw.Order(seed, tickets) {
		want = append(want, byTicket[j])
	}
	if !slices.Equal(admitted, want) {
		t.Fatalf("admitted %v, want the drawn order %v", admitted, want)
	}
}

type orderObs struct{ admitted []string }

func (o *orderObs) Ticked(_ string, a queue.Admission, _ time.Duration, _ error) {
	o.admitted = append(o.admitted, a.Visitors...)
}

// failingAdmit fails every tick of room "bad" with err, and of room
// "gone" with room.ErrNotFound.
type failingAdmit struct{ err error }

func (failingAdmit) Rooms(context.Context) ([]string, error) {
	return []string{"ok", "bad", "gone"}, nil
}

func (f failingAdmit) Admit(_ context.Context, name string, _ time.Duration, _ []string) (queue.Admission, error) {
	switch name {
	case "bad":
		return queue.Admission{}, f.err
	case "gone":
		return queue.Admission{}, room.ErrNotFound
	}
	return queue.Admission{Phase: queue.PhaseOpen}, nil
}

// failureCount is a FailureRecorder in memory.
type failureCount struct {
	mu     sync.Mutex
	ticks  map[string]int
	failed map[string]int
}

func (c *failureCount) RecordTick(name string, _ queue.Admission) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ticks[name]++
}

func (c *failureCount) RecordIssuerFailure(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed[name]++
}

// TestFailedTicksAreCounted: a tick that fails is counted for the room's
// dashboard; a room deleted meanwhile is no failure.
func TestFailedTicksAreCounted(t *testing.T) {
	rec := &failureCount{ticks: map[string]int{}, failed: map[string]int{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := New(failingAdmit{errors.New("redis: connection refused")}, time.Second, log, nil).Record(rec)
	l.Tick(context.Background())
	l.Tick(context.Background())
	if rec.failed["bad"] != 2 || rec.failed["ok"] != 0 || rec.failed["gone"] != 0 || rec.ticks["ok"] != 2 {
		t.Fatalf("ticks %v, failures %v", rec.ticks, rec.failed)
	}
}

// listObs is a RoomsObserver: it keeps each tick's list of rooms.
type listObs struct {
	countObs
	lists [][]string
}

func (o *listObs) Listed(rooms, _ []string) { o.lists = append(o.lists, slices.Clone(rooms)) }

// TestTickTellsTheRoomsItRuns: an observer that is a RoomsObserver is told
// every tick's rooms, before the tick, so it can forget a deleted room; a
// failed listing tells it nothing (a Redis outage deletes no room).
func TestTickTellsTheRoomsItRuns(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	a, b := servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb)
	for _, name := range []string{a, b} {
		if err := eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	obs := &listObs{}
	New(twoRooms{eng, []string{a, b}}, 0, log, obs).Tick(ctx)
	New(oneRoom{eng, a}, 0, log, obs).Tick(ctx)
	New(failingRooms{eng}, 0, log, obs).Tick(ctx)
	want := [][]string{{a, b}, {a}}
	if !slices.EqualFunc(obs.lists, want, slices.Equal) {
		t.Fatalf("listed %q, want %q", obs.lists, want)
	}
}

type failingRooms struct{ *queue.Engine }

func (failingRooms) Rooms(context.Context) ([]string, error) { return nil, context.DeadlineExceeded }

// auditEntries is an audit log in memory.
type auditEntries struct {
	mu sync.Mutex
	e  []audit.Entry
}

func (a *auditEntries) Record(_ context.Context, e audit.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.e = append(a.e, e)
	return nil
}

// TestPhasesAreToldOnce: two issuers ticking together on a room whose
// pre-queue opens in 0.5 s, whose sale opens in 1.2 s and closes in 2.2 s
// (on a clock the test moves) record each transition exactly once, in
// order.
func TestPhasesAreToldOnce(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	clock := redisClock(t, rdb)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	eng.SetClock(clock.Now)
	s := room.Defaults(name)
	now := clock.Now().Truncate(time.Millisecond)
	pre, open, closes := now.Add(500*time.Millisecond), now.Add(1200*time.Millisecond), now.Add(2200*time.Millisecond)
	s.PrequeueAt, s.OpensAt, s.ClosesAt = &pre, &open, &closes
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := &auditEntries{}
	sale := salelog.New(eng, log)
	sale.RecordTo(rec)
	loops := make([]*Loop, 2)
	for i := range loops {
		e := queue.New(rdb, queue.DefaultNamespace(rdb))
		e.SetClock(clock.Now)
		loops[i] = New(oneRoom{e, name}, 50*time.Millisecond, log, nil).WatchPhases(sale).WithClock(clock)
	}
	// toldAt is the clock of the round in which each entry was recorded.
	var toldAt []time.Time
	for clock.Now().Before(now.Add(3 * time.Second)) {
		clock.Advance(50 * time.Millisecond)
		var wg sync.WaitGroup
		for _, l := range loops {
			wg.Go(func() { l.Tick(ctx) }) // the two instances tick at once
		}
		wg.Wait()
		sale.Flush()
		rec.mu.Lock()
		for len(toldAt) < len(rec.e) {
			toldAt = append(toldAt, clock.Now())
		}
		rec.mu.Unlock()
	}
	for _, l := range loops {
		l.wg.Wait()
	}
	sale.Flush()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, e := range rec.e {
		if e.Room != name || e.Actor != "schedule" {
			t.Errorf("entry %+v", e)
		}
		got = append(got, e.Action)
	}
	want := []string{"sale.prequeue_opened", "sale.opened", "sale.closed"}
	if len(got) != len(want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("recorded %v, want %v", got, want)
		}
	}
	// Each is told at the first tick at or after its time.
	if len(toldAt) < len(want) {
		t.Fatalf("%d entries recorded during the ticks, want %d", len(toldAt), len(want))
	}
	for i, at := range []time.Time{pre, open, closes} {
		if d := toldAt[i].Sub(at); d < 0 || d >= 50*time.Millisecond {
			t.Errorf("%s told at the tick %v after its time, want the first tick at or after it", want[i], d)
		}
	}
}

// redisClock returns a fake clock standing at rdb's time.
func redisClock(t *testing.T, rdb redis.UniversalClient) *clockwork.FakeClock {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return clockwork.NewFakeClockAt(now)
}

// TestCloseByOperatorIsNotToldTwice: a room put in mode closed (the
// console tells that) is not told closed again by the issuers.
func TestCloseByOperatorIsNotToldTwice(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	s := room.Defaults(name)
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := &auditEntries{}
	sale := salelog.New(eng, log)
	sale.RecordTo(rec)
	l := New(oneRoom{eng, name}, time.Second, log, nil).WatchPhases(sale)
	l.Tick(ctx)
	s.Mode = room.ModeClosed
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	l.Wake(name) // what the room's channel tells after the save
	l.Tick(ctx)
	sale.Flush()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.e) != 0 {
		t.Fatalf("recorded %+v, want nothing", rec.e)
	}
	if old, err := eng.MarkPhase(ctx, name, queue.PhaseClosed); err != nil || old != queue.PhaseClosed {
		t.Fatalf("marked %q %v, want closed", old, err)
	}
}

// TestTickIsRecorded runs one tick with a livestats Recorder hooked in and
// reads the second back: the line, the active passes, the admissions and
// the rate as set.
func TestTickIsRecorded(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns := queue.DefaultNamespace(rdb)
	eng := queue.New(rdb, ns)
	fc := clockwork.NewFakeClockAt(time.Now())
	eng.SetClock(fc.Now)
	name := servicetest.RoomName(t, rdb)
	s := room.Defaults(name)
	s.Rate = 3
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	eng.Admit(ctx, name, time.Second, nil) // start the rate clock
	for range 10 {
		id, _ := visitor.NewID()
		if _, err := eng.Enter(ctx, name, id); err != nil {
			t.Fatal(err)
		}
	}
	fc.Advance(1100 * time.Millisecond) // credit for 3
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := livestats.NewRecorder(rdb, ns, "test", nil, log)
	start := time.Now()
	New(oneRoom{eng, name}, time.Second, log, nil).Record(rec).Tick(ctx)
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	series, err := livestats.NewReader(rdb, ns).Series(ctx, name, start.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []livestats.Second
	for _, sec := range series {
		if sec.Admitted > 0 || sec.Waiting > 0 {
			got = append(got, sec)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d seconds recorded, want 1: %+v", len(got), series)
	}
	if g := got[0]; g.Admitted != 3 || g.Waiting != 7 || g.Active != 3 || g.Rate != 3 || g.Prequeued != 0 {
		t.Fatalf("recorded %+v, want 3 admitted, 7 waiting, 3 active at rate 3", g)
	}
}
