package e2e

import (
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/gate"
	"waitingroom/k6"
	"waitingroom/server/queue"
	"waitingroom/server/servicetest"
)

// gateDrillDB is the Redis database of the gate drills.
const gateDrillDB = 7

// gateGuard is one way of guarding the stand-in shop in the gate drill.
type gateGuard struct {
	name string
	// origin is the shop as buyers reach it: the pass's audience.
	origin string
	shop   *k6.Shop
	// serve starts serving the shop once the room and its API key exist.
	serve func(t *testing.T, room, apiKey string)
	// accessLog returns the access log of the guard's nginx ("" none).
	accessLog func() string
	protect   []string
}

// TestDrillGate: a stand-in shop behind each of the three guards (the Go
// middleware, nginx auth_request with docs/nginx-gate.conf as it ships,
// and the reverse proxy) takes a burst of buyers, 5,000 in the full drill,
// on 3 instances. Every buyer enters through the JSON API, waits for its
// ready event, takes the hand-off, posts the pass to the shop, checks out
// and, after a short hold, is done. The drill checks that every checkout
// came through the line in admission order with a redeemed pass, that no
// pass works twice, and that the room's live slots (passes and sessions)
// never exceed maxActive, sampled every 50 ms.
func TestDrillGate(t *testing.T) {
	// A short tick lets the smoke's few buyers through in seconds; the
	// full drill's 5,000 streams get a position event per tick, so its
	// tick is longer and its maxActive larger.
	buyers, rate, maxActive, tick := 200, 100.0, 10, "100ms"
	bound := 40 * time.Second
	if *drillFull {
		buyers, rate, maxActive, tick, bound = 5000, 150.0, 60, "500ms", 4*time.Minute
	}
	redisURL := servicetest.RedisURLDB(t, gateDrillDB)
	rdb := servicetest.RedisAt(t, redisURL)
	d := &drillEnv{t: t, redisURL: redisURL, dbURL: servicetest.PostgresURL(t), dir: t.TempDir(), eng: queue.New(rdb, queue.DefaultNamespace(rdb))}
	if _, err := exec.LookPath("nginx"); err != nil {
		servicetest.Missing(t, "nginx (apt-get install nginx)", err)
	}

	// The shops listen before the instances start: the reverse proxy's
	// ORIGIN_URL must be known then.
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	mwLn, ngShopLn, pxShopLn := listen(), listen(), listen()
	proxyAddr, nginxAddr := freeAddr(t), freeAddr(t)

	keyPath := writePassKey(t, d.dir)
	common := []string{"TICK=" + tick, "PASS_SIGNING_KEY=" + keyPath}
	d.startInstance(append(common, "PROXY_ADDR="+proxyAddr, "ORIGIN_URL=http://"+pxShopLn.Addr().String())...)
	d.startInstance(common...)
	d.startInstance(common...)
	d.startNginx()
	var roomURLs []string
	for _, in := range d.instances {
		roomURLs = append(roomURLs, "http://"+in.addr)
	}

	serveShop := func(ln net.Listener, h http.Handler) {
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	endClient := &http.Client{Timeout: 10 * time.Second}

	mwShop, ngShop, pxShop := &k6.Shop{}, &k6.Shop{}, &k6.Shop{}
	var ngx *k6.Nginx
	guards := []gateGuard{
		{
			name: "middleware", origin: "http://" + mwLn.Addr().String(), shop: mwShop,
			serve: func(t *testing.T, room, apiKey string) {
				g, err := gate.New(gate.Options{RoomURL: d.url, Room: room, APIKey: apiKey, Audience: "http://" + mwLn.Addr().String(),
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					t.Fatal(err)
				}
				mwShop.End = g.End
				shop := mwShop.Handler()
				protected := g.Protect(shop)
				mux := http.NewServeMux()
				mux.Handle("/", shop)
				mux.Handle("/checkout", protected)
				mux.Handle("/checkout/", protected)
				mux.Handle(gate.EnterPath, protected)
				serveShop(mwLn, mux)
			},
		},
		{
			name: "nginx", origin: "http://" + nginxAddr, shop: ngShop,
			serve: func(t *testing.T, room, apiKey string) {
				ngShop.End = k6.EndSessionAPI(endClient, d.url, room, apiKey)
				serveShop(ngShopLn, ngShop.Handler())
				ngx = startGateNginx(t, filepath.Join(repoRoot, "docs/nginx-gate.conf"), nginxAddr, d.instances, ngShopLn.Addr().String(), room, d.url)
			},
			accessLog: func() string { return ngx.AccessLog() },
		},
		{
			name: "proxy", origin: "http://" + proxyAddr, shop: pxShop, protect: []string{"/checkout"},
			serve: func(t *testing.T, room, apiKey string) {
				pxShop.End = k6.EndSessionAPI(endClient, d.url, room, apiKey)
				serveShop(pxShopLn, pxShop.Handler())
				// The proxy reads the rooms' protect prefixes every 2 s.
				c := k6.NewGateClient(nil)
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					resp, err := c.Get("http://" + proxyAddr + "/checkout")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusSeeOther {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the reverse proxy does not guard /checkout 10 s after the room protected it: %d", resp.StatusCode)
					}
				}
			},
		},
	}
	for _, g := range guards {
		t.Run(g.name, func(t *testing.T) {
			room := servicetest.RoomName(t, rdb)
			settings := map[string]any{"title": "Gate " + g.name, "rate": rate, "maxActive": maxActive, "abandonAfterSeconds": 0,
				"tokenTTLSeconds": 300, "targetURL": g.origin + "/checkout", "sessionSeconds": 60, "sessionMode": "idle"}
			if g.protect != nil {
				settings["protect"] = g.protect
			}
			d.room(room, settings)
			key, err := k6.NewAPIKey(context.Background(), d.url, room, drillAdmin)
			if err != nil {
				t.Fatal(err)
			}
			g.serve(t, room, key)
			gateBurst(t, d, g, room, roomURLs, buyers, maxActive, bound)
		})
	}
}

// gateBurst runs the burst of buyers into room through guard g and checks
// its outcome.
func gateBurst(t *testing.T, parent *drillEnv, g gateGuard, room string, roomURLs []string, buyers, maxActive int, bound time.Duration) {
	d := *parent
	d.t = t // the audit fails this subtest, not its parent
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	before := len(g.shop.Checkouts())

	// Nobody reaches the checkout without a session: no cookie goes to the
	// room, a made-up session is refused too.
	outsider := k6.NewGateClient(nil)
	for _, cookie := range []string{"", room + "." + randomID(), "other." + randomID()} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.origin+"/checkout", nil)
		if cookie != "" {
			req.Header.Set("Cookie", k6.GateCookie+"="+cookie)
		}
		resp, err := outsider.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(loc, "/r/"+room) {
			t.Fatalf("%s: GET /checkout with cookie %q: %d to %q, want 303 to the room", g.name, cookie, resp.StatusCode, loc)
		}
	}

	// Sample the room's live slots every 50 ms while the buyers run.
	var peakSlots, peakSessions, samples atomic.Int64
	var sampleErr atomic.Value
	sampling, stopSampling := context.WithCancel(ctx)
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampling.Done():
				return
			case <-tick.C:
			}
			st, err := d.eng.Stats(sampling, room)
			if err != nil {
				if sampling.Err() == nil {
					sampleErr.Store(err)
				}
				continue
			}
			n, err := d.eng.ActiveSessions(sampling, room)
			if err != nil {
				if sampling.Err() == nil {
					sampleErr.Store(err)
				}
				continue
			}
			samples.Add(1)
			storeMax(&peakSlots, st.Active)
			storeMax(&peakSessions, int64(n))
		}
	})

	tr := &http.Transport{MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second, DisableCompression: true}
	defer tr.CloseIdleConnections()
	trips := make([]k6.GateTrip, buyers)
	errs := make([]error, buyers)
	var wg sync.WaitGroup
	start := time.Now()
	within := duration(time.Second, 3*time.Second)
	for i := range buyers {
		at := start.Add(rand.N(within))
		wg.Go(func() {
			select {
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			case <-time.After(time.Until(at)):
			}
			b := k6.GateBuyer{RoomURL: roomURLs[i%len(roomURLs)], Room: room, Client: k6.NewGateClient(tr)}
			trips[i], errs[i] = b.Run(ctx, 20*time.Millisecond+rand.N(100*time.Millisecond))
		})
	}
	wg.Wait()
	took := time.Since(start)
	stopSampling()
	sampler.Wait()
	if err, _ := sampleErr.Load().(error); err != nil {
		t.Errorf("%s: sampling the room: %v", g.name, err)
	}
	var failed []error
	var retried k6.Retries
	polled := 0
	for i, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
		retried.Add(trips[i].Retries)
		if trips[i].Polled {
			polled++
		}
	}
	t.Logf("%s: %d buyers through the line to the shop in %v (%d failed; sent again after a 503: %+v); live slots peaked at %d, sessions at %d, maxActive %d (%d samples)",
		g.name, buyers-len(failed), took.Round(time.Millisecond), len(failed), retried, peakSlots.Load(), peakSessions.Load(), maxActive, samples.Load())
	if polled > 0 {
		// Not the gate's doing: the room's SSE hub lost these ready
		// events (their streams stayed open and silent). Said loudly, not
		// failed here; the buyers went on from the position API.
		t.Logf("LOST READY EVENTS: %d of %d buyers' streams never brought their ready event; the position API had it", polled, buyers)
		for _, in := range d.instances {
			var warns []string
			for _, l := range strings.Split(in.logs.String(), "\n") {
				if strings.Contains(l, "sse: resolve") || strings.Contains(l, "sse: resync") {
					warns = append(warns, l)
				}
			}
			if len(warns) > 0 {
				t.Logf("instance %s logged %d SSE resolve/resync warnings, e.g. %s", in.addr, len(warns), warns[0])
			}
		}
	}
	if len(failed) > 0 {
		kinds := map[string]int{}
		for _, err := range failed {
			msg := err.Error()
			if i := strings.IndexAny(msg, "\n<"); i > 0 {
				msg = msg[:i]
			}
			kinds[msg]++
		}
		t.Fatalf("%s: %d of %d buyers did not get through: %v", g.name, len(failed), buyers, kinds)
	}

	// Active sessions never exceeded maxActive, and the sampler saw them.
	if peakSlots.Load() > int64(maxActive) || peakSessions.Load() > int64(maxActive) {
		t.Errorf("%s: %d live slots and %d sessions at a peak, over maxActive %d", g.name, peakSlots.Load(), peakSessions.Load(), maxActive)
	}
	if peakSessions.Load() == 0 || samples.Load() < int64(took/(100*time.Millisecond)) {
		t.Errorf("%s: %d samples over %v saw no session at all: the sampling measured nothing", g.name, samples.Load(), took)
	}

	// In order: a lower ticket was never admitted after a higher one. The
	// ready event's passExpiresAt is the admission time (Redis' clock)
	// plus the room's one token TTL.
	byTicket := slices.Clone(trips)
	slices.SortFunc(byTicket, func(a, b k6.GateTrip) int { return int(a.Ticket - b.Ticket) })
	inversions := 0
	for i, trip := range byTicket {
		if trip.PassExpiresAt == 0 {
			t.Fatalf("%s: ticket %d's ready event carries no passExpiresAt", g.name, trip.Ticket)
		}
		if i > 0 && trip.Ticket == byTicket[i-1].Ticket {
			t.Fatalf("%s: two buyers hold ticket %d", g.name, trip.Ticket)
		}
		if i > 0 && trip.PassExpiresAt < byTicket[i-1].PassExpiresAt {
			if inversions++; inversions <= 5 {
				t.Errorf("%s: ticket %d admitted at %d, before ticket %d at %d", g.name, trip.Ticket, trip.PassExpiresAt,
					byTicket[i-1].Ticket, byTicket[i-1].PassExpiresAt)
			}
		}
		if trip.HandOff.ReferrerPolicy != "no-referrer" {
			t.Fatalf("%s: the hand-off page's Referrer-Policy is %q", g.name, trip.HandOff.ReferrerPolicy)
		}
	}
	if inversions > 0 {
		t.Errorf("%s: %d admissions out of ticket order", g.name, inversions)
	}

	// Every checkout was a buyer's redeemed session, once.
	sessions := make(map[string]int64, buyers)
	for _, trip := range trips {
		sessions[trip.Session] = trip.Ticket
	}
	if len(sessions) != buyers {
		t.Fatalf("%s: %d distinct sessions for %d buyers", g.name, len(sessions), buyers)
	}
	checkouts := g.shop.Checkouts()[before:]
	seen := map[string]bool{}
	for _, c := range checkouts {
		if _, ok := sessions[c.Session]; !ok {
			t.Fatalf("%s: a checkout with session %q, which no buyer redeemed", g.name, c.Session)
		}
		if seen[c.Session] {
			t.Fatalf("%s: session %q checked out twice", g.name, c.Session)
		}
		seen[c.Session] = true
	}
	if len(checkouts) != buyers {
		t.Fatalf("%s: the shop saw %d checkouts from %d buyers", g.name, len(checkouts), buyers)
	}

	// No pass works twice: each one again, from another cookie jar.
	replays := &http.Transport{MaxIdleConnsPerHost: 32} // shares no connection with the buyers'
	defer replays.CloseIdleConnections()
	var replayed atomic.Int64
	var replayErr atomic.Value
	sem := make(chan struct{}, 32)
	for _, trip := range trips {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := k6.PostHandOff(ctx, k6.NewGateClient(replays), trip.HandOff, d.url)
			if err != nil {
				replayErr.Store(err)
				return
			}
			if res.Session != "" || res.Status == http.StatusSeeOther {
				replayed.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := replayErr.Load().(error); err != nil {
		t.Fatalf("%s: replaying the passes: %v", g.name, err)
	}
	if n := replayed.Load(); n > 0 {
		t.Errorf("%s: %d of %d passes worked a second time", g.name, n, buyers)
	}
	if n := len(g.shop.Checkouts()) - before; n != buyers {
		t.Errorf("%s: %d checkouts after the replays, want %d", g.name, n, buyers)
	}

	// Every buyer said done: the slots came back.
	if n, err := d.eng.ActiveSessions(context.Background(), room); err != nil || n != 0 {
		t.Errorf("%s: %d sessions still live after every buyer was done (%v)", g.name, n, err)
	}
	d.audit(room)

	// The pass stays out of the access log.
	if g.accessLog != nil {
		log := g.accessLog()
		if !strings.Contains(log, "/_waitingroom/enter") {
			t.Errorf("%s: the access log has no hand-off: %.300s", g.name, log)
		}
		if jws := regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`).FindString(log); jws != "" {
			t.Fatalf("%s: a pass is in the access log: %.40s…", g.name, jws)
		}
	}
}

// TestDrillGateNginxDown: with docs/nginx-gate.conf and waitingroom
// unreachable, the protected checkout answers the retry page (503) and
// the rest of the shop is served; with the documented fail-open line in
// place of the retry page, the checkout is served.
func TestDrillGateNginxDown(t *testing.T) {
	if _, err := exec.LookPath("nginx"); err != nil {
		servicetest.Missing(t, "nginx (apt-get install nginx)", err)
	}
	shop := &k6.Shop{}
	srv := &http.Server{Handler: shop.Handler(), ReadHeaderTimeout: 5 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	dead := &instance{addr: freeAddr(t)} // nothing listens there

	closedConf, err := os.ReadFile(filepath.Join(repoRoot, "docs/nginx-gate.conf"))
	if err != nil {
		t.Fatal(err)
	}
	// The fail-open alternative, as the file's comment says: its return
	// line replaced by the commented proxy_pass line.
	openConf, n := failOpenVariant(string(closedConf))
	if n != 1 {
		t.Fatalf("docs/nginx-gate.conf: %d fail-open lines to swap in, want 1", n)
	}
	openPath := filepath.Join(t.TempDir(), "nginx-gate-open.conf")
	os.WriteFile(openPath, []byte(openConf), 0o644)

	tests := []struct {
		conf     string
		path     string
		status   int
		contains string
	}{
		{filepath.Join(repoRoot, "docs/nginx-gate.conf"), "/checkout", http.StatusServiceUnavailable, "Please retry"},
		{filepath.Join(repoRoot, "docs/nginx-gate.conf"), "/", http.StatusOK, "the shop"},
		{openPath, "/checkout", http.StatusOK, "checkout"},
		{openPath, "/", http.StatusOK, "the shop"},
	}
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	started := map[string]string{}
	for _, tt := range tests {
		base, ok := started[tt.conf]
		if !ok {
			addr := freeAddr(t)
			startGateNginx(t, tt.conf, addr, []*instance{dead}, ln.Addr().String(), "sale", "http://"+dead.addr)
			base = "http://" + addr
			started[tt.conf] = base
		}
		status, body := getBody(t, c, base+tt.path)
		if status != tt.status || !strings.Contains(body, tt.contains) {
			t.Errorf("%s, waitingroom down: GET %s: %d %.200q, want %d with %q", filepath.Base(tt.conf), tt.path, status, body, tt.status, tt.contains)
		}
	}
}

// failOpenVariant swaps the @gate_down location's return line for the
// commented proxy_pass line below it, and says how many it swapped.
func failOpenVariant(conf string) (string, int) {
	lines := strings.Split(conf, "\n")
	swapped := 0
	for i, l := range lines {
		if strings.TrimSpace(l) != "# proxy_pass http://shop;" {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), "return 503 ") {
				lines[j] = strings.Replace(lines[i], "# ", "", 1)
				lines[i] = ""
				swapped++
				break
			}
		}
	}
	return strings.Join(lines, "\n"), swapped
}

// startGateNginx runs nginx from the gate config template conf on listen,
// in front of the shop at shopAddr and the waitingroom instances.
func startGateNginx(t *testing.T, conf, listen string, instances []*instance, shopAddr, room, roomURL string) *k6.Nginx {
	t.Helper()
	var ups []string
	for _, in := range instances {
		ups = append(ups, "server "+in.addr+" max_fails=1 fail_timeout=5s;")
	}
	dir := t.TempDir()
	n, err := k6.StartNginx(context.Background(), conf, dir, map[string]string{
		"LISTEN": listen, "UPSTREAMS": strings.Join(ups, "\n        "), "SHOP_UPSTREAMS": "server " + shopAddr + ";",
		"ROOM": room, "ROOM_URL": roomURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Stop()
		// The conf as shipped starts without alerts: a worker_rlimit_nofile
		// above the hard limit logs "setrlimit … failed" at every start.
		if b, _ := os.ReadFile(filepath.Join(dir, "error.log")); strings.Contains(string(b), "setrlimit") {
			t.Errorf("%s: nginx could not set its descriptor limit: %s", conf, b)
		}
	})
	return n
}

// writePassKey writes a new Ed25519 pass signing key as openssl genpkey
// does (PKCS#8 PEM) and returns its path.
func writePassKey(t *testing.T, dir string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pass-key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func randomID() string {
	b := make([]byte, 16)
	crand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func storeMax(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}

func getBody(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
