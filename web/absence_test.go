package web

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/token"
	"waitingroom/web/sse"
)

// seenAgo rewrites when the holder of ticket was last seen, as the queue
// scripts store it (2 s epochs, 2 bytes per ticket), so that the test need
// not wait out abandonAfterSeconds.
func seenAgo(t *testing.T, eng *queue.Engine, name string, ticket int64, ago time.Duration) {
	t.Helper()
	rdb := servicetest.Redis(t)
	v := (time.Now().Add(-ago).UnixMicro()/2000000)%65535 + 1
	if err := rdb.SetRange(context.Background(), eng.Namespace()+":{"+name+"}:seen", 2*ticket, string([]byte{byte(v >> 8), byte(v)})).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestAwayBuyerLetInOverSSE drives the absence rule through the SSE path:
// while paused the stream says so with no ETA; a buyer whose page has been
// gone 3 minutes when their turn comes is passed over, reconnects, and gets
// the ready event at the next tick, while the rank of the buyer behind
// never goes up.
func TestAwayBuyerLetInOverSSE(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate, set.AbandonAfterSeconds, set.Paused = 1000, 60, true
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, time.Hour, false, sse.Options{})
	enter := func() http.CookieJar {
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Post(a.url+"/api/rooms/"+name+"/queue", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return jar
	}
	away := enter() // ticket 1
	enter()         // ticket 2
	jar, _ := cookiejar.New(nil)
	me := follow(t, a.url+"/r/"+name+"/events", jar, "") // ticket 3
	e := me.next(t, eventWait)
	if field(t, e, "rank") != "2" || field(t, e, "paused") != "true" || field(t, e, "estimatedWaitSeconds") != "null" {
		t.Fatalf("first event while paused: %s, want rank 2, paused, no ETA", e.Data)
	}
	lastRank := 2

	seenAgo(t, eng, name, 1, 3*time.Minute)
	set.Paused = false
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	tick := func() queue.Admission {
		t.Helper()
		eng.Admit(ctx, name, time.Second, nil) // the rate clock starts
		time.Sleep(20 * time.Millisecond)
		toks, _ := token.NewBatch(1)
		adm, err := eng.Admit(ctx, name, 10*time.Millisecond, toks)
		if err != nil {
			t.Fatal(err)
		}
		return adm
	}
	// myRank reads my stream until a position at or past tick n.
	myRank := func(n int64) {
		t.Helper()
		for {
			e := me.next(t, eventWait)
			if string(e.Event) != "position" {
				t.Fatalf("event %s %s, want a position", e.Event, e.Data)
			}
			r, _ := strconv.Atoi(field(t, e, "rank"))
			if r > lastRank {
				t.Fatalf("my rank went up from %d to %d: %s", lastRank, r, e.Data)
			}
			lastRank = r
			if id, _ := strconv.ParseInt(string(e.ID), 10, 64); id >= n {
				if field(t, e, "paused") != "false" || field(t, e, "estimatedWaitSeconds") == "null" {
					t.Fatalf("event %s after the pause: want paused false and an ETA", e.Data)
				}
				return
			}
		}
	}
	adm := tick()
	if len(adm.Visitors) != 1 || adm.Waiting != 1 {
		t.Fatalf("tick %+v: want the second admitted, the first passed over, me waiting", adm)
	}
	myRank(adm.Tick)
	if lastRank != 0 {
		t.Fatalf("my rank is %d after the two ahead went, want 0", lastRank)
	}

	// The away buyer's page comes back: the stream enters (idempotent) and
	// the next tick lets them in, ahead of me, with a visible deadline.
	back := follow(t, a.url+"/r/"+name+"/events", away, "")
	if e := back.next(t, eventWait); string(e.Event) != "position" || field(t, e, "status") != "WAITING" || field(t, e, "ticket") != "1" {
		t.Fatalf("the returning page is told %s %s, want WAITING with ticket 1", e.Event, e.Data)
	}
	adm = tick()
	if len(adm.Visitors) != 1 || adm.Waiting != 1 {
		t.Fatalf("tick %+v: want the returning buyer admitted, me still waiting", adm)
	}
	for {
		e := back.next(t, eventWait)
		if string(e.Event) != "ready" {
			continue
		}
		exp, _ := strconv.ParseInt(field(t, e, "passExpiresAt"), 10, 64)
		if d := time.Until(time.UnixMilli(exp)); d < 290*time.Second || d > 301*time.Second {
			t.Fatalf("ready %s: passExpiresAt %v away, want the 300 s TTL", e.Data, d)
		}
		break
	}
	myRank(adm.Tick)
	if lastRank != 0 {
		t.Fatalf("my rank is %d after the returning buyer went in, want 0", lastRank)
	}
}
