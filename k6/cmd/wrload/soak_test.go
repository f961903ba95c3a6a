package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"waitingroom/k6"
	"waitingroom/server/servicetest"
)

// TestSoakAcrossProcesses runs the soak tool's parent over two child
// processes (this test binary, re-executed as the real command) and checks
// the merged report.
func TestSoakAcrossProcesses(t *testing.T) {
	srv := startServer(t, 200*time.Millisecond)
	name := testRoom(t, srv, 1)
	t.Setenv("WR_RUN_MAIN", "1") // children run main(), not the tests
	var out, progress servicetest.SyncBuffer
	err := soakCommand(context.Background(), []string{"-url", srv.base, "-metrics-url", srv.metrics, "-room", name, "-n", "20", "-ramp", "100",
		"-hold", "3s", "-settle", "300ms", "-source-ips", "4", "-procs", "2", "-progress", "250ms"}, &out, &progress)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	// No event twice; lost events are counted by silence, a figure (see
	// TestSoakSmoke).
	for _, want := range []string{"over 2 processes", "20 connected, 0 failed", "), duplicates 0"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %q", want)
		}
	}
	// The children's progress lines reach the parent's stderr as they come.
	for _, want := range []string{"child 0: soak holding", "child 1: soak holding", "of 10 connected"} {
		if !strings.Contains(progress.String(), want) {
			t.Fatalf("progress lacks %q:\n%s", want, progress.String())
		}
	}
}

// TestSoakAcrossServers spreads one soak over two servers sharing a Redis
// and two child processes: every visitor i goes to server i mod 2, and the
// report sums the servers and lists each one's share.
func TestSoakAcrossServers(t *testing.T) {
	srvs := []server{startServer(t, 200*time.Millisecond), startServer(t, 200*time.Millisecond)}
	name := testRoom(t, srvs[0], 1)
	t.Setenv("WR_RUN_MAIN", "1")
	var out, progress servicetest.SyncBuffer
	err := soakCommand(context.Background(), []string{"-url", srvs[0].base + "," + srvs[1].base, "-metrics-url", srvs[0].metrics + "," + srvs[1].metrics,
		"-room", name, "-n", "20", "-ramp", "100", "-hold", "3s", "-settle", "300ms", "-source-ips", "4", "-procs", "2", "-tick", "200ms"}, &out, &progress)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	// No event twice; lost events are counted by silence, a figure (see
	// TestSoakSmoke).
	for _, want := range []string{"20 connected, 0 failed", "), duplicates 0", "(summed over 2 servers)", "server writes per tick: ",
		"server 0 " + srvs[0].base + ": RSS ", "server 1 " + srvs[1].base + ": RSS ", ", 10 streams, ", "  front p50 ", "per waiting visitor per second (20 streams)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("report lacks %q", want)
		}
	}
	if strings.Count(out.String(), ", 10 streams, ") != 2 {
		t.Fatal("the visitors are not split evenly over the servers")
	}
}

