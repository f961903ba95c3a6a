package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    func(Config) bool
		wantErr string
	}{
		{"defaults", nil, nil, func(c Config) bool {
			return c.ListenAddr == DefaultListenAddr && c.Tick == time.Second && c.RedisURL == "" && c.AdminToken == ""
		}, ""},
		{"env", map[string]string{"LISTEN_ADDR": ":9", "TICK": "250ms", "REDIS_URL": "redis://x:1/2"}, nil, func(c Config) bool {
			return c.ListenAddr == ":9" && c.Tick == 250*time.Millisecond && c.RedisURL == "redis://x:1/2"
		}, ""},
		{"flag beats env", map[string]string{"TICK": "250ms"}, []string{"-tick", "2s"}, func(c Config) bool { return c.Tick == 2*time.Second }, ""},
		{"bad tick env", map[string]string{"TICK": "soon"}, nil, nil, "TICK"},
		{"tick too short", nil, []string{"-tick", "1ms"}, nil, "TICK"},
		{"short secret", map[string]string{"SECRET_KEY": "abc"}, nil, nil, "SECRET_KEY"},
		{"short admin token", map[string]string{"ADMIN_TOKEN": "abc"}, nil, nil, "ADMIN_TOKEN"},
		{"stray argument", nil, []string{"extra"}, nil, "unexpected"},
		{"unknown flag", nil, []string{"-nope"}, nil, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(c) {
				t.Fatalf("unexpected config %+v", c)
			}
		})
	}
}
