package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"waitingroom/k6"
	"waitingroom/server/servicetest"
)

func status(t *testing.T, c *http.Client, method, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // the API takes JSON bodies only
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDrillRedisRestart: Redis (AOF everysec) dies mid-sale and comes
// back. Meanwhile enters and orders answer 503 with a clear error, no
// instance crashes, and every page is told of the outage. A quarter of the
// pages lose their streams then (a change of network) and reconnect
// during the outage or as Redis comes back: no reconnect is refused (an
// instance that cannot read Redis holds the stream and tells of the
// outage). Within 5 s of Redis' return every page gets its position again,
// with ranks as before, and no acknowledged enter is lost.
func TestDrillRedisRestart(t *testing.T) {
	r := servicetest.StartRedisServer(t)
	d := newDrill(t, 2, r.URL())
	name := "restart"
	d.room(name, map[string]any{"rate": 1, "abandonAfterSeconds": 0, "paused": true})
	n := 40
	if *drillFull {
		n = 1000
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs, wg := startFollowers(ctx, t, d.url+"/r/"+name+"/events", n)
	// A buyer with a cookie, to order during the outage.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	if got, body := status(t, c, "POST", d.url+"/api/rooms/"+name+"/queue", "", nil); got != 200 {
		t.Fatalf("enter: %d %s", got, body)
	}
	r.WaitAOFWritten() // every acknowledged enter survives the crash
	before := d.audit(name)
	ranks := make([]int64, n)
	for i, f := range fs {
		f.mu.Lock()
		ranks[i] = f.lastRank
		f.mu.Unlock()
	}

	r.Crash()
	down := time.Now()
	for deadline := time.Now().Add(duration(15*time.Second, 60*time.Second)); ; time.Sleep(20 * time.Millisecond) {
		told := 0
		for _, f := range fs {
			f.mu.Lock()
			if f.outages > 0 {
				told++
			}
			f.mu.Unlock()
		}
		if told == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pages were told of the outage (they show Reconnecting…)", told, n)
		}
	}
	// A quarter of the pages lose their streams, one after another over
	// cutSpan, as pages whose network changes do. Each reconnects after
	// its retry (2 to 5 s): some while Redis is down, some as it comes
	// back, when the Redis client may still refuse, some after.
	cutSpan := duration(2*time.Second, 5*time.Second)
	cut := func(i int) bool { return i%4 == 0 }
	cuts := make(chan struct{})
	go func() {
		defer close(cuts)
		start := time.Now()
		for k, i := 0, 0; i < n; k, i = k+1, i+4 {
			time.Sleep(time.Until(start.Add(cutSpan * time.Duration(k) / time.Duration((n+3)/4))))
			fs[i].cut()
		}
	}()
	checks := []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
		code                     string
	}{
		{"enter", "POST", "/api/rooms/" + name + "/queue", "", nil, 503, `"unavailable"`},
		{"order", "POST", "/api/rooms/" + name + "/orders", `{}`, map[string]string{"X-Entry-Token": strings.Repeat("A", 43)}, 503, `"unavailable"`},
		{"health", "GET", "/healthz", "", nil, 503, `"unavailable"`},
	}
	for _, ch := range checks {
		got, body := status(t, c, ch.method, d.url+ch.path, ch.body, ch.hdr)
		if got != ch.want || !strings.Contains(body, ch.code) {
			t.Fatalf("%s during the outage: %d %s, want %d %s", ch.name, got, body, ch.want, ch.code)
		}
	}
	<-cuts
	// Redis comes back 1.5 s after the last cut: the pages cut last
	// reconnect within 3.5 s of its return, the others sooner or held.
	time.Sleep(1500 * time.Millisecond)
	for _, in := range d.instances {
		if err := in.cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("instance %s died during the Redis outage:\n%s", in.addr, in.logs.String())
		}
	}
	seen := make([]int64, n)
	for i, f := range fs {
		seen[i] = f.eventsSeen.Load()
	}

	back := time.Now() // counted from before the restart: Redis' own start is included
	r.Start()
	// Unpause so that ticks (and pushes) move the line; the first requests
	// may still meet a connection that Redis' restart broke, as an
	// operator's would, so retry for a few seconds.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		err := k6.PutRoom(context.Background(), d.url, name, drillAdmin, map[string]any{"paused": false})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admin API still fails 5 s after Redis is back: %v", err)
		}
	}
	// Wait for every page's next position; the pages still silent 5 s
	// after Redis' return are described as they are then.
	resumed := time.Duration(0)
	var stalls []string
	for deadline := back.Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		late := time.Since(back) > 5*time.Second && stalls == nil
		all := true
		for i, f := range fs {
			if f.eventsSeen.Load() != seen[i] {
				continue
			}
			all = false
			if !late {
				break
			}
			f.mu.Lock()
			stalls = append(stalls, fmt.Sprintf("page %d (cut %v): no position 5 s after Redis' return; connected %v, outages told %d, last id %q, retry %v, reconnects %d; attempts %d (the last %v after the restart began), answered 200 %d, failed %d (last: %s)",
				i, cut(i), f.connected.Load(), f.outages, f.lastID, f.retry, len(f.reconnects), f.attempts, f.lastTry.Sub(back).Round(time.Millisecond), f.opened, f.fails, f.lastFail))
			f.mu.Unlock()
		}
		if all {
			resumed = time.Since(back)
			break
		}
	}
	cancel()
	wg.Wait()
	after := d.audit(name)
	t.Logf("Redis down %v; %d of %d pages lost their streams meanwhile and reconnected; positions reached all %d pages %v after it came back; tickets before %d, after %d",
		back.Sub(down).Round(time.Millisecond), (n+3)/4, n, n, resumed.Round(time.Millisecond), before.Issued, after.Issued)
	if resumed == 0 || resumed > 5*time.Second {
		for _, s := range stalls[:min(len(stalls), 5)] {
			t.Log(s)
		}
		for _, in := range d.instances {
			t.Logf("instance %s:\n%s", in.addr, tail(in.logs.String(), 40))
		}
		t.Fatalf("positions did not reach every page within 5 s of Redis' return (%d of %d pages stalled)", len(stalls), n)
	}
	// No reconnect was refused: a stream that Redis could not serve, in
	// the outage or as Redis came back, was held and told of the outage.
	for i, f := range fs {
		f.mu.Lock()
		fails, opened, lastFail := f.fails, f.opened, f.lastFail
		f.mu.Unlock()
		if fails > 0 {
			t.Fatalf("page %d's reconnect was refused %d times (last: %s)", i, fails, lastFail)
		}
		if cut(i) && opened < 2 {
			t.Fatalf("page %d lost its stream and did not reconnect", i)
		}
	}
	if after.Issued != before.Issued {
		t.Fatalf("acknowledged enters lost: %d tickets before the crash, %d after", before.Issued, after.Issued)
	}
	for i, f := range fs {
		f.mu.Lock()
		up := f.rankWentUp
		now := f.lastRank
		f.mu.Unlock()
		if up || (ranks[i] >= 0 && now > ranks[i]) {
			t.Fatalf("buyer %d's rank went from %d to %d", i, ranks[i], now)
		}
	}
}

