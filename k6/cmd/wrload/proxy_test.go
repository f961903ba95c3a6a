package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestProxyOverhead runs the proxy tool against the real server in
// reverse-proxy mode: every leg reaches the tool's own origin (the
// protected one with the session the tool got through the room's line and
// the hand-off), and each gives figures.
func TestProxyOverhead(t *testing.T) {
	originAddr, proxyAddr := servicetest.FreeAddr(t), servicetest.FreeAddr(t)
	srv := startServer(t, 100*time.Millisecond, "ORIGIN_URL=http://"+originAddr, "PROXY_ADDR="+proxyAddr)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ToolsDB))
	name := servicetest.RoomName(t, rdb)
	var stdout bytes.Buffer
	err := proxyCommand(context.Background(), []string{"-origin", originAddr, "-proxy", "http://" + proxyAddr,
		"-url", srv.base, "-admin-token", testAdmin, "-room", name,
		"-c", "2", "-n", "200", "-d", "10s", "-rounds", "2", "-json"}, &stdout, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var run proxyRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if run.Protected == nil {
		t.Fatal("no protected leg")
	}
	for name, leg := range map[string]proxyLeg{"direct": run.Direct, "proxy": run.Proxy, "protected": *run.Protected} {
		if leg.Requests != 400 || leg.Status[200] != 400 || leg.P50 <= 0 || leg.P99 < leg.P50 || leg.RPS <= 0 {
			t.Fatalf("%s leg: %+v", name, leg)
		}
	}
	if run.Rounds != 2 {
		t.Fatalf("rounds %d", run.Rounds)
	}
	t.Logf("%s", stdout.String())
	if _, err := queue.New(rdb, srv.ns).Room(context.Background(), name); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("the tool's room was not deleted: %v", err)
	}

	// A proxy that serves another origin is refused, not measured.
	err = proxyCommand(context.Background(), []string{"-origin", servicetest.FreeAddr(t), "-proxy", "http://" + proxyAddr, "-n", "10"},
		io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not this run's origin") {
		t.Fatalf("a proxy of another origin: %v", err)
	}
}
