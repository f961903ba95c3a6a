package livestats

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// testNS returns a namespace of its own, so that the instances hash of
// one test is not another's; its room keys go with servicetest.RoomName's
// clean-up, the instances hash at the end of t.
func testNS(t *testing.T, rdb redis.UniversalClient) string {
	var b [4]byte
	rand.Read(b[:])
	ns := "lt" + hex.EncodeToString(b[:])
	t.Cleanup(func() { rdb.Del(context.Background(), instancesKey(ns)) })
	return ns
}

func TestTwoInstancesMerge(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns, name := testNS(t, rdb), servicetest.RoomName(t, rdb)
	t0 := time.Now().Truncate(time.Second).Add(-3 * time.Second)
	ca, cb := clockwork.NewFakeClockAt(t0), clockwork.NewFakeClockAt(t0)
	a := NewRecorder(rdb, ns, "a", nil, quiet).WithClock(ca)
	b := NewRecorder(rdb, ns, "b", nil, quiet).WithClock(cb)

	a.ObserveOrder(name, "placed", 3*time.Millisecond)
	a.ObserveOrder(name, "placed", 5*time.Millisecond)
	b.ObserveOrder(name, "placed", 40*time.Millisecond)
	b.ObserveOrder(name, "sold_out", 200*time.Millisecond)
	// Two instances tick the same room: the line is as of the last one,
	// the admissions add up.
	a.RecordTick(name, queue.Admission{Waiting: 12, Prequeued: 0, Active: 2, Rate: 2.5, Visitors: []string{"v1", "v2"}})
	b.RecordTick(name, queue.Admission{Waiting: 11, Active: 3, Rate: 2.5, Visitors: []string{"v3"}})
	// A later second of b only.
	cb.Advance(2 * time.Second)
	b.ObserveOrder(name, "token_used", 7*time.Millisecond)
	b.RecordIssuerFailure(name)
	ca.Advance(2 * time.Second)
	a.RecordIssuerFailure(name)
	for _, r := range []*Recorder{a, b} {
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if len(r.pending) != 0 {
			t.Fatal("a flush kept its figures")
		}
	}

	rd := NewReader(rdb, ns).WithClock(clockwork.NewFakeClockAt(t0.Add(3 * time.Second)))
	got, err := rd.Series(ctx, name, t0.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("%d seconds, want 5 (t0-1 .. t0+3)", len(got))
	}
	for i, s := range got {
		if want := t0.Add(time.Duration(i-1) * time.Second); !s.At.Equal(want) {
			t.Fatalf("second %d at %v, want %v", i, s.At, want)
		}
	}
	first := got[1]
	if first.Placed != 3 || first.Admitted != 3 || first.Rate != 2.5 || first.Active != 3 && first.Active != 2 ||
		!maps.Equal(first.Failed, map[string]int64{"sold_out": 1}) || first.IssuerFailed != 0 {
		t.Fatalf("merged second: %+v", first)
	}
	if first.Waiting != 11 && first.Waiting != 12 {
		t.Fatalf("waiting %d, want one tick's figure", first.Waiting)
	}
	// 2 orders ≤ 5 ms, 1 in (25, 50] ms, 1 in (100, 250] ms.
	if first.P50 != 5*time.Millisecond || first.P95 != 220*time.Millisecond {
		t.Fatalf("p50 %v p95 %v, want 5ms and 220ms", first.P50, first.P95)
	}
	for _, i := range []int{0, 2, 4} { // gaps are zero
		if s := got[i]; s.Placed != 0 || s.Waiting != 0 || s.Failed != nil || s.P95 != 0 || s.Rate != 0 {
			t.Fatalf("second %d is not zero: %+v", i, s)
		}
	}
	if s := got[3]; s.Placed != 0 || s.Failed["token_used"] != 1 || s.IssuerFailed != 2 || s.P50 != 5*time.Millisecond+time.Duration(0.5*float64(5*time.Millisecond)) {
		t.Fatalf("b's later second: %+v", s)
	}
}

