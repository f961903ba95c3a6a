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
		{"proxies and caps", map[string]string{"TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8", "SSE_MAX_PER_IP": "7", "ENTER_RATE_PER_IP": "2.5"}, nil, func(c Config) bool {
			return len(c.TrustedProxies) == 2 && c.TrustedProxies[0].String() == "127.0.0.1/32" &&
				c.TrustedProxies[1].String() == "10.0.0.0/8" && c.SSEMaxPerIP == 7 && c.EnterRatePerIP == 2.5
		}, ""},
		{"bad proxy", map[string]string{"TRUSTED_PROXIES": "nginx"}, nil, nil, "TRUSTED_PROXIES"},
		{"bad sse cap", nil, []string{"-sse-max-per-ip", "0"}, nil, "SSE_MAX_PER_IP"},
		{"database", map[string]string{"DATABASE_URL": "postgres://x/y", "DB_MAX_CONNS": "12"}, nil, func(c Config) bool {
			return c.DatabaseURL == "postgres://x/y" && c.DBMaxConns == 12
		}, ""},
		{"default pool", nil, nil, func(c Config) bool { return c.DBMaxConns == 40 }, ""},
		{"bad pool", map[string]string{"DB_MAX_CONNS": "0"}, nil, nil, "DB_MAX_CONNS"},
		{"bad enter rate", map[string]string{"ENTER_RATE_PER_IP": "fast"}, nil, nil, "ENTER_RATE_PER_IP"},
		{"namespace", map[string]string{"REDIS_NAMESPACE": "shop-eu:prod_2"}, nil, func(c Config) bool { return c.RedisNamespace == "shop-eu:prod_2" }, ""},
		{"namespace flag", nil, []string{"-redis-namespace", "staging"}, func(c Config) bool { return c.RedisNamespace == "staging" }, ""},
		{"default namespace is left to the connection", nil, nil, func(c Config) bool { return c.RedisNamespace == "" }, ""},
		{"namespace with a hash tag", map[string]string{"REDIS_NAMESPACE": "wr:{x}"}, nil, nil, "REDIS_NAMESPACE"},
		{"namespace with a glob", map[string]string{"REDIS_NAMESPACE": "wr*"}, nil, nil, "REDIS_NAMESPACE"},
		{"namespace too long", map[string]string{"REDIS_NAMESPACE": strings.Repeat("n", 65)}, nil, nil, "REDIS_NAMESPACE"},
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
