package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestPowTools runs natcrowd, powbot and drawshare briefly against the
// real server, trusting loopback as a proxy: each tool fails on its own
// when the crowd does not all join or the draw is not the pre-queue's
// joins; here their reports must also show the challenge at work.
func TestPowTools(t *testing.T) {
	s := startServer(t, 100*time.Millisecond, "TRUSTED_PROXIES=127.0.0.1/32,::1/128")
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, servicetest.ToolsDB))
	room := servicetest.RoomName(t, rdb)
	tests := []struct {
		name string
		run  func(ctx context.Context, args []string, stdout, stderr io.Writer) error
		args []string
		want []string
	}{
		{"natcrowd", natcrowdCommand, []string{"-room", room + "-nat", "-n", "30", "-window", "1s", "-timeout", "30s"},
			[]string{"30 buyers behind one address: 30 joined, 30 challenged", "phone-equivalent (hashes / 20000 hashes/s)"}},
		{"powbot", powbotCommand, []string{"-room", room + "-bot", "-workers", "2", "-duration", "1s", "-source", "v6-64"},
			[]string{"powbot " + room + "-bot-off (source v6-64)", "challenged 0,", "powbot (source v6-64): " + room + "-bot-auto places 1/"}},
		{"drawshare", drawshareCommand, []string{"-room", room + "-draw", "-workers", "2", "-prequeue", "3s", "-crowd-rate", "10", "-top", "50"},
			[]string{"drawshare " + room + "-draw-off (challenge off)", "drawshare " + room + "-draw-auto (challenge auto)", "bot's share of the joins"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			args := append([]string{"-url", s.base, "-admin-token", testAdmin}, tt.args...)
			if err := tt.run(context.Background(), args, &stdout, io.Discard); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("no %q in:\n%s", want, stdout.String())
				}
			}
			t.Logf("\n%s", stdout.String())
		})
	}
}
