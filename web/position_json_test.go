package web

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"waitingroom/server/queue"
	"waitingroom/web/response"
)

// TestWritePositionIsWriteJSON: writePosition answers every kind of
// Position byte for byte as response.WriteJSON does, headers included.
func TestWritePositionIsWriteJSON(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	tok := "dGhpcy1pcy1hLXRva2VuLW9mLTMyLWJ5dGVzLWxvbmctLQ"
	odd := "a\"b\\c<d>&e\u2028\x01é"
	for _, tc := range []struct {
		name string
		p    queue.Position
	}{
		{"zero", queue.Position{}},
		{"waiting", queue.Position{Status: queue.StatusWaiting, Rank: 41, Ticket: 1234567, Waiting: 98294, EstimatedWaitSeconds: n(840),
			PollingIntervalSeconds: 3, Phase: queue.PhaseOpen, ServerTime: 1764590400123, Line: 7, Head: 9, Tick: 11, Created: true}},
		{"paused, no ETA", queue.Position{Status: queue.StatusWaiting, Rank: 3, Ticket: 4, Paused: true, Phase: queue.PhaseOpen}},
		{"ready", queue.Position{Status: queue.StatusReady, Ticket: 5, EntryToken: &tok, PassExpiresAt: 1764590700000, Phase: queue.PhaseOpen}},
		{"returned", queue.Position{Status: queue.StatusWaiting, Rank: 12, RankUpReason: queue.RankUpReturned, EstimatedWaitSeconds: n(0)}},
		{"scheduled", queue.Position{Status: queue.StatusNotEntered, Phase: queue.PhaseScheduled, PrequeueAt: n(1), OpensAt: n(1764590400000),
			ClosesAt: n(1764594000000), SoldOut: true, PollingIntervalSeconds: 1}},
		{"prequeued", queue.Position{Status: queue.StatusPrequeued, Ticket: 77, Phase: queue.PhasePrequeue, PollingIntervalSeconds: 5}},
		{"negative numbers", queue.Position{Rank: -1, Ticket: -2, Waiting: -3, EstimatedWaitSeconds: n(-4), ServerTime: -5}},
		{"strings to escape", queue.Position{Status: queue.Status(odd), Phase: odd, EntryToken: &odd, RankUpReason: odd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, slow := httptest.NewRecorder(), httptest.NewRecorder()
			s := &Server{}
			// A buffer used before, for a longer answer, leaves nothing behind.
			long := "x" + strings.Repeat("y", 300)
			s.writePosition(httptest.NewRecorder(), 200, queue.Position{Status: queue.StatusReady, EntryToken: &long})
			s.writePosition(fast, 200, tc.p)
			response.WriteJSON(slow, 200, tc.p)
			if !bytes.Equal(fast.Body.Bytes(), slow.Body.Bytes()) {
				t.Fatalf("body\n%s\nwant\n%s", fast.Body.Bytes(), slow.Body.Bytes())
			}
			if !json.Valid(fast.Body.Bytes()) {
				t.Fatalf("not JSON: %s", fast.Body.Bytes())
			}
			for _, h := range []string{"Content-Type", "X-Content-Type-Options"} {
				if fast.Header().Get(h) != slow.Header().Get(h) || fast.Header().Get(h) == "" {
					t.Errorf("%s: %q, want %q", h, fast.Header().Get(h), slow.Header().Get(h))
				}
			}
		})
	}
}