func TestSecondsExpire(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns, name := testNS(t, rdb), servicetest.RoomName(t, rdb)
	r := NewRecorder(rdb, ns, "a", nil, quiet)
	r.RecordTick(name, queue.Admission{Waiting: 1})
	sec := r.clk.Now().Unix()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// A minute's hash outlives its last second by Keep and a minute.
	ttl, err := rdb.TTL(ctx, minuteKey(ns, name, sec)).Result()
	if err != nil || ttl <= Keep+time.Minute || ttl > keepFor {
		t.Fatalf("TTL %v (%v), want in (%v, %v]", ttl, err, Keep+time.Minute, keepFor)
	}
	// The key carries the room's hash tag, as queue's keys do.
	if k := minuteKey(ns, name, sec); k != ns+":{"+name+"}:live:m:"+strconv.FormatInt(sec/60, 10) {
		t.Fatalf("key %q", k)
	}
}

// TestMinuteKeys: the seconds of one minute share a hash, each figure a
// field named by the second's offset in it.
func TestMinuteKeys(t *testing.T) {
	for _, tc := range []struct {
		sec    int64
		minute int64
		field  string
	}{
		{0, 0, "0:w"},
		{59, 0, "59:w"},
		{60, 1, "0:w"},
		{1_700_000_000, 28_333_333, "20:w"},
		{-1, -1, "59:w"},
		{-60, -1, "0:w"},
		{-61, -2, "59:w"},
	} {
		if m := minuteOf(tc.sec); m != tc.minute {
			t.Errorf("minuteOf(%d) = %d, want %d", tc.sec, m, tc.minute)
		}
		if f := field(tc.sec, fWaiting); f != tc.field {
			t.Errorf("field(%d) = %q, want %q", tc.sec, f, tc.field)
		}
	}
}

// TestRoomKeysPerWindow: a room ticked every second for a whole window
// holds one key per minute, not one per second, and a series read costs
// the same few commands whether the window is empty or full.
func TestRoomKeysPerWindow(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns, name := testNS(t, rdb), servicetest.RoomName(t, rdb)
	now := time.Now().Truncate(time.Second)
	window := int64(Keep / time.Second)
	clk := clockwork.NewFakeClockAt(now.Add(-Keep))
	rec := NewRecorder(rdb, ns, "a", nil, quiet).WithClock(clk)
	rd := NewReader(rdb, ns).WithClock(clockwork.NewFakeClockAt(now))
	n := &countHook{}
	rdb.AddHook(n)
	read := func() []Second {
		t.Helper()
		n.cmds.Store(0)
		got, err := rd.Series(ctx, name, now.Add(-Keep))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	read()
	empty := n.cmds.Load()
	for s := now.Unix() - window; s <= now.Unix(); s++ {
		rec.RecordTick(name, queue.Admission{Waiting: s % 1000, Visitors: []string{"v"}})
		rec.ObserveOrder(name, "placed", time.Millisecond)
		clk.Advance(time.Second)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, queue.RoomKey(ns, name, "live:*")).Result()
	if err != nil || len(keys) > int(Keep/time.Minute)+2 {
		t.Fatalf("%d keys for a %v window (%v), want at most %d", len(keys), Keep, err, int(Keep/time.Minute)+2)
	}
	got := read()
	full := n.cmds.Load()
	if empty != full || full > int64(MaxSeriesReads) {
		t.Fatalf("a series read sent %d commands empty, %d full; want the same, at most %d", empty, full, MaxSeriesReads)
	}
	if len(got) != int(window)+1 {
		t.Fatalf("%d seconds, want %d", len(got), window+1)
	}
	for i, s := range got {
		sec := now.Unix() - window + int64(i)
		if !s.Ticked || s.Waiting != sec%1000 || s.Admitted != 1 || s.Placed != 1 {
			t.Fatalf("second %d: %+v, want waiting %d, 1 admitted, 1 placed", sec, s, sec%1000)
		}
	}
}

// countHook counts the commands a client sends, but for a new
// connection's handshake.
type countHook struct{ cmds atomic.Int64 }

func (*countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}

// count counts cmd unless it sets up a new connection.
func (h *countHook) count(cmd redis.Cmder) {
	switch cmd.Name() {
	case "hello", "client", "auth", "select":
	default:
		h.cmds.Add(1)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}

func TestSeriesWindow(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns, name := testNS(t, rdb), servicetest.RoomName(t, rdb)
	now := time.Now().Truncate(time.Second)
	rd := NewReader(rdb, ns).WithClock(clockwork.NewFakeClockAt(now))
	for _, tc := range []struct {
		since time.Time
		n     int
	}{
		{now, 1},
		{now.Add(-10 * time.Second), 11},
		{now.Add(-time.Hour), int(Keep/time.Second) + 1}, // at most Keep back
		{now.Add(time.Minute), 0},
	} {
		got, err := rd.Series(ctx, name, tc.since)
		if err != nil || len(got) != tc.n {
			t.Errorf("since %v: %d seconds (%v), want %d", now.Sub(tc.since), len(got), err, tc.n)
		}
	}
}

func TestQuantile(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		hist     [nBuckets]int64
		p50, p95 time.Duration
	}{
		{"empty", [nBuckets]int64{}, 0, 0},
		{"one fast", [nBuckets]int64{1}, 2500 * time.Microsecond, 4750 * time.Microsecond},
		{"all in (50,100]", [nBuckets]int64{4: 100}, 75 * ms, 97500 * time.Microsecond},
		{"even 0..10", [nBuckets]int64{10, 10}, 5 * ms, 9500 * time.Microsecond},
		{"tail beyond 5 s", [nBuckets]int64{0: 50, 10: 50}, 5 * ms, 5000 * ms},
		{"mixed", [nBuckets]int64{0: 90, 7: 10}, 2777778 * time.Nanosecond, 750 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quantile(tc.hist, 0.5); got != tc.p50 {
				t.Errorf("p50 %v, want %v", got, tc.p50)
			}
			if got := Quantile(tc.hist, 0.95); got != tc.p95 {
				t.Errorf("p95 %v, want %v", got, tc.p95)
			}
		})
	}
}

