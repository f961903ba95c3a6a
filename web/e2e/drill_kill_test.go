package e2e

import (
	"bufio"
	"context"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// follower is one buyer's page, reduced to its stream: it reconnects as
// EventSource does (after the server's jittered retry, with Last-Event-ID
// and the visitor cookie) and checks what it is shown.
type follower struct {
	url    string
	client *http.Client

	mu         sync.Mutex
	lastRank   int64 // -1 before the first position
	lastID     string
	retry      time.Duration
	dropped    time.Time // when the stream last broke
	reconnects []time.Duration
	rankWentUp bool
	readies    int
	outages    int
	dups       int    // events whose id is not newer than one already seen
	lastN      int64  // the newest event id seen
	lastFail   string // why the last connection attempt failed, for a stall's report
	fails      int
	attempts   int // reconnects started
	opened     int // reconnects answered 200 (headers read)
	tokens     map[string]bool
	lastTry    time.Time // when the last reconnect started
	cutStream  context.CancelFunc
	connected  atomic.Bool
	// eventsSeen counts the events that say where the buyer stands
	// (position, ready, sold out): an outage event is not one.
	eventsSeen atomic.Int64
}

// cut ends the page's current stream, as a change of network would; the
// page reconnects as after any drop.
func (f *follower) cut() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cutStream != nil {
		f.cutStream()
	}
}

func newFollower(url string) *follower {
	jar, _ := cookiejar.New(nil)
	return &follower{url: url, client: &http.Client{Jar: jar}, lastRank: -1, retry: 3 * time.Second, tokens: map[string]bool{}}
}

func (f *follower) run(ctx context.Context) {
	for ctx.Err() == nil {
		sctx, cutStream := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, f.url, nil)
		f.mu.Lock()
		if f.lastID != "" {
			req.Header.Set("Last-Event-ID", f.lastID)
		}
		f.cutStream = cutStream
		f.attempts++
		f.lastTry = time.Now()
		f.mu.Unlock()
		resp, err := f.client.Do(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			f.mu.Lock()
			f.opened++
			f.mu.Unlock()
		}
		switch {
		case err == nil && resp.StatusCode == http.StatusOK:
			f.read(resp)
		case ctx.Err() == nil:
			f.mu.Lock()
			f.fails++
			if err != nil {
				f.lastFail = err.Error()
			} else {
				f.lastFail = resp.Status + " " + resp.Header.Get("Retry-After")
			}
			f.mu.Unlock()
		}
		if resp != nil {
			resp.Body.Close()
		}
		cutStream()
		f.connected.Store(false)
		f.mu.Lock()
		if f.dropped.IsZero() {
			f.dropped = time.Now()
		}
		wait := f.retry
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (f *follower) read(resp *http.Response) {
	sc := bufio.NewScanner(resp.Body)
	var event, data, id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "retry: "):
			if ms, err := strconv.Atoi(line[7:]); err == nil {
				f.mu.Lock()
				f.retry = time.Duration(ms) * time.Millisecond
				f.mu.Unlock()
			}
		case strings.HasPrefix(line, "id: "):
			id = line[4:]
		case strings.HasPrefix(line, "event: "):
			event = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		case line == "" && event == "beat": // the stream lives: no event
			event, data, id = "", "", ""
		case line == "" && data != "":
			f.event(event, id, data)
			event, data, id = "", "", ""
		}
	}
}

func (f *follower) event(name, id, data string) {
	if name != "outage" {
		f.eventsSeen.Add(1)
	}
	f.connected.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dropped.IsZero() {
		f.reconnects = append(f.reconnects, time.Since(f.dropped))
		f.dropped = time.Time{}
	}
	if id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			if n <= f.lastN {
				f.dups++
			}
			f.lastN = max(f.lastN, n)
		}
		f.lastID = id
	}
	switch name {
	case "position":
		i := strings.Index(data, `"rank":`)
		if i < 0 {
			return
		}
		end := strings.IndexAny(data[i+7:], ",}")
		rank, _ := strconv.ParseInt(data[i+7:i+7+end], 10, 64)
		if f.lastRank >= 0 && rank > f.lastRank && strings.Contains(data, `"WAITING"`) {
			f.rankWentUp = true
		}
		if strings.Contains(data, `"WAITING"`) {
			f.lastRank = rank
		}
	case "outage":
		f.outages++
	case "ready":
		f.readies++
		if i := strings.Index(data, `"entryToken":"`); i >= 0 {
			f.tokens[data[i+14:i+14+43]] = true
		}
	}
}

