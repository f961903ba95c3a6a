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
			return c.ListenAddr == DefaultListenAddr && c.Tick == time.Second && c.RedisURL == "" && c.AdminToken == "" &&
				c.ChallengeDefault == "auto" && c.EnterRatePerIP == 200 && c.SSEMaxPerIP == 10000
		}, ""},
		{"challenge default", map[string]string{"CHALLENGE_DEFAULT": "off"}, []string{"-challenge-default", "always"}, func(c Config) bool {
			return c.ChallengeDefault == "always"
		}, ""},
		{"bad challenge default", map[string]string{"CHALLENGE_DEFAULT": "sometimes"}, nil, nil, "CHALLENGE_DEFAULT"},
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
		{"default buyer streams", nil, nil, func(c Config) bool {
			return c.SSEMaxStreams == StreamsFor(fileLimit(), c.WidgetMaxStreams)
		}, ""},
		{"buyer streams", map[string]string{"SSE_MAX_STREAMS": "9000"}, []string{"-sse-max-streams", "300"}, func(c Config) bool { return c.SSEMaxStreams == 300 }, ""},
		{"zero buyer streams", map[string]string{"SSE_MAX_STREAMS": "0"}, nil, nil, "SSE_MAX_STREAMS"},
		{"bad buyer streams", nil, []string{"-sse-max-streams", "many"}, nil, "SSE_MAX_STREAMS"},
		{"default heartbeat", nil, nil, func(c Config) bool { return c.SSEHeartbeat == 15*time.Second }, ""},
		{"heartbeat", map[string]string{"SSE_HEARTBEAT": "5s"}, []string{"-sse-heartbeat", "1s"}, func(c Config) bool { return c.SSEHeartbeat == time.Second }, ""},
		{"heartbeat too short", map[string]string{"SSE_HEARTBEAT": "1ms"}, nil, nil, "SSE_HEARTBEAT"},
		{"default widget streams", nil, nil, func(c Config) bool {
			return c.WidgetMaxStreams == 4000
		}, ""},
		{"widget streams", map[string]string{"WIDGET_MAX_STREAMS": "250"}, nil, func(c Config) bool { return c.WidgetMaxStreams == 250 }, ""},
		{"widgets poll only", nil, []string{"-widget-max-streams", "0"}, func(c Config) bool { return c.WidgetMaxStreams == 0 }, ""},
		{"negative widget streams", map[string]string{"WIDGET_MAX_STREAMS": "-1"}, nil, nil, "WIDGET_MAX_STREAMS"},
		{"bad widget streams", nil, []string{"-widget-max-streams", "many"}, nil, "WIDGET_MAX_STREAMS"},
		{"database", map[string]string{"DATABASE_URL": "postgres://x/y", "DB_MAX_CONNS": "12"}, nil, func(c Config) bool {
			return c.DatabaseURL == "postgres://x/y" && c.DBMaxConns == 12
		}, ""},
		{"default pool", nil, nil, func(c Config) bool { return c.DBMaxConns == 40 }, ""},
		{"bad pool", map[string]string{"DB_MAX_CONNS": "0"}, nil, nil, "DB_MAX_CONNS"},
		{"default network flag", nil, nil, func(c Config) bool { return c.NetworkFlagJoins == 50 }, ""},
		{"network flag", map[string]string{"NETWORK_FLAG_JOINS": "500"}, nil, func(c Config) bool { return c.NetworkFlagJoins == 500 }, ""},
		{"network flag flag", map[string]string{"NETWORK_FLAG_JOINS": "500"}, []string{"-network-flag-joins", "7"}, func(c Config) bool { return c.NetworkFlagJoins == 7 }, ""},
		{"zero network flag", map[string]string{"NETWORK_FLAG_JOINS": "0"}, nil, nil, "NETWORK_FLAG_JOINS"},
		{"bad network flag", nil, []string{"-network-flag-joins", "many"}, nil, "NETWORK_FLAG_JOINS"},
		{"bad enter rate", map[string]string{"ENTER_RATE_PER_IP": "fast"}, nil, nil, "ENTER_RATE_PER_IP"},
		{"namespace", map[string]string{"REDIS_NAMESPACE": "shop-eu:prod_2"}, nil, func(c Config) bool { return c.RedisNamespace == "shop-eu:prod_2" }, ""},
		{"namespace flag", nil, []string{"-redis-namespace", "staging"}, func(c Config) bool { return c.RedisNamespace == "staging" }, ""},
		{"default namespace is left to the connection", nil, nil, func(c Config) bool { return c.RedisNamespace == "" }, ""},
		{"namespace with a hash tag", map[string]string{"REDIS_NAMESPACE": "wr:{x}"}, nil, nil, "REDIS_NAMESPACE"},
		{"namespace with a glob", map[string]string{"REDIS_NAMESPACE": "wr*"}, nil, nil, "REDIS_NAMESPACE"},
		{"namespace too long", map[string]string{"REDIS_NAMESPACE": strings.Repeat("n", 65)}, nil, nil, "REDIS_NAMESPACE"},
		{"unknown flag", nil, []string{"-nope"}, nil, "nope"},
		{"embedded stores are a demo", nil, nil, func(c Config) bool { return !c.Demo && c.DemoMode() }, ""},
		{"production has no demo", map[string]string{"REDIS_URL": "redis://x:1/0", "DATABASE_URL": "postgres://x/y"}, nil,
			func(c Config) bool { return !c.DemoMode() }, ""},
		{"one external store is production", map[string]string{"DATABASE_URL": "postgres://x/y"}, nil,
			func(c Config) bool { return !c.DemoMode() }, ""},
		{"sentinel is external", map[string]string{"REDIS_SENTINEL_MASTER": "m", "REDIS_SENTINEL_ADDRS": "a:1"}, nil,
			func(c Config) bool { return !c.DemoMode() }, ""},
		{"DEMO=1 in production", map[string]string{"REDIS_URL": "redis://x:1/0", "DATABASE_URL": "postgres://x/y", "DEMO": "1"}, nil,
			func(c Config) bool { return c.Demo && c.DemoMode() }, ""},
		{"-demo flag", map[string]string{"REDIS_URL": "redis://x:1/0", "DATABASE_URL": "postgres://x/y"}, []string{"-demo"},
			func(c Config) bool { return c.DemoMode() }, ""},
		{"bad DEMO", map[string]string{"DEMO": "maybe"}, nil, nil, "DEMO"},
		// gate
		{"pass signing keys", map[string]string{"PASS_SIGNING_KEY": "/k/new.pem", "PASS_SIGNING_KEY_PREVIOUS": "/k/old.pem"}, nil,
			func(c Config) bool {
				return c.PassSigningKey == "/k/new.pem" && c.PassSigningKeyPrevious == "/k/old.pem"
			}, ""},
		{"pass signing key flag", nil, []string{"-pass-signing-key", "/k/f.pem"},
			func(c Config) bool { return c.PassSigningKey == "/k/f.pem" }, ""},
		{"previous pass key alone", map[string]string{"PASS_SIGNING_KEY_PREVIOUS": "/k/old.pem"}, nil, nil, "PASS_SIGNING_KEY_PREVIOUS"},
		// preview
		{"public url", map[string]string{"PUBLIC_URL": "https://queue.shop.example/"}, nil,
			func(c Config) bool { return c.PublicURL == "https://queue.shop.example" }, ""},
		{"public url with a port", nil, []string{"-public-url", "http://127.0.0.1:8080"},
			func(c Config) bool { return c.PublicURL == "http://127.0.0.1:8080" }, ""},
		{"public url without a scheme", map[string]string{"PUBLIC_URL": "queue.shop.example"}, nil, nil, "PUBLIC_URL"},
		{"public url with a path", map[string]string{"PUBLIC_URL": "https://shop.example/queue"}, nil, nil, "PUBLIC_URL"},
		{"public url of another scheme", map[string]string{"PUBLIC_URL": "ftp://shop.example"}, nil, nil, "PUBLIC_URL"},
		{"two public urls", map[string]string{"PUBLIC_URL": "https://a.example,https://b.example"}, nil, nil, "PUBLIC_URL"},
		{"landing url", map[string]string{"LANDING_URL": "https://shop.example/sale?x=1"}, nil,
			func(c Config) bool { return c.LandingURL == "https://shop.example/sale?x=1" }, ""},
		{"relative landing url", map[string]string{"LANDING_URL": "/sale"}, nil, nil, "LANDING_URL"},
		{"javascript landing url", map[string]string{"LANDING_URL": "javascript:alert(1)"}, nil, nil, "LANDING_URL"},
		{"og font", map[string]string{"OG_FONT": "/fonts/x.ttc"}, nil, func(c Config) bool { return c.OGFont == "/fonts/x.ttc" }, ""},
		{"admin token of 31 bytes", map[string]string{"ADMIN_TOKEN": strings.Repeat("a", 31)}, nil, nil, "ADMIN_TOKEN"},
		{"admin token of 32 bytes", map[string]string{"ADMIN_TOKEN": strings.Repeat("a", 32)}, nil, func(c Config) bool { return len(c.AdminToken) == 32 }, ""},
		{"web defaults", nil, nil, func(c Config) bool {
			return c.MetricsAddr == "127.0.0.1:9090" && c.IPv6Prefix == 64 && c.IdleConnsPerIP == 64 &&
				c.WriteTimeout == 30*time.Second && len(c.AllowedOrigins) == 0
		}, ""},
		{"web settings", map[string]string{"METRICS_ADDR": "127.0.0.1:0", "IPV6_PREFIX": "56", "IDLE_CONNS_PER_IP": "8",
			"WRITE_TIMEOUT": "5s", "ALLOWED_ORIGINS": "https://shop.example, http://127.0.0.1:3000/"}, nil, func(c Config) bool {
			return c.MetricsAddr == "127.0.0.1:0" && c.IPv6Prefix == 56 && c.IdleConnsPerIP == 8 && c.WriteTimeout == 5*time.Second &&
				len(c.AllowedOrigins) == 2 && c.AllowedOrigins[0] == "https://shop.example" && c.AllowedOrigins[1] == "http://127.0.0.1:3000"
		}, ""},
		{"origin with a path", map[string]string{"ALLOWED_ORIGINS": "https://shop.example/buy"}, nil, nil, "ALLOWED_ORIGINS"},
		{"origin without a scheme", map[string]string{"ALLOWED_ORIGINS": "shop.example"}, nil, nil, "ALLOWED_ORIGINS"},
		{"bad ipv6 prefix", map[string]string{"IPV6_PREFIX": "129"}, nil, nil, "IPV6_PREFIX"},
		{"bad idle cap", map[string]string{"IDLE_CONNS_PER_IP": "0"}, nil, nil, "IDLE_CONNS_PER_IP"},
		// gate: reverse-proxy mode
		{"proxy off by default", nil, nil, func(c Config) bool { return c.OriginURL == "" && c.ProxyAddr == "" }, ""},
		{"proxy", map[string]string{"ORIGIN_URL": "http://127.0.0.1:3000/", "PROXY_ADDR": "127.0.0.1:8081"}, nil,
			func(c Config) bool { return c.OriginURL == "http://127.0.0.1:3000" && c.ProxyAddr == "127.0.0.1:8081" }, ""},
		{"proxy flags", nil, []string{"-origin-url", "https://shop.example/base", "-proxy-addr", ":8081"},
			func(c Config) bool { return c.OriginURL == "https://shop.example/base" && c.ProxyAddr == ":8081" }, ""},
		{"origin without proxy", map[string]string{"ORIGIN_URL": "http://127.0.0.1:3000"}, nil, nil, "needs PROXY_ADDR"},
		{"proxy without origin", map[string]string{"PROXY_ADDR": "127.0.0.1:8081"}, nil, nil, "needs ORIGIN_URL"},
		{"relative origin", map[string]string{"ORIGIN_URL": "/shop", "PROXY_ADDR": ":8081"}, nil, nil, "ORIGIN_URL"},
		{"origin without a scheme", map[string]string{"ORIGIN_URL": "shop.example", "PROXY_ADDR": ":8081"}, nil, nil, "ORIGIN_URL"},
		{"origin of another scheme", map[string]string{"ORIGIN_URL": "ftp://shop.example", "PROXY_ADDR": ":8081"}, nil, nil, "ORIGIN_URL"},
		{"origin with a query", map[string]string{"ORIGIN_URL": "http://shop.example/?a=1", "PROXY_ADDR": ":8081"}, nil, nil, "ORIGIN_URL"},
		{"origin with credentials", map[string]string{"ORIGIN_URL": "http://u:p@shop.example", "PROXY_ADDR": ":8081"}, nil, nil, "ORIGIN_URL"},
		{"origin at the metadata address", map[string]string{"ORIGIN_URL": "http://169.254.169.254", "PROXY_ADDR": ":8081"}, nil, nil, "169.254.169.254 is a link-local/metadata address"},
		{"write timeout too short", map[string]string{"WRITE_TIMEOUT": "10ms"}, nil, nil, "WRITE_TIMEOUT"},
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

func TestStreamsFor(t *testing.T) {
	tests := []struct {
		files   uint64
		widgets int
		want    int
	}{
		{20000, 4000, 16000 - 4000 - 512},
		{1 << 20, 4000, 838860 - 4000 - 512},
		{1024, 4000, MinSSEMaxStreams},
		{4096, 0, 3276 - 512},
		{1 << 62, 0, 1717986918 - 512},
	}
	for _, tc := range tests {
		if got := StreamsFor(tc.files, tc.widgets); got != tc.want {
			t.Errorf("StreamsFor(%d, %d) = %d, want %d", tc.files, tc.widgets, got, tc.want)
		}
	}
}
