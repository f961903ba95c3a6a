package web

import "waitingroom/server/room"

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