// TestDrillInstanceKill: 3 instances hold the buyers' streams through
// nginx; one is killed with SIGKILL. Every buyer is back on a survivor
// within 10 s, with reconnects spread by the jittered retry; no position
// goes up, nobody is admitted twice, and every ticket is accounted for.
func TestDrillInstanceKill(t *testing.T) {
	d := newDrill(t, 3, servicetest.RedisURLDB(t, servicetest.ServerDB))
	rdb := servicetest.RedisAt(t, d.redisURL)
	name := servicetest.RoomName(t, rdb)
	d.room(name, map[string]any{"rate": 10, "abandonAfterSeconds": 0})
	n := 300
	if *drillFull {
		n = 5000
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs, wg := startFollowers(ctx, t, d.url+"/r/"+name+"/events", n)
	time.Sleep(2 * time.Second)

	victim := d.instances[1]
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	time.Sleep(500 * time.Millisecond) // the broken streams are noticed
	var affected []*follower
	for _, f := range fs {
		f.mu.Lock()
		if !f.dropped.IsZero() {
			affected = append(affected, f)
		}
		f.mu.Unlock()
	}
	back := time.Now().Add(10 * time.Second)
	for time.Now().Before(back) {
		all := true
		for _, f := range affected {
			f.mu.Lock()
			down := !f.dropped.IsZero()
			f.mu.Unlock()
			if down {
				all = false
				break
			}
		}
		if all {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var times []time.Duration
	for _, f := range affected {
		f.mu.Lock()
		if !f.dropped.IsZero() {
			f.mu.Unlock()
			t.Fatalf("a buyer was not back within 10 s of the kill")
		}
		times = append(times, f.reconnects...)
		f.mu.Unlock()
	}
	time.Sleep(3 * time.Second) // a few more ticks on the survivors
	cancel()
	wg.Wait()

	slices.Sort(times)
	t.Logf("killed 1 of 3 instances at %s: %d of %d streams dropped and came back; reconnect p50 %v, p99 %v, max %v",
		killed.Format(time.TimeOnly), len(affected), n, pct(times, 50), pct(times, 99), pct(times, 100))
	if len(affected) == 0 {
		t.Fatal("no stream was on the killed instance: nginx did not spread them")
	}
	if pct(times, 100)-pct(times, 0) < 500*time.Millisecond && len(times) > 10 {
		t.Fatalf("reconnects came in a stampede (spread %v): the retry is not jittered", pct(times, 100)-pct(times, 0))
	}
	dups := 0
	for _, f := range fs {
		dups += f.dups
		if f.rankWentUp {
			t.Fatal("a buyer saw their position go up")
		}
		if len(f.tokens) > 1 {
			t.Fatal("a buyer was admitted twice")
		}
	}
	if dups != 0 {
		t.Fatalf("%d duplicate events across the reconnects", dups)
	}
	t.Logf("duplicates 0; positions lost 0 (a reconnect gets the current position at once, and none went up)")
	d.audit(name)
}

// startFollowers opens n buyers' streams (100 at a time) and waits until
// every one has had its first event.
func startFollowers(ctx context.Context, t *testing.T, url string, n int) ([]*follower, *sync.WaitGroup) {
	t.Helper()
	fs := make([]*follower, n)
	wg := &sync.WaitGroup{}
	for i := range fs {
		fs[i] = newFollower(url)
		wg.Go(func() { fs[i].run(ctx) })
		if i%100 == 99 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	for deadline := time.Now().Add(60 * time.Second); countConnected(fs) < n && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if c := countConnected(fs); c < n {
		t.Fatalf("only %d of %d streams up", c, n)
	}
	return fs, wg
}

func countConnected(fs []*follower) int {
	n := 0
	for _, f := range fs {
		if f.connected.Load() {
			n++
		}
	}
	return n
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(float64(len(d)-1) * p / 100)
	return d[i].Round(time.Millisecond)
}
