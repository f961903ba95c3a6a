package web

import (
	"context"

	"waitingroom/server/store"
	"waitingroom/web/console"
	"waitingroom/web/response"
)

// RecordedRooms is the database's record of the rooms, listed so that
// the console and gate mode know a room Redis lost before it is restored
// (store.DB).
type RecordedRooms interface {
	Rooms(ctx context.Context) ([]store.RoomRecord, error)
}

// consoleDeps are the console's needs, taken from o and s.
func (s *Server) consoleDeps(o Options) console.Deps {
	return console.Deps{
		Rooms: o.Rooms, RoomWrites: s.roomWrites, ProductWrites: s.productWrites,
		Operators: o.Operators, Audit: o.Audit, Orders: o.ConsoleOrders, Catalog: o.Catalog,
		Campaigns: o.CampaignCounts, Recorded: o.RecordedRooms, Shares: o.Shares, Codes: o.Codes, Links: o.TestLinks, Images: s.images,
		Live: o.Live, Stock: o.Stock, Networks: s.nets, DashboardStreams: o.DashboardStreams,
		NewAPIKey: s.replaceAPIKey, Devices: o.Devices, AdminDigest: s.admin, AdminFails: s.adminFails,
		ChallengeDefault: s.challengeDefault, ReadySpreadDefaultMs: s.readySpreadDefaultMs(),
		ReadySpreadMaxMs: s.readySpreadMaxMs(), PublicURL: s.publicURL, TrustedProxies: o.TrustedProxies,
		Fail: response.Failer{Log: s.log, Text: s.roomText, Page: s.htmlPage}, AssetURL: s.assets.url, ClientKey: s.clientKey, BaseURL: s.baseURL,
		Rejected: func(reason string) { s.metrics.Rejected.WithLabelValues(reason).Inc() },
		Log:      s.log, Clock: s.clock,
	}
}
