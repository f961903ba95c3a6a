package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// heard is one event a buyer's stream carried.
type heard struct {
	buyer       int
	name, data  string
	soldOutFlag bool
}

// listen follows buyer i's stream into all, as it comes.
func listen(t *testing.T, i int, c *sseClient, all chan<- heard) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-c.events:
				if len(e.Data) == 0 {
					continue
				}
				all <- heard{buyer: i, name: string(e.Event), data: string(e.Data),
					soldOutFlag: strings.Contains(string(e.Data), `"soldOut":true`)}
			}
		}
	}()
}

// TestRestockAdmitsOnlyWhoHearsIt: 30 buyers on open streams, three
// admitted (maxActive 3 holds the admissions to the stock of 3), then the
// room sells out: each of the 27 waiting hears soldout and keeps its
// place and its stream. The restock (stock 5: maxActive 5 and the flag
// cleared) admits the next two: every buyer admitted, by the API, has
// heard its ready event on its stream, the rest hear that the line moves
// again, and a buyer who joins after the restock is behind all of them.
func TestRestockAdmitsOnlyWhoHearsIt(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	ctx := context.Background()
	set := room.Defaults(name)
	set.Rate, set.MaxActive, set.Paused = 1000, 3, true // paused while the 30 join, in order
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	const tick = 50 * time.Millisecond
	a := startInstance(t, rdb, eng, name, tick, true, HubOptions{Tick: tick})

	const buyers = 30
	all := make(chan heard, 100000)
	jars := make([]http.CookieJar, buyers)
	for i := range buyers {
		jars[i], _ = cookiejar.New(nil)
		c := follow(t, a.url+"/r/"+name+"/events", jars[i], "")
		if e := c.next(t, eventWait); string(e.Event) != "position" || field(t, e, "rank") != fmt.Sprint(i) {
			t.Fatalf("buyer %d joined with %s %s", i, e.Event, e.Data)
		}
		listen(t, i, c, all)
	}

	ready := make([]int, buyers)
	soldOut := make([]int, buyers)
	movesAgain := make([]bool, buyers)
	// until reads the buyers' events until done holds.
	until := func(what string, done func() bool) {
		t.Helper()
		timeout := time.After(eventWait)
		for !done() {
			select {
			case h := <-all:
				switch {
				case h.name == "ready":
					ready[h.buyer]++
				case h.name == "soldout":
					soldOut[h.buyer]++
				case h.name == "position" && !h.soldOutFlag && soldOut[h.buyer] > 0:
					movesAgain[h.buyer] = true
				}
			case <-timeout:
				t.Fatalf("%s: not within %v (ready %v, soldout %v, moving again %v)", what, eventWait, ready, soldOut, movesAgain)
			}
		}
	}
	count := func(n []int, from, to int) (c int) {
		for _, v := range n[from:to] {
			c += min(v, 1)
		}
		return c
	}

	set.Paused = false
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	until("the first 3 hear ready", func() bool { return count(ready, 0, 3) == 3 })

	if err := eng.SetSoldOut(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	until("the 27 waiting hear soldout", func() bool { return count(soldOut, 3, buyers) == buyers-3 })

	set.MaxActive = 5
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	if err := eng.SetSoldOut(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	until("the next 2 hear ready, the other 25 that the line moves", func() bool {
		n := 0
		for _, m := range movesAgain[5:] {
			if m {
				n++
			}
		}
		return count(ready, 3, 5) == 2 && n == buyers-5
	})

	// Admitted by the API == ready events heard, buyer by buyer.
	admitted := 0
	for i := range buyers {
		resp, err := (&http.Client{Jar: jars[i]}).Get(a.url + "/api/rooms/" + name + "/queue/position")
		if err != nil {
			t.Fatal(err)
		}
		var p queue.Position
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		isReady := p.Status == queue.StatusReady
		if isReady {
			admitted++
		}
		if isReady != (ready[i] > 0) || ready[i] > 1 {
			t.Errorf("buyer %d: %s by the API, %d ready events heard", i, p.Status, ready[i])
		}
	}
	if admitted != 5 {
		t.Fatalf("%d admitted, want 5 (the stock)", admitted)
	}

	// A buyer who comes after the restock waits behind the 25.
	late, _ := cookiejar.New(nil)
	c := follow(t, a.url+"/r/"+name+"/events", late, "")
	if e := c.next(t, eventWait); string(e.Event) != "position" || field(t, e, "status") != "WAITING" || field(t, e, "rank") != fmt.Sprint(buyers-5) {
		t.Fatalf("a buyer after the restock: %s %s, want rank %d", e.Event, e.Data, buyers-5)
	}
}
