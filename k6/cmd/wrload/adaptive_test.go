package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestAdaptiveSmoke runs wrload adaptive briefly against the real server
// in reverse-proxy mode, in a Redis namespace of its own (the controller
// decides for every adaptive room of its namespace): a line of buyers
// through the proxy to the knee shop, whose answers are the room's
// signal. The controller decides for the room every second: the run
// records its decisions, serves buyers and prints its figures and plot.
func TestAdaptiveSmoke(t *testing.T) {
	shopAddr, proxyAddr := servicetest.FreeAddr(t), servicetest.FreeAddr(t)
	s := startServer(t, 100*time.Millisecond, "ORIGIN_URL=http://"+shopAddr, "PROXY_ADDR="+proxyAddr,
		"REDIS_NAMESPACE=wr:adaptive-smoke-test-"+strconv.Itoa(os.Getpid())) // two runs at once share no room
	// The controller decides once the server is ready (its migrations
	// run): the run starts then, so that its seconds are the controller's.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was not ready within 20 s: %v", err)
		}
	}
	dir := t.TempDir()
	out, plot := filepath.Join(dir, "run.json"), filepath.Join(dir, "adaptive.png")
	var stdout, stderr bytes.Buffer
	err := adaptiveCommand(context.Background(), []string{"-mode", "react", "-url", s.base, "-proxy", "http://" + proxyAddr, "-metrics-url", s.metrics,
		"-shop", shopAddr, "-admin-token", testAdmin, "-room", "smoke", "-schedule", "100/5s,5/3s", "-work", "200ms",
		"-max-wait", "3s", "-min-rate", "5", "-max-rate", "120", "-target", "1s", "-line", "60", "-source-ips", "4",
		"-timeout", "1m", "-json", out, "-plot", plot, "-progress", "1s"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("\n%s", stdout.String())
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var run adaptiveRun
	if err := json.Unmarshal(b, &run); err != nil || len(run.Runs) != 1 || run.Figures == nil {
		t.Fatalf("the -json file: %v: %s", err, b)
	}
	secs := run.Runs[0].Seconds
	if len(secs) < 7 {
		t.Fatalf("%d seconds recorded, want the schedule's 8", len(secs))
	}
	// How far the rate rose and how soon it was cut are the controller's
	// figures on this machine (BENCHMARKS.md), not bounds of this test: its
	// decisions are tested on simulated shops in server/adapt. The run must
	// have served buyers, and recorded the controller's decisions: without
	// a controller deciding, no second has a reason.
	served, decided := 0, 0
	for _, sec := range secs {
		served += sec.Served
		if sec.Reason != "" && sec.Reason != "unread" {
			decided++
		}
	}
	t.Logf("%d seconds, %d served, %d with a decision", len(secs), served, decided)
	if served == 0 {
		t.Fatal("no buyer reached the shop")
	}
	if decided == 0 {
		t.Fatalf("no second recorded a decision of the controller: %+v", secs)
	}
	if !strings.Contains(stdout.String(), "react: p95 back under the target") {
		t.Fatalf("no figures printed:\n%s", stdout.String())
	}
	if st, err := os.Stat(plot); err != nil || st.Size() < 10000 {
		t.Fatalf("no plot: %v", err)
	}
}
