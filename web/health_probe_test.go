package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/adapt"
	"waitingroom/server/egress"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// healthStandIn is a shop's health endpoint: each path answers as its
// name says.
func healthStandIn(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	answer := func(path, contentType, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			io.WriteString(w, body)
		})
	}
	answer("/json", "application/json", `{"status":"ok","load":0.75,"queue":3}`)
	answer("/json-overloaded", "application/json", " {\"load\": 1.5}\n")
	answer("/json-no-load", "application/json", `{"status":"ok"}`)
	answer("/json-string-load", "application/json", `{"load":"0.5"}`)
	answer("/json-negative", "application/json", `{"load":-1}`)
	answer("/prom", "text/plain; version=0.0.4", "# HELP load The shop's load.\n# TYPE load gauge\nload 0.4\nother_total 12\n")
	answer("/prom-series", "text/plain", "# TYPE waitingroom_load gauge\nwaitingroom_load{pool=\"a\"} 0.2\nwaitingroom_load{pool=\"b\"} 1.1\nload 0.1\n")
	answer("/prom-untyped", "text/plain", "load 0.6\n")
	answer("/prom-counter", "text/plain", "# TYPE load counter\nload 3\n")
	answer("/prom-nan", "text/plain", "load NaN\n")
	answer("/prom-other", "text/plain", "# TYPE cpu gauge\ncpu 0.9\n")
	answer("/garbage", "text/html", "<html><body>OK</body></html>")
	answer("/empty", "text/plain", "")
	mux.HandleFunc("/oversized", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "# "+strings.Repeat("x", healthBodyMax)+"\nload 0.1\n")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
		io.WriteString(w, `{"load":0.1}`)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/json", http.StatusFound)
	})
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"load":0}`, http.StatusServiceUnavailable)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestHealthProbeAnswers: the probe reads a JSON "load" or a Prometheus
// gauge load / waitingroom_load (the highest series), and refuses
// anything else: garbage, a missing, non-numeric, negative or NaN
// figure, an answer over 64 KiB, one slower than the timeout, a redirect
// (never followed), a status but 200, a URL that is not http(s). Its
// errors never hold the URL's query.
func TestHealthProbeAnswers(t *testing.T) {
	srv := healthStandIn(t)
	probe := NewHealthProbe()
	for _, tt := range []struct {
		path    string
		want    float64
		wantErr string // "" for an answer
	}{
		{"/json", 0.75, ""},
		{"/json-overloaded", 1.5, ""},
		{"/prom", 0.4, ""},
		{"/prom-series", 1.1, ""},
		{"/prom-untyped", 0.6, ""},
		{"/json-no-load", 0, `no numeric "load"`},
		{"/json-string-load", 0, "JSON"},
		{"/json-negative", 0, "load -1"},
		{"/prom-counter", 0, "want a gauge"},
		{"/prom-nan", 0, "finite"},
		{"/prom-other", 0, "no waitingroom_load or load"},
		{"/garbage", 0, "neither a JSON object nor Prometheus text"},
		{"/empty", 0, "no waitingroom_load or load"},
		{"/oversized", 0, "over 65536 bytes"},
		{"/slow", 0, "health: get"},
		{"/redirect", 0, "redirects are not followed"},
		{"/down", 0, "status 503"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			start := time.Now()
			load, err := probe.Load(context.Background(), srv.URL+tt.path+"?token=s3cret")
			if took := time.Since(start); took > adapt.HealthTimeout+500*time.Millisecond {
				t.Fatalf("the poll took %v: unbounded", took)
			}
			switch {
			case tt.wantErr == "" && (err != nil || load != tt.want):
				t.Fatalf("load %g, %v; want %g", load, err, tt.want)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("load %g, %v; want an error with %q", load, err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "s3cret"):
				t.Fatalf("the error %q shows the URL's query", err)
			}
		})
	}
	for _, u := range []string{"", "ftp://" + strings.TrimPrefix(srv.URL, "http://") + "/json", "https://user:pw@shop.example/x"} {
		if _, err := probe.Load(context.Background(), u); err == nil {
			t.Errorf("%q: polled, want refused", u)
		}
	}
}

// TestHealthProbeNeverReachesInternalAddresses: the probe refuses a
// link-local or metadata address in any form before it dials, and its
// dialer refuses one that a redirect leads to, even for a client that
// follows redirects.
func TestHealthProbeNeverReachesInternalAddresses(t *testing.T) {
	probe := NewHealthProbe()
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/latest/meta-data/",
		"http://2852039166/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://100.100.100.200/latest/meta-data/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://[fe80::1]:8080/health",
	} {
		if _, err := probe.Load(t.Context(), u); !errors.Is(err, egress.ErrRefused) {
			t.Errorf("%s: %v, want refused", u, err)
		}
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	if _, err := probe.Load(t.Context(), srv.URL); err == nil || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Fatalf("the probe: %v, want the redirect refused", err)
	}
	following := &http.Client{Transport: probe.client.Transport}
	resp, err := following.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, egress.ErrRefused) || !strings.Contains(err.Error(), "169.254.169.254 is a link-local/metadata address") {
		t.Fatalf("a followed redirect to the metadata address: %v, want refused at the dial", err)
	}
}

// TestHealthPollReachesTheSignal: the poller with the real probe, against
// a loopback stand-in, puts the adaptive room's load figure into its
// signal in Redis.
func TestHealthPollReachesTheSignal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := healthStandIn(t)
	rdb := servicetest.Redis(t)
	ns := signalNS + "-poll"
	eng := queue.New(rdb, ns)
	for _, tt := range []struct {
		path string
		load float64
		has  bool
	}{{"/prom-series", 1.1, true}, {"/garbage", 0, false}} {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			name := servicetest.RoomName(t, rdb)
			set := room.Defaults(name)
			set.Rate = 50
			set.Adapt = room.DefaultAdapt()
			set.Adaptive, set.HealthURL = true, srv.URL+tt.path
			if err := eng.SaveRoom(ctx, name, set); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { eng.DeleteRoom(context.Background(), name) })
			// The poll lands in one second of a fake clock, read as that
			// second has landed.
			fc := clockwork.NewFakeClockAt(time.Now())
			p := adapt.NewHealthPoller(eng, NewHealthProbe(), rdb, ns, slog.New(slog.NewTextHandler(io.Discard, nil))).WithClock(fc)
			p.Tick(ctx)
			rd := adapt.NewReader(rdb, ns).WithClock(clockwork.NewFakeClockAt(fc.Now().Truncate(time.Second).Add(time.Second + adapt.Landed)))
			deadline := time.Now().Add(10 * time.Second) // the poll runs in the background
			for ; ; time.Sleep(20 * time.Millisecond) {
				sig, err := rd.Read(ctx, name, adapt.MaxWindow)
				if err != nil {
					t.Fatal(err)
				}
				if sig.HasLoad == tt.has && sig.Load == tt.load {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("signal load %g has %v, want %g %v", sig.Load, sig.HasLoad, tt.load, tt.has)
				}
			}
		})
	}
}

// TestAdminHealthURL: the admin API takes a room's healthURL, shows it,
// clears it with "", and answers 400 naming it for an invalid one.
func TestAdminHealthURL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	for _, tt := range []struct {
		name, value string
		status      int
		want        string
	}{
		{"set", "https://shop.example/health?token=abc", 200, "https://shop.example/health?token=abc"},
		{"user and password", "https://u:p@shop.example/health", 400, "https://shop.example/health?token=abc"},
		{"not http", "ftp://shop.example/health", 400, "https://shop.example/health?token=abc"},
		{"relative", "/health", 400, "https://shop.example/health?token=abc"},
		{"too long", "https://shop.example/" + strings.Repeat("a", room.MaxHealthURLLen), 400, "https://shop.example/health?token=abc"},
		{"the metadata address", "http://169.254.169.254/latest/meta-data/", 400, "https://shop.example/health?token=abc"},
		{"a private network", "http://10.0.3.7/health", 200, "http://10.0.3.7/health"},
		{"cleared", "", 200, ""},
	} {
		r := h.do(t, "PUT", path, fmt.Sprintf(`{"healthURL":%q}`, tt.value), auth, nil)
		if r.status != tt.status || (tt.status == 400 && !strings.Contains(r.body, "healthURL")) ||
			(tt.name == "the metadata address" && !strings.Contains(r.body, "169.254.169.254 is a link-local/metadata address")) {
			t.Fatalf("%s: %d %s, want %d", tt.name, r.status, r.body, tt.status)
		}
		var v struct {
			Settings room.Settings `json:"settings"`
		}
		h.do(t, "GET", path, "", auth, nil).json(t, &v)
		if v.Settings.HealthURL != tt.want {
			t.Fatalf("%s: healthURL %q, want %q", tt.name, v.Settings.HealthURL, tt.want)
		}
	}
}