func TestBucketOf(t *testing.T) {
	for took, want := range map[time.Duration]int{0: 0, 5 * time.Millisecond: 0, 5*time.Millisecond + 1: 1,
		time.Second: 7, 5 * time.Second: 9, time.Minute: 10} {
		if got := bucketOf(took); got != want {
			t.Errorf("bucketOf(%v) = %d, want %d", took, got, want)
		}
	}
}

func TestInstances(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns := testNS(t, rdb)
	now := time.Now()
	a := NewRecorder(rdb, ns, "host-a:1", func() int64 { return 5 }, quiet)
	b := NewRecorder(rdb, ns, "host-b:2", func() int64 { return 7 }, quiet)
	gone := NewRecorder(rdb, ns, "host-c:3", func() int64 { return 9 }, quiet).
		WithClock(clockwork.NewFakeClockAt(now.Add(-Stale - time.Second)))
	for _, r := range []*Recorder{b, a, gone} {
		if err := r.Heartbeat(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := NewReader(rdb, ns).Instances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "host-a:1" || got[0].SSE != 5 || got[1].ID != "host-b:2" || got[1].SSE != 7 {
		t.Fatalf("instances %+v", got)
	}
	if d := now.Sub(got[0].Seen); d < -time.Second || d > time.Second {
		t.Fatalf("seen %v, now %v", got[0].Seen, now)
	}
	if ok, _ := rdb.HExists(ctx, instancesKey(ns), "host-c:3").Result(); ok {
		t.Fatal("the stale instance was not pruned")
	}
}

func TestRecorderBounds(t *testing.T) {
	r := NewRecorder(nil, "x", "a", nil, quiet)
	r.ObserveOrder("Not A Room!", "placed", time.Millisecond)
	r.ObserveOrder("ok", string(make([]byte, maxReasonLen+1)), time.Millisecond)
	if len(r.pending) != 1 {
		t.Fatalf("%d pending, want 1 (the invalid room ignored)", len(r.pending))
	}
	for _, p := range r.pending {
		if p.failed["other"] != 1 {
			t.Fatalf("an over-long reason was kept: %v", p.failed)
		}
	}
	for i := range maxPending + 10 {
		r.RecordTick("r"+strconv.Itoa(i), queue.Admission{})
	}
	if len(r.pending) != maxPending || r.dropped != 11 {
		t.Fatalf("%d pending, %d dropped; want %d and 11", len(r.pending), r.dropped, maxPending)
	}
}

// TestRun: Run writes nothing until a second of its clock has passed,
// then flushes and beats once a second, and at its end flushes what is
// left and takes the instance off the list.
func TestRun(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns, name := testNS(t, rdb), servicetest.RoomName(t, rdb)
	t0 := time.Now().Truncate(time.Second)
	clk := clockwork.NewFakeClockAt(t0)
	rec := NewRecorder(rdb, ns, "a", func() int64 { return 3 }, quiet).WithClock(clk)
	rd := NewReader(rdb, ns).WithClock(clk)
	running, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() { rec.Run(running); close(done) }()
	// parked waits until Run waits for its next second.
	parked := func() {
		t.Helper()
		wait, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := clk.BlockUntilContext(wait, 1); err != nil {
			t.Fatal("Run does not wait on its clock")
		}
	}
	placed := func() int64 {
		t.Helper()
		got, err := rd.Series(ctx, name, t0)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, s := range got {
			n += s.Placed
		}
		return n
	}

	parked()
	rec.ObserveOrder(name, "placed", time.Millisecond)
	if n := placed(); n != 0 {
		t.Fatalf("%d placed before Run's first second", n)
	}
	clk.Advance(time.Second)
	parked()
	if n := placed(); n != 1 {
		t.Fatalf("%d placed after Run's first second, want 1", n)
	}
	if ins, err := rd.Instances(ctx); err != nil || len(ins) != 1 || ins[0].ID != "a" || ins[0].SSE != 3 || !ins[0].Seen.Equal(t0.Add(time.Second)) {
		t.Fatalf("instances %+v (%v), want a's beat at %v", ins, err, t0.Add(time.Second))
	}

	rec.ObserveOrder(name, "placed", time.Millisecond)
	stop()
	<-done
	if n := placed(); n != 2 {
		t.Fatalf("%d placed after Run's end, want 2", n)
	}
	if ins, err := rd.Instances(ctx); err != nil || len(ins) != 0 {
		t.Fatalf("instances %+v (%v) after Run's end, want none", ins, err)
	}
}

// TestSeriesStartAtTheRoomsCreation: a room deleted and created again under
// the same name does not show the old room's seconds.
func TestSeriesStartAtTheRoomsCreation(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns, name := testNS(t, rdb), servicetest.RoomName(t, rdb)
	t0 := time.Now().Truncate(time.Second)
	// The engine stamps a room's creation, the recorder its seconds and
	// the reader its now by one clock.
	clk := clockwork.NewFakeClockAt(t0.Add(-10 * time.Second))
	eng := queue.New(rdb, ns)
	eng.SetClock(clk.Now)
	rec := NewRecorder(rdb, ns, "a", nil, quiet).WithClock(clk)
	rd := NewReader(rdb, ns).WithClock(clk)
	record := func(admitted int) {
		t.Helper()
		rec.RecordTick(name, queue.Admission{Waiting: 9, Visitors: make([]string, admitted)})
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The old room's last seconds, then its deletion.
	if err := eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(7 * time.Second)
	record(5)
	clk.Advance(time.Second)
	record(4)
	if _, err := eng.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	for i, create := range []struct {
		how string
		do  func() error
	}{
		{"saved", func() error { return eng.SaveRoom(ctx, name, room.Defaults(name)) }},
		{"created", func() error { _, err := eng.CreateRoom(ctx, name, room.Defaults(name)); return err }},
	} {
		t.Run(create.how, func(t *testing.T) {
			rdb.Del(ctx, queue.SettingsKey(ns, name))
			if err := create.do(); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Second)
			record(1) // the new room's (one per run)
			got, err := rd.Series(ctx, name, t0.Add(-5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var admitted int64
			for _, s := range got {
				admitted += s.Admitted
			}
			if admitted != int64(i+1) {
				t.Fatalf("%d admitted in the series, want the new room's %d only", admitted, i+1)
			}
		})
	}
	// A room saved again keeps its creation time.
	before, _ := rdb.HGet(ctx, queue.SettingsKey(ns, name), queue.CreatedField).Result()
	clk.Advance(time.Second)
	if err := eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	if after, _ := rdb.HGet(ctx, queue.SettingsKey(ns, name), queue.CreatedField).Result(); after != before || before == "" {
		t.Fatalf("created %q, then %q after a save", before, after)
	}
}