// TestSoakSmoke runs the soak tool briefly, in both modes, against a real
// server on loopback: tiny N, a couple of seconds.
func TestSoakSmoke(t *testing.T) {
	srv := startServer(t, 200*time.Millisecond)
	tests := []struct {
		name string
		poll bool
	}{{"sse", false}, {"poll", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := testRoom(t, srv, 2)
			if !tt.poll {
				holdStreams(t, srv, name, 5) // another client's: not the soak's
			}
			var progress servicetest.SyncBuffer
			rep, err := k6.Soak{BaseURL: srv.base, MetricsURL: srv.metrics, Room: name, N: 20, Ramp: 200, Hold: 2 * time.Second,
				Settle: 300 * time.Millisecond, SourceIPs: 4, Poll: tt.poll,
				Progress: &progress, ProgressEvery: 200 * time.Millisecond}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Log(rep.String())
			// Progress is reported while holding; how many lines a busy
			// machine's ticker writes in the 2.3 s is not this test's.
			if n := strings.Count(progress.String(), "soak holding"); n < 1 {
				t.Fatalf("no progress line while holding:\n%s", progress.String())
			}
			if !strings.Contains(progress.String(), "20 of 20 connected") {
				t.Fatalf("progress never counted every visitor:\n%s", progress.String())
			}
			if rep.Connected != 20 || rep.Failed != 0 {
				t.Fatalf("connected %d, failed %d; want 20 and 0", rep.Connected, rep.Failed)
			}
			if rep.RSSBefore <= 0 || rep.CommandsPerSec <= 0 {
				t.Fatalf("server figures missing: %+v", rep)
			}
			if tt.poll {
				if rep.PollsPerSecond <= 0 {
					t.Fatal("no polls measured")
				}
				return
			}
			if rep.ServerConns != 20 || strings.Contains(rep.String(), "other clients came or went") {
				t.Fatalf("the server gained %v SSE connections during the soak, want the soak's own 20:\n%s", rep.ServerConns, rep.String())
			}
			// "Lost" counts a stream's silences longer than its pace and a
			// tick: a figure of the soak on this machine (a loaded one is
			// late, not lossy), not a bound of this test.
			if rep.Duplicates != 0 || rep.Ticks < 1 || rep.LatencyP99 <= 0 {
				t.Fatalf("stream figures: %d duplicates, %d ticks, p99 %v (%d lost)", rep.Duplicates, rep.Ticks, rep.LatencyP99, rep.Lost)
			}
		})
	}
}

// testRoom creates a room of its own on srv, admitting rate visitors a
// second, and removes its keys when t ends.
func testRoom(t *testing.T, srv server, rate float64) string {
	t.Helper()
	name := servicetest.RoomName(t, servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ToolsDB)))
	if err := k6.PutRoom(context.Background(), srv.base, name, testAdmin, map[string]any{"title": name, "rate": rate}); err != nil {
		t.Fatal(err)
	}
	return name
}

// holdStreams opens n SSE streams on room, as other visitors would, and
// holds them until t ends. It returns once the server's gauge counts them:
// a stream's headers can reach the client a moment before the hub counts
// it, and a soak started in that moment would see it arrive as its own.
func holdStreams(t *testing.T, srv server, room string, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	before, err := k6.ScrapeSoak(ctx, srv.metrics)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.base+"/r/"+room+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream: %s", resp.Status)
		}
		t.Cleanup(func() { resp.Body.Close() })
	}
	want := before["waitingroom_sse_connections"] + float64(n)
	deadline := time.Now().Add(5 * time.Second)
	for {
		now, err := k6.ScrapeSoak(ctx, srv.metrics)
		if err != nil {
			t.Fatal(err)
		}
		if now["waitingroom_sse_connections"] >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server counts %v SSE connections, want %v", now["waitingroom_sse_connections"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSoakRefusesBadSpreads: the servers' URL lists and the share of each
// child process are checked before anything connects.
func TestSoakRefusesBadSpreads(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"more than a process holds", []string{"-n", "40000", "-procs", "2", "-url", "http://127.0.0.1:1", "-metrics-url", "http://127.0.0.1:2/metrics"},
			"n 20000 out of 1..19000 (one process's open files) (with -procs 2, each child holds 20000 visitors"},
		{"lists of different lengths", []string{"-n", "10", "-url", "http://127.0.0.1:1,http://127.0.0.1:3", "-metrics-url", "http://127.0.0.1:2/metrics"},
			"-metrics-url: 1 URLs for 2 servers"},
		{"lists of different lengths, with children", []string{"-n", "10", "-procs", "2", "-url", "http://127.0.0.1:1,http://127.0.0.1:3", "-metrics-url", "http://127.0.0.1:2/metrics"},
			"-metrics-url: 1 URLs for 2 servers"},
		{"a second server off loopback", []string{"-n", "10", "-url", "http://127.0.0.1:1,http://192.0.2.7:3", "-metrics-url", "http://127.0.0.1:2/metrics,http://127.0.0.1:4/metrics"},
			"server 1 url http://192.0.2.7:3: 192.0.2.7 is not a loopback address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errs strings.Builder
			err := soakCommand(context.Background(), tt.args, &out, &errs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}
