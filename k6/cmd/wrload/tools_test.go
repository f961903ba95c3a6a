package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"waitingroom/k6"
	"waitingroom/server/servicetest"
)

// TestAuxiliaryTools runs plot, redis-memory and sse-reference briefly.
func TestAuxiliaryTools(t *testing.T) {
	t.Run("plot", func(t *testing.T) {
		dir := t.TempDir()
		run := burstRun{Mode: "queue", Timeline: []k6.Second{{T: 0, Admitted: 0}, {T: 1, Admitted: 40, Orders: 40, OrderP95: 800 * time.Millisecond}, {T: 2, Admitted: 40, Orders: 39, OrderP95: 900 * time.Millisecond}}}
		b, _ := json.Marshal(run)
		in := filepath.Join(dir, "run.json")
		os.WriteFile(in, b, 0o644)
		out := filepath.Join(dir, "out.png")
		var buf bytes.Buffer
		if err := plotCommand(context.Background(), []string{"-in", in, "-out", out}, &buf, &buf); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil || img.Bounds().Dx() < 400 {
			t.Fatalf("plot is not a PNG of a useful size: %v", err)
		}
	})
	t.Run("redis-memory", func(t *testing.T) {
		servicetest.Redis(t)
		var buf bytes.Buffer
		err := memoryCommand(context.Background(), []string{"-redis-url", servicetest.RedisURLDB(t, 11), "-n", "2000"}, &buf, &buf)
		if err != nil || !strings.Contains(buf.String(), "2000 waiting visitors") || !strings.Contains(buf.String(), "bare ZSET") {
			t.Fatalf("%v: %s", err, buf.String())
		}
	})
	t.Run("sse-reference", func(t *testing.T) {
		addr := servicetest.FreeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- referenceCommand(ctx, []string{"-listen", addr, "-tick", "200ms"}, &bytes.Buffer{}, &bytes.Buffer{})
		}()
		time.Sleep(200 * time.Millisecond)
		rep, err := k6.Soak{BaseURL: "http://" + addr, MetricsURL: "http://" + addr + "/metrics", Room: "r", N: 10, Ramp: 100, Hold: 1500 * time.Millisecond,
			Settle: 200 * time.Millisecond, SourceIPs: 2}.Run(context.Background())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if rep.Connected != 10 || rep.Ticks < 3 || rep.RSSBefore <= 0 {
			t.Fatalf("soak of the reference: %+v", rep)
		}
	})
}

// TestLoadtestFailsLoudly: a load whose answers are mostly not the
// expected status (here the per-IP limit's 429s) exits non-zero with a
// line that says so; a clean one exits 0.
func TestLoadtestFailsLoudly(t *testing.T) {
	limited := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/limited" {
			limited++
			if limited > 5 {
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		path string
		code int
		want string
	}{
		{"/limited", 1, "wrload: FAILED: loadtest load: "},
		{"/fine", 0, "status map[200:"},
	} {
		cmd := exec.Command(os.Args[0], "loadtest", "-url", srv.URL+tt.path, "-method", "GET", "-c", "2", "-n", "200")
		cmd.Env = append(os.Environ(), "WR_RUN_MAIN=1")
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != tt.code || !strings.Contains(string(out), tt.want) {
			t.Fatalf("%s: exit %d, want %d and %q:\n%s", tt.path, cmd.ProcessState.ExitCode(), tt.code, tt.want, out)
		}
		if tt.code != 0 && !strings.Contains(string(out), "195 of 200 answers (97.50%) were unexpected") {
			t.Fatalf("the failure does not say what went wrong:\n%s", out)
		}
	}
}
