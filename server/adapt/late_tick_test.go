package adapt

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
)

// slowRooms answers nothing before the tick's deadline.
type slowRooms struct{}

func (slowRooms) AdaptiveRooms(ctx context.Context) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (slowRooms) AdaptRooms(context.Context, []string) (map[string]queue.AdaptRoom, error) {
	return nil, nil
}
func (slowRooms) ApplyAdapt(context.Context, string, queue.AdaptDecision) (bool, string, error) {
	return false, "", nil
}

// TestLateTickSaid: a tick that runs past its interval is logged, once a
// minute at most; a tick whose caller ended it is not.
func TestLateTickSaid(t *testing.T) {
	for _, tt := range []struct {
		name     string
		ticks    int
		canceled bool
		want     int
	}{
		{"one late tick", 1, false, 1},
		{"three late ticks, said once", 3, false, 1},
		{"the caller ended it", 1, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := DefaultParams()
			p.Every = 20 * time.Millisecond
			c := NewController(slowRooms{}, nil, p, slog.New(slog.NewTextHandler(&buf, nil)), nil)
			ctx, cancel := context.WithCancel(context.Background())
			if tt.canceled {
				cancel()
			}
			for range tt.ticks {
				c.Tick(ctx)
			}
			cancel()
			if got := strings.Count(buf.String(), "ran past its interval"); got != tt.want {
				t.Fatalf("said %d times, want %d: %s", got, tt.want, buf.String())
			}
		})
	}
}
