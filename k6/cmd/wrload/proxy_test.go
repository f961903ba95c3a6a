package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestProxyOverhead runs the proxy tool against the real server in
// reverse-proxy mode: both legs reach the tool's own origin, and each
// gives figures.
func TestProxyOverhead(t *testing.T) {
	originAddr, proxyAddr := servicetest.FreeAddr(t), servicetest.FreeAddr(t)
	startServer(t, time.Second, "ORIGIN_URL=http://"+originAddr, "PROXY_ADDR="+proxyAddr)
	var stdout bytes.Buffer
	err := proxyCommand(context.Background(), []string{"-origin", originAddr, "-proxy", "http://" + proxyAddr,
		"-c", "2", "-n", "200", "-d", "10s", "-rounds", "2", "-json"}, &stdout, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var run proxyRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	for name, leg := range map[string]proxyLeg{"direct": run.Direct, "proxy": run.Proxy} {
		if leg.Requests != 400 || leg.Status[200] != 400 || leg.P50 <= 0 || leg.P99 < leg.P50 || leg.RPS <= 0 {
			t.Fatalf("%s leg: %+v", name, leg)
		}
	}
	if run.Rounds != 2 {
		t.Fatalf("rounds %d", run.Rounds)
	}
	t.Logf("%s", stdout.String())

	// A proxy that serves another origin is refused, not measured.
	err = proxyCommand(context.Background(), []string{"-origin", servicetest.FreeAddr(t), "-proxy", "http://" + proxyAddr, "-n", "10"},
		io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not this run's origin") {
		t.Fatalf("a proxy of another origin: %v", err)
	}
}
