package issuer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// failingAdmit fails every tick of room "bad" with err, and of room
// "gone" with room.ErrNotFound.
type failingAdmit struct{ err error }

func (failingAdmit) Rooms(context.Context) ([]string, error) {
	return []string{"ok", "bad", "gone"}, nil
}

func (f failingAdmit) Admit(_ context.Context, name string, _ time.Duration, _ []string) (queue.Admission, error) {
	switch name {
	case "bad":
		return queue.Admission{}, f.err
	case "gone":
		return queue.Admission{}, room.ErrNotFound
	}
	return queue.Admission{Phase: queue.PhaseOpen}, nil
}

// failureCount is a FailureRecorder in memory.
type failureCount struct {
	mu     sync.Mutex
	ticks  map[string]int
	failed map[string]int
}

func (c *failureCount) RecordTick(name string, _ queue.Admission) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ticks[name]++
}

func (c *failureCount) RecordIssuerFailure(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed[name]++
}

// TestFailedTicksAreCounted: a tick that fails is counted for the room's
// dashboard; a room deleted meanwhile is no failure.
func TestFailedTicksAreCounted(t *testing.T) {
	rec := &failureCount{ticks: map[string]int{}, failed: map[string]int{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := New(failingAdmit{errors.New("redis: connection refused")}, time.Second, log, nil).Record(rec)
	l.Tick(context.Background())
	l.Tick(context.Background())
	if rec.failed["bad"] != 2 || rec.failed["ok"] != 0 || rec.failed["gone"] != 0 || rec.ticks["ok"] != 2 {
		t.Fatalf("ticks %v, failures %v", rec.ticks, rec.failed)
	}
}
