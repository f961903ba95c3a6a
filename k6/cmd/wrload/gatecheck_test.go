package main

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestGateCheck runs the gatecheck tool briefly against the real server
// and nginx with docs/nginx-gate.conf: one buyer through the line to a
// session, then every measurement answered as expected (the tool fails
// otherwise), with the reverse proxy too.
func TestGateCheck(t *testing.T) {
	if _, err := exec.LookPath("nginx"); err != nil {
		servicetest.Missing(t, "nginx (apt-get install nginx)", err)
	}
	shopAddr, proxyAddr := servicetest.FreeAddr(t), servicetest.FreeAddr(t)
	s := startServer(t, 100*time.Millisecond, "ORIGIN_URL=http://"+shopAddr, "PROXY_ADDR="+proxyAddr)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ToolsDB))
	room := servicetest.RoomName(t, rdb)
	var stdout bytes.Buffer
	err := gatecheckCommand(context.Background(), []string{"-url", s.base, "-admin-token", testAdmin, "-room", room,
		"-conf", "../../../docs/nginx-gate.conf", "-shop", shopAddr, "-proxy", "http://" + proxyAddr, "-c", "2", "-d", "500ms"},
		&stdout, io.Discard)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	for _, want := range []string{"shop, direct", "nginx, unguarded", "nginx, auth_request", "waitingroom, direct    GET /gate/check",
		"reverse proxy, guarded GET /checkout", "auth_request adds p50"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q in:\n%s", want, stdout.String())
		}
	}
	t.Logf("\n%s", stdout.String())
}

// TestGateCheckDirect runs the gatecheck tool's -direct mode briefly
// against the real server, without nginx: one buyer through the line to a
// session, then alternating rounds of a hello-world server (here, in the
// tool's process) and the check, each answered as expected (the tool fails
// otherwise), and the ratio of their tails.
func TestGateCheckDirect(t *testing.T) {
	s := startServer(t, 100*time.Millisecond)
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ToolsDB))
	room := servicetest.RoomName(t, rdb)
	var stdout bytes.Buffer
	err := gatecheckCommand(context.Background(), []string{"-url", s.base, "-admin-token", testAdmin, "-room", room,
		"-direct", "-rounds", "2", "-c", "2", "-d", "300ms"}, &stdout, io.Discard)
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	for _, want := range []string{"round 1    hello-world", "round 2    GET /gate/check", "all rounds GET /gate/check",
		"check p99 / hello-world p99 = "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q in:\n%s", want, stdout.String())
		}
	}
	t.Logf("\n%s", stdout.String())
}
