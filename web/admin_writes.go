package web

import (
	"waitingroom/server/admin"
	"waitingroom/server/room"
)

// apiActor is who the audit log says made a change through the JSON admin
// API (its bearer token names no one).
const apiActor = "admin-token"

// adminWrites sets the audited writes of rooms and products, which the
// JSON admin API and the console share, from o.
func (s *Server) adminWrites(o Options) {
	s.roomWrites = admin.NewRooms(admin.RoomDeps{
		Store: o.Rooms, Records: s.records, Audit: s.auditLog, AuditTimeout: requestTimeout,
		Sale: s.sale, Log: s.log, ChallengeDefault: s.challengeDefault, Tick: s.tick,
		Saved: func(name string, set room.Settings) {
			s.gate.Remember(name, set)
		},
		Deleted: s.roomDeleted,
		Codes:   o.Codes,
	})
	s.productWrites = admin.NewProducts(admin.ProductDeps{
		Rooms: o.Rooms, Catalog: s.catalog, CheckImage: s.checkProductImage,
		Audit: s.auditLog, AuditTimeout: requestTimeout, Log: s.log,
	})
}

// roomDeleted forgets a deleted room's widgets: its open widgets show
// that it ended.
func (s *Server) roomDeleted(name string) {
	s.hub.RoomGone(name)
	s.widgets.mu.Lock()
	delete(s.widgets.rooms, name)
	s.widgets.mu.Unlock()
}

// effectiveChallenge is a room's challenge setting as it applies: the
// server's default for a room saved before the setting existed ("").
func (s *Server) effectiveChallenge(c string) string {
	if c == "" {
		return s.challengeDefault
	}
	return c
}

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
