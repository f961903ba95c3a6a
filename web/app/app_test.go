package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"waitingroom/server/servicetest"
)

// repoAssets are the repository's static/ and migrations/, which the
// binary embeds; the tests run in web/app.
func repoAssets() Assets {
	root := os.DirFS("../..")
	return Assets{Static: root, Migrations: root}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// syncBuffer collects a server's logs from several goroutines.
type syncBuffer = servicetest.SyncBuffer

func TestRunRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, nil, "unknown command"},
		{"bad flag", []string{"serve", "-tick", "nope"}, nil, "tick"},
		{"bad env", nil, map[string]string{"TICK": "nope"}, "TICK"},
		{"unreachable redis", []string{"-listen", "127.0.0.1:0"}, map[string]string{"REDIS_URL": "redis://127.0.0.1:1/0"}, "ping"},
		{"malformed redis url", []string{"-listen", "127.0.0.1:0"}, map[string]string{"REDIS_URL": "mysql://x"}, "REDIS_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "METRICS_ADDR" && tt.env[k] == "" {
					return "127.0.0.1:0" // not the default port, which another server may hold
				}
				return tt.env[k]
			}
			err := Main(context.Background(), repoAssets(), tt.args, getenv, strings.NewReader(""), io.Discard,
				slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
