package adapt

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// adaptiveRoom makes an adaptive room at rate, between 10 and 200 (a step
// of 5), with waiting visitors in line.
func adaptiveRoom(t *testing.T, rate float64, waiting int) (*queue.Engine, string, redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	e := queue.New(rdb, testNamespace(t))
	s := room.Defaults(name)
	s.Rate = rate
	s.Adapt = room.Adapt{Adaptive: true, MinRate: 10, MaxRate: 200, TargetP95Ms: 300, MaxErrorRate: 0.05}
	s.OrderRate = 1000 // above maxRate: the order bucket does not cap the controller (room.Adapt.Ceiling)
	if err := e.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.DeleteRoom(context.Background(), name) }) // and out of the adaptive rooms' set
	for range waiting {
		v, err := visitor.NewID()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	return e, name, rdb
}

// healthy writes three healthy seconds of orders, up to the one of now,
// into room's signal: enough fast orders for any rate here.
func healthy(t *testing.T, rdb redis.UniversalClient, name string, took time.Duration, now time.Time) {
	t.Helper()
	rec := NewRecorder(rdb, testNamespace(t), "test", nil, quiet)
	for s := range 3 {
		rec.clk = at(now.Add(-time.Duration(s) * time.Second))
		for range 100 {
			rec.ObserveOrder(name, "placed", took)
		}
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func rateOf(t *testing.T, e *queue.Engine, name string) (float64, queue.AdaptRoom) {
	t.Helper()
	s, err := e.Room(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := e.AdaptRooms(context.Background(), []string{name})
	if err != nil {
		t.Fatal(err)
	}
	return s.Rate, rs[name]
}

// recorded counts the decisions applied, by reason.
type recorded struct {
	mu sync.Mutex
	by map[string]int
}

func (r *recorded) Adapted(_, reason string, _, _ float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.by == nil {
		r.by = map[string]int{}
	}
	r.by[reason]++
}

// TestTwoInstancesStepOnce: two instances' controllers that decide at
// the same moments take one step per interval between them, not two; the
// rate stops at maxRate.
func TestTwoInstancesStepOnce(t *testing.T) {
	e, name, rdb := adaptiveRoom(t, 150, 1000)
	fc := onClock(e)
	healthy(t, rdb, name, 20*time.Millisecond, fc.Now())
	p := DefaultParams()
	p.Every = 200 * time.Millisecond // decisions at least 180 ms apart
	var obs recorded
	ns := testNamespace(t)
	a := NewController(e, NewReader(rdb, ns).WithClock(fc), p, quiet, &obs).WithClock(fc)
	b := NewController(e, NewReader(rdb, ns).WithClock(fc), p, quiet, &obs).WithClock(fc)
	ctx := context.Background()
	// The first climb: ×1.05 + maxRate/200 a step.
	want := []float64{158.5, 167.425, 176.796, 186.636, 196.968, 200, 200}
	for i, w := range want {
		if i > 0 {
			fc.Advance(300 * time.Millisecond)
		}
		// Each instance a few times in the same moment; again (bounded)
		// only if none of them got a decision in (a tick's reads are
		// bounded by its interval in real time, which a loaded machine
		// can overrun): one burst takes one step.
		for try := 0; try < 20; try++ {
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(func() { a.Tick(ctx) })
				wg.Go(func() { b.Tick(ctx) })
			}
			wg.Wait()
			if _, st := rateOf(t, e, name); st.N > int64(i) {
				break
			}
		}
		if got, st := rateOf(t, e, name); got != w || st.N != int64(i+1) {
			t.Fatalf("round %d: rate %g after %d decisions, want %g after %d", i, got, st.N, w, i+1)
		}
	}
	if obs.by[ReasonIncrease] != 6 || obs.by[ReasonAtMax] != 1 || len(obs.by) != 2 {
		t.Fatalf("decisions %v, want 6 increases and 1 hold at max", obs.by)
	}
	if _, st := rateOf(t, e, name); st.Base <= 0 || st.Base > 20*time.Millisecond || st.Knee != 0 || !st.LastCut.IsZero() {
		t.Fatalf("state %+v, want a no-load p95 of at most 20 ms kept, no knee, no cut", st)
	}
}

// TestNoSignalFreezes: without orders the rate stays, and the decision
// says why.
func TestNoSignalFreezes(t *testing.T) {
	e, name, rdb := adaptiveRoom(t, 50, 1000)
	c := NewController(e, NewReader(rdb, testNamespace(t)), DefaultParams(), quiet, nil)
	c.Tick(context.Background())
	if got, st := rateOf(t, e, name); got != 50 || st.N != 1 || st.LastReason != ReasonNoSignal {
		t.Fatalf("rate %g, state %+v, want 50 after one %s", got, st, ReasonNoSignal)
	}
}

// TestSlowShopCuts: a p95 over the target cuts the rate, down to minRate
// and no further; the cut, its time and the knee are kept in the room.
func TestSlowShopCuts(t *testing.T) {
	e, name, rdb := adaptiveRoom(t, 20, 1000)
	fc := onClock(e)
	healthy(t, rdb, name, 5*time.Second, fc.Now()) // far over the 300 ms target
	p := DefaultParams()
	p.Every = 50 * time.Millisecond
	c := NewController(e, NewReader(rdb, testNamespace(t)).WithClock(fc), p, quiet, nil).WithClock(fc)
	for i, w := range []float64{10, 10, 10} {
		fc.Advance(60 * time.Millisecond)
		c.Tick(context.Background())
		got, st := rateOf(t, e, name)
		if got != w {
			t.Fatalf("rate %g, want %g", got, w)
		}
		if i == 0 && (st.LastReason != ReasonLatency || st.Knee != 20 || st.LastCut.UnixMilli() != fc.Now().UnixMilli()) {
			t.Fatalf("state %+v, want a cut on latency at a knee of 20 kept", st)
		}
	}
}

// TestManualRateWins: a decision read before the operator's change is not
// applied: a manual rate turns adaptive off, and the controller leaves the
// room alone; a rate set with adaptive still on is a new start, and a
// decision read before it is stale.
func TestManualRateWins(t *testing.T) {
	ctx := context.Background()
	e, name, _ := adaptiveRoom(t, 50, 1000)
	_, st := rateOf(t, e, name)
	d := queue.AdaptDecision{N: st.N, From: 50, To: 55, Reason: ReasonIncrease}

	cur, err := e.Room(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	rate := 40.0
	restart := room.Patch{Rate: &rate, AdaptPatch: room.AdaptPatch{Adaptive: new(bool)}}
	*restart.Adaptive = true
	if err := e.SaveRoom(ctx, name, restart.Apply(cur)); err != nil {
		t.Fatal(err)
	}
	if ok, why, err := e.ApplyAdapt(ctx, name, d); ok || why != "stale" || err != nil {
		t.Fatalf("a decision read before a new start: %v %q %v, want refused as stale", ok, why, err)
	}

	cur, _ = e.Room(ctx, name)
	rate = 30
	if err := e.SaveRoom(ctx, name, room.Patch{Rate: &rate}.Apply(cur)); err != nil {
		t.Fatal(err)
	}
	_, st = rateOf(t, e, name)
	d = queue.AdaptDecision{N: st.N, From: 30, To: 35, Reason: ReasonIncrease}
	if ok, why, err := e.ApplyAdapt(ctx, name, d); ok || why != "off" || err != nil {
		t.Fatalf("after a manual rate: %v %q %v, want refused as off", ok, why, err)
	}
	if got, err := e.Room(ctx, name); err != nil || got.Rate != 30 || got.Adaptive {
		t.Fatalf("rate %g adaptive %v %v, want 30, off", got.Rate, got.Adaptive, err)
	}
	if rs, err := e.AdaptRooms(ctx, []string{name}); err != nil || len(rs) != 0 {
		t.Fatalf("adaptive rooms %v %v, want none", rs, err)
	}
	if names, err := e.AdaptiveRooms(ctx); err != nil || slices.Contains(names, name) {
		t.Fatalf("the room is still marked adaptive: %v %v", names, err)
	}
}

// TestOnlyAdaptiveRoomsAreCounted: the controller feeds the recorder the
// adaptive rooms, and the recorder counts their orders only.
func TestOnlyAdaptiveRoomsAreCounted(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := adaptiveRoom(t, 50, 0)
	other := servicetest.RoomName(t, rdb)
	if err := e.SaveRoom(ctx, other, room.Defaults(other)); err != nil {
		t.Fatal(err)
	}
	names, err := e.AdaptiveRooms(ctx)
	if err != nil || !slices.Contains(names, name) || slices.Contains(names, other) {
		t.Fatalf("adaptive rooms %v %v, want %s and not %s", names, err, name, other)
	}
	ns := testNamespace(t)
	rec := NewRecorder(rdb, ns, "test", nil, quiet)
	NewController(e, NewReader(rdb, ns), DefaultParams(), quiet, nil).Feed(rec).Tick(ctx)
	sec := time.Now().Add(-time.Second)
	rec.clk = at(sec)
	rec.ObserveOrder(name, "placed", time.Millisecond)
	rec.ObserveOrder(other, "placed", time.Millisecond)
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for r, want := range map[string]int64{name: 1, other: 0} {
		n, err := rdb.Exists(ctx, signalKey(ns, r, sec.Unix())).Result()
		if err != nil || n != want {
			t.Errorf("room %s: %d signal keys %v, want %d", r, n, err, want)
		}
	}
}

// TestLoopsRaiseTheRate runs the recorder's and the controller's loops as
// web/app does, on a fake clock moved in steps of 50 ms, each step once
// both loops have finished what the last one caused: fed fast orders, the
// rate rises by steps, within maxRate; once they stop, it freezes.
func TestLoopsRaiseTheRate(t *testing.T) {
	e, name, rdb := adaptiveRoom(t, 20, 1000)
	fc := onClock(e)
	ns := testNamespace(t)
	rec := NewRecorder(rdb, ns, "test", nil, quiet).WithClock(fc)
	p := DefaultParams()
	p.Every, p.Window = 250*time.Millisecond, 1
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	wg.Go(func() { rec.Run(ctx) })
	wg.Go(func() {
		NewController(e, NewReader(rdb, ns).WithClock(fc), p, quiet, nil).Feed(rec).WithClock(fc).Run(ctx)
	})
	hang, stop := context.WithTimeout(ctx, 30*time.Second) // catches a hang only
	defer stop()
	step := func(n int, orders bool) {
		t.Helper()
		for range n {
			if err := fc.BlockUntilContext(hang, 2); err != nil {
				t.Fatal("the loops did not come back to wait for their next tick")
			}
			if orders {
				for range 10 {
					rec.ObserveOrder(name, "placed", 20*time.Millisecond)
				}
			}
			fc.Advance(50 * time.Millisecond)
		}
	}
	step(50, true) // 2.5 s of orders
	raised, st := rateOf(t, e, name)
	if raised <= 20 || raised > 200 || st.LastReason != ReasonIncrease {
		t.Fatalf("rate %g (last %s), want raised from 20", raised, st.LastReason)
	}
	// No more orders: once the window has none (the last second with
	// orders is a window, the rest of its own second and Landed away, and
	// the next decision an interval later), the rate holds.
	step(int((time.Duration(p.Window+1)*time.Second+Landed+p.Every)/(50*time.Millisecond)), false)
	held, st := rateOf(t, e, name)
	step(12, false)
	still, _ := rateOf(t, e, name)
	if st.LastReason != ReasonNoSignal || still != held {
		t.Fatalf("without orders: %g then %g (last %s), want it frozen", held, still, st.LastReason)
	}
}

// onClock puts e on a fake clock standing at the wall clock's now, and
// returns it.
func onClock(e *queue.Engine) *clockwork.FakeClock {
	fc := clockwork.NewFakeClockAt(time.Now())
	e.SetClock(fc.Now)
	return fc
}

// testNamespace is the test's own Redis namespace: a controller decides
// for every adaptive room of its namespace, so tests (and other packages'
// tests on the same Redis database) never tick each other's rooms.
func testNamespace(t *testing.T) string {
	// With the process's id: two test runs on one Redis at once (two
	// checkouts) keep apart too.
	ns := "wr:at" + strconv.Itoa(os.Getpid()) + ":" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	if len(ns) > queue.MaxNamespaceLen {
		t.Fatalf("namespace %q: over %d bytes, name the test shorter", ns, queue.MaxNamespaceLen)
	}
	return ns
}

// slowRooms answers nothing before the tick's deadline.
type slowRooms struct{}

func (slowRooms) AdaptiveRooms(ctx context.Context) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (slowRooms) AdaptRooms(context.Context, []string) (map[string]queue.AdaptRoom, error) {
	return nil, nil
}

func (slowRooms) ApplyAdapt(context.Context, string, queue.AdaptDecision) (bool, string, error) {
	return false, "", nil
}

// TestLateTickSaid: a tick that runs past its interval is logged, once a
// minute at most; a tick whose caller ended it is not.
func TestLateTickSaid(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ticks    int
		canceled bool
		want     int
	}{
		{"one late tick", 1, false, 1},
		{"three late ticks, said once", 3, false, 1},
		{"the caller ended it", 1, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := DefaultParams()
			p.Every = 20 * time.Millisecond
			c := NewController(slowRooms{}, nil, p, slog.New(slog.NewTextHandler(&buf, nil)), nil)
			ctx, cancel := context.WithCancel(context.Background())
			if tt.canceled {
				cancel()
			}
			for range tt.ticks {
				c.Tick(ctx)
			}
			cancel()
			if got := strings.Count(buf.String(), "ran past its interval"); got != tt.want {
				t.Fatalf("said %d times, want %d: %s", got, tt.want, buf.String())
			}
		})
	}
}
