package push

import (
	"context"
	"io"
	"log/slog"
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

// recorder is a Handler that keeps what it hears.
type recorder struct {
	mu         sync.Mutex
	events     []queue.Event
	rooms      []string
	woken      chan string
	subscribed chan struct{}
	once       sync.Once
}

func (r *recorder) Event(room string, e queue.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rooms = append(r.rooms, room)
	r.events = append(r.events, e)
}
func (r *recorder) Subscribed() { r.once.Do(func() { close(r.subscribed) }) }
func (r *recorder) Lost()       {}
func (r *recorder) Woken(room string) {
	select {
	case r.woken <- room:
	default:
	}
}

func (r *recorder) heard() ([]string, []queue.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rooms...), append([]queue.Event(nil), r.events...)
}

// deployment is one engine and its process's subscription.
type deployment struct {
	rdb redis.UniversalClient
	eng *queue.Engine
	rec *recorder
	// clock is the engine's: the test moves it for credit to accrue.
	clock *clockwork.FakeClock
}

func deploy(t *testing.T, db int, name string) *deployment {
	t.Helper()
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, db))
	d := &deployment{rdb: rdb, eng: queue.New(rdb, queue.DefaultNamespace(rdb)), rec: &recorder{subscribed: make(chan struct{}), woken: make(chan string, 8)}}
	d.clock = clockwork.NewFakeClockAt(time.Now())
	d.eng.SetClock(d.clock.Now)
	t.Cleanup(func() { servicetest.DropRoom(rdb, name) })
	s := room.Defaults(name)
	s.Rate = 1000
	if err := d.eng.SaveRoom(context.Background(), name, s); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Listen(ctx, rdb, d.eng.Namespace(), d.rec, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-d.rec.subscribed:
	case <-time.After(5 * time.Second):
		t.Fatal("subscription not established")
	}
	return d
}

// TestDeploymentsOnOneRedisDoNotHearEachOther runs two deployments on
// databases 5 and 6 of one Redis server, with the same room name. Pub/sub
// ignores the database number: without namespaces one deployment's
// sold-out tick reached the other's buyers, and the other's ticks moved
// its ranks. Each must hear its own events only.
func TestDeploymentsOnOneRedisDoNotHearEachOther(t *testing.T) {
	if strings.Contains(servicetest.RedisURL(), "addr=") {
		t.Skip("a Redis Cluster has one database; namespaces on it are covered by the cluster drill")
	}
	ctx := context.Background()
	name := "ns-" + strings.ToLower(strings.ReplaceAll(mustID(t)[:8], "_", "-"))
	a, b := deploy(t, 5, name), deploy(t, 6, name)
	if a.eng.Namespace() == b.eng.Namespace() {
		t.Fatalf("both deployments use namespace %q", a.eng.Namespace())
	}
	// B has a line; A has one buyer, and sells out (a room with nobody
	// in line would sleep after its first tick).
	if _, err := a.eng.Enter(ctx, name, mustID(t)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := b.eng.Enter(ctx, name, mustID(t)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.eng.SetSoldOut(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	a.clock.Advance(10 * time.Millisecond)
	b.clock.Advance(10 * time.Millisecond)
	if _, err := a.eng.Admit(ctx, name, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.eng.Admit(ctx, name, time.Second, []string{"0123456789012345678901234567890123456789012"}); err != nil {
		t.Fatal(err)
	}
	// A forged channel inside B's pattern but naming no room of B.
	b.rdb.Publish(ctx, b.eng.Namespace()+":{x}:y}:events", `{"n":9,"h":0,"t":1,"w":0,"r":1,"s":1,"a":[],"d":[]}`)
	// A second tick of each: Redis delivers a subscriber's messages in
	// the order they were published, so once each has heard its second
	// tick, anything else published before it has been heard too.
	for _, d := range []*deployment{a, b} {
		if _, err := d.eng.Admit(ctx, name, time.Second, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []*deployment{a, b} {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, events := d.rec.heard(); len(events) >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a deployment did not hear its second tick")
			}
		}
	}

	for _, tt := range []struct {
		who     string
		d       *deployment
		soldOut bool
		waiting int64
	}{{"A", a, true, 1}, {"B", b, false, 3}} {
		rooms, events := tt.d.rec.heard()
		if len(events) != 2 || rooms[1] != name || events[1].Tick != events[0].Tick+1 {
			t.Fatalf("deployment %s heard %d events (%v), want only its own two ticks", tt.who, len(events), events)
		}
		if e := events[0]; rooms[0] != name || bool(e.SoldOut) != tt.soldOut || e.Waiting != tt.waiting {
			t.Fatalf("deployment %s heard %+v in room %s, want its own tick (sold out %v, %d waiting)", tt.who, e, rooms[0], tt.soldOut, tt.waiting)
		}
	}
}

func mustID(t *testing.T) string {
	t.Helper()
	id, err := visitor.NewID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestWakeIsHeard: a join into a room that sleeps wakes it, and the
// subscription tells Woken, not Event.
func TestWakeIsHeard(t *testing.T) {
	ctx := context.Background()
	name := "wake-" + strings.ToLower(strings.ReplaceAll(mustID(t)[:8], "_", "-"))
	d := deploy(t, 5, name)
	d.clock.Advance(10 * time.Millisecond)
	if a, err := d.eng.Admit(ctx, name, time.Second, nil); err != nil || !a.Asleep {
		t.Fatalf("the empty room's tick: %+v %v, want it asleep", a, err)
	}
	if _, err := d.eng.Enter(ctx, name, mustID(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case room := <-d.rec.woken:
		if room != name {
			t.Fatalf("woken %q, want %q", room, name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the join's wake was not heard")
	}
	if _, events := d.rec.heard(); len(events) != 1 {
		t.Fatalf("heard %d events, want the one tick (the wake is not an event)", len(events))
	}
}
