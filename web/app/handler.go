package app

import (
	"context"
	"log/slog"

	"waitingroom/server/bypass"
	"waitingroom/server/config"
	"waitingroom/server/livestats"
	"waitingroom/web"
)

// newHandler builds the public handler on the services.
func newHandler(cfg config.Config, s *services, log *slog.Logger) (*web.Server, error) {
	return web.New(web.Options{
		Queue:            s.eng,
		Rooms:            s.eng,
		Orders:           s.sale.CountOrders(s.orders).Observe(s.live, s.metrics, s.signal),
		Catalog:          s.orders,
		Codes:            s.codes,
		AccessCodes:      s.codes,
		Visitors:         s.visitors,
		TestLinks:        bypass.New(s.eng, s.signer, s.clk.Now),
		ConsoleOrders:    s.orders,
		PlacedOrders:     s.orders,
		CampaignCounts:   s.eng,
		Stock:            s.orders,
		Live:             livestats.NewReader(s.conn.Client, s.ns).WithClock(s.clk),
		Records:          s.rooms,
		Ready:            s.rooms,
		Sale:             s.sale,
		RecordedRooms:    s.db,
		Images:           s.db,
		Operators:        s.ops,
		Audit:            s.audit,
		Devices:          s.devices,
		Shares:           s.shares,
		Health:           func(ctx context.Context) error { return s.conn.Client.Ping(ctx).Err() },
		Signer:           s.signer,
		PassKeys:         s.passKeys,
		Gates:            s.eng,
		Signal:           s.signal,
		AdminToken:       cfg.AdminToken,
		Static:           s.static,
		Hub:              s.hub,
		EnterRatePerIP:   cfg.EnterRatePerIP,
		EnterBurstPerIP:  int(3 * cfg.EnterRatePerIP),
		Challenges:       s.challenges,
		ChallengeDefault: cfg.ChallengeDefault,
		TrustedProxies:   cfg.TrustedProxies,
		AllowedOrigins:   cfg.AllowedOrigins,
		IPv6Prefix:       cfg.IPv6Prefix,
		IdleConnsPerIP:   cfg.IdleConnsPerIP,
		NetworkFlagJoins: cfg.NetworkFlagJoins,
		Metrics:          s.metrics,
		Log:              log,
		PublicURL:        cfg.PublicURL,
		LandingURL:       cfg.LandingURL,
		OGFont:           cfg.OGFont,
		Tick:             cfg.Tick,
		Clock:            s.clk,
	})
}
