package web

import (
	"strconv"

	"waitingroom/server/room"
)

// The spread of one tick's turns: a room's readySpreadMs, or the hub's
// ReadySpread when it has none.

// readySpreadDefaultMs is the server's default spread in ms, which a room
// without readySpreadMs follows.
func (s *Server) readySpreadDefaultMs() int {
	return int(s.hub.DefaultReadySpread().Milliseconds())
}

// readySpreadMaxMs is the highest readySpreadMs this server takes: one
// tick, at most room.MaxReadySpreadMs.
func (s *Server) readySpreadMaxMs() int { return room.MaxReadySpread(s.tick) }

// checkReadySpread refuses, with an *invalidSettingsError, a write from
// cur to next that sets readySpreadMs above one tick. A write that leaves
// it as it was is not refused for it: a room saved under a longer TICK
// can still be paused.
func (s *Server) checkReadySpread(cur, next room.Settings) error {
	if room.SameReadySpread(cur.ReadySpreadMs, next.ReadySpreadMs) {
		return nil
	}
	if err := next.ValidateReadySpread(s.tick); err != nil {
		return &invalidSettingsError{err}
	}
	return nil
}

// readySpreadLog is readySpreadMs for a log line: its value, or "default".
func readySpreadLog(ms *int) string {
	if ms == nil {
		return "default"
	}
	return strconv.Itoa(*ms)
}
