package redisconn

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/servicetest"
)

func TestOpen(t *testing.T) {
	servicetest.Redis(t) // skips, or fails in CI, without the real Redis
	tests := []struct {
		name         string
		url          string
		sentinel     Sentinel
		wantEmbedded bool
		wantCluster  bool
		wantErr      string
	}{
		{"embedded", "", Sentinel{}, true, false, ""},
		{"single node", servicetest.RedisURL(), Sentinel{}, false, false, ""},
		{"malformed", "mysql://x", Sentinel{}, false, false, "REDIS_URL"},
		{"unreachable", "redis://127.0.0.1:1/0", Sentinel{}, false, false, "ping"},
		{"cluster form", "redis://127.0.0.1:1?addr=127.0.0.1:2", Sentinel{}, false, true, "ping"},
		{"sentinel without addresses", "", Sentinel{Master: "m"}, false, false, "go together"},
		{"sentinel unreachable", "", Sentinel{Master: "m", Addrs: []string{"127.0.0.1:1"}}, false, false, "sentinel master m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			c, err := Open(context.Background(), tt.url, tt.sentinel, slog.New(slog.NewTextHandler(&logs, nil)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				if tt.wantCluster && !strings.Contains(err.Error(), "127.0.0.1") {
					t.Fatalf("cluster error does not name the node: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Embedded != tt.wantEmbedded {
				t.Fatalf("Embedded = %v, want %v", c.Embedded, tt.wantEmbedded)
			}
			if tt.wantEmbedded && !strings.Contains(logs.String(), "EMBEDDED") {
				t.Fatalf("embedded Redis not logged loudly: %s", logs.String())
			}
			if _, isCluster := c.Client.(*redis.ClusterClient); isCluster != tt.wantCluster {
				t.Fatalf("cluster client = %v, want %v", isCluster, tt.wantCluster)
			}
			if err := c.Client.Set(context.Background(), "wr:{redisconn-test}:k", "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			c.Client.Del(context.Background(), "wr:{redisconn-test}:k")
			if c.Commands() < 2 {
				t.Fatalf("counted %d commands, want at least the SET and the DEL", c.Commands())
			}
		})
	}
}