// tcpProxy stands between the instances and PostgreSQL, so that a drill
// can cut the database off and bring it back.
type tcpProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{addr: freeAddr(t), target: target, conns: map[net.Conn]bool{}}
	p.restore(t)
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) restore(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[up] = true, true
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
}

// cut closes the listener and every connection: the database is gone.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// TestDrillPostgresOutage: with PostgreSQL cut off, orders answer 503 (the
// token is kept) while enters, pushes and admissions go on; orders resume
// when it is back.
func TestDrillPostgresOutage(t *testing.T) {
	redisURL := servicetest.RedisURLDB(t, servicetest.ServerDB)
	dbURL := servicetest.PostgresURL(t)
	proxy := newTCPProxy(t, "127.0.0.1:5432")
	viaProxy := strings.Replace(dbURL, "127.0.0.1:5432", proxy.addr, 1) + "&connect_timeout=2"
	rdb := servicetest.RedisAt(t, redisURL)
	d := newDrill(t, 2, redisURL, "DATABASE_URL="+viaProxy)
	name := servicetest.RoomName(t, rdb)
	d.room(name, map[string]any{"rate": 20, "abandonAfterSeconds": 0})
	addProductAt(t, dbURL, name, 100) // once the migrations through the proxy are done

	buyer := func() (*http.Client, string) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		status(t, c, "POST", d.url+"/api/rooms/"+name+"/queue", "", nil)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			_, body := status(t, c, "GET", d.url+"/api/rooms/"+name+"/queue/position", "", nil)
			var p struct {
				EntryToken *string `json:"entryToken"`
			}
			json.Unmarshal([]byte(body), &p)
			if p.EntryToken != nil {
				return c, *p.EntryToken
			}
		}
		t.Fatal("buyer not admitted")
		return nil, ""
	}
	c, tok := buyer()
	proxy.cut()
	before := d.audit(name)
	got, body := status(t, c, "POST", d.url+"/api/rooms/"+name+"/orders", `{}`, map[string]string{"X-Entry-Token": tok})
	if got != 503 || !strings.Contains(body, "unavailable") {
		t.Fatalf("order with PostgreSQL down: %d %s", got, body)
	}
	// The waiting room goes on: enters, admissions and pushes.
	c2, _ := buyer()
	f := newFollower(d.url + "/r/" + name + "/events")
	fctx, stop := context.WithTimeout(context.Background(), 3*time.Second)
	f.client = c2
	f.run(fctx)
	stop()
	if f.eventsSeen.Load() == 0 {
		t.Fatal("no push while PostgreSQL was down")
	}
	if after := d.audit(name); after.Admitted <= before.Admitted {
		t.Fatal("admissions stopped with PostgreSQL")
	}
	proxy.restore(t)
	var code int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		code, body = status(t, c, "POST", d.url+"/api/rooms/"+name+"/orders", `{}`, map[string]string{"X-Entry-Token": tok})
		if code == 201 {
			break
		}
	}
	if code != 201 {
		t.Fatalf("orders did not resume with PostgreSQL back: %d %s", code, body)
	}
	t.Logf("PostgreSQL cut: orders 503 with the token kept, enters/admissions/pushes went on; back: the same token ordered (%s)", strings.TrimSpace(body))
	d.audit(name)
}

func addProductAt(t *testing.T, dbURL, room string, stock int) {
	t.Helper()
	orderDBs.Store(topTest(t), dbURL)
	addProduct(t, room, fmt.Sprintf("drill %s", room), 1000, int64(stock))
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
