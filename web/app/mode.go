package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"waitingroom/server/config"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/server/salelog"
)

// How often the rooms' record is checked against Redis, and how often the
// sale is summarised in the log.
const (
	roomCheckEvery   = 5 * time.Second
	saleSummaryEvery = time.Minute
)

// demoProduct is what the demo room sells.
func demoProduct() order.Product {
	return order.Product{Name: "Air Runner 1 “Seoul Night”, black", Price: 129000, Currency: "KRW", Stock: 1000}
}

// demoSettings are the demo room's settings: a limited sneaker drop of a
// shop in Seoul, listed on the front page. Its title is English, so its
// pages and previews default to English too (a request that names Korean
// gets Korean).
func demoSettings() room.Settings {
	set := room.Defaults(room.Demo)
	set.Title = "Limited drop: Air Runner 1 “Seoul Night”"
	set.Description = "1,000 pairs of the black Air Runner 1, released once. Join the line: everyone gets a fair place, and the page shows yours live."
	set.ShopName = "Seoul Sneaker Lab"
	set.DefaultLanguage = room.LangEnglish
	set.Listed = true
	return set
}

// startMode says which mode the server runs in and, in demo mode, creates
// the demo room (and keeps it through a Redis restore). A production
// server, with its own Redis and database, has no demo: its rooms come
// from the admin API.
func startMode(ctx context.Context, cfg config.Config, eng *queue.Engine, rooms *roomsync.Sync, sale *salelog.Log, log *slog.Logger) error {
	if !cfg.DemoMode() {
		log.Info("PRODUCTION MODE: no demo room. Create rooms with PUT /api/admin/rooms/{room} and their products with POST /api/admin/rooms/{room}/products (DEMO=1 adds the demo room)")
		return nil
	}
	why := "DEMO=1"
	if !cfg.Demo {
		why = "both stores are embedded"
	}
	log.Warn("DEMO MODE: the demo room and its demo product exist", "why", why, "room", room.Demo)
	set := demoSettings()
	set.Challenge = cfg.ChallengeDefault // auto, unless a load test turns it off
	rooms.Keep(room.Demo, set)
	created, err := eng.CreateRoom(ctx, room.Demo, set)
	if err != nil {
		return fmt.Errorf("create demo room: %w", err)
	}
	if created {
		sale.Event(room.Demo, salelog.Opened, "by", "demo mode", "rate", set.Rate)
	}
	return nil
}

// seedDemo gives the demo room its product, once the database is migrated,
// unless the room already has one.
func seedDemo(ctx context.Context, orders *order.Service, log *slog.Logger) {
	if ctx.Err() != nil {
		return
	}
	p := demoProduct()
	seeded, err := orders.SeedProduct(ctx, room.Demo, p)
	switch {
	case err != nil:
		log.Error("demo product not seeded", "room", room.Demo, "err", err)
	case seeded:
		log.Info("seeded the demo product", "room", room.Demo, "name", p.Name, "stock", p.Stock)
	}
}
