package app

import (
	"context"
	"io/fs"
	"log/slog"
	"sync"

	"waitingroom/server/adapt"
	"waitingroom/server/config"
	"waitingroom/server/issuer"
	"waitingroom/server/push"
	"waitingroom/server/queue"
	"waitingroom/web"
	"waitingroom/web/sse"
)

// loops are the server's background loops. Their context outlives the
// server's, so that they keep working through the graceful shutdown,
// and ends when close is called.
type loops struct {
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
}

func newLoops(ctx context.Context) *loops {
	l := &loops{}
	l.ctx, l.stop = context.WithCancel(context.WithoutCancel(ctx))
	return l
}

// run runs f in a goroutine of its own until the loops' context ends.
func (l *loops) run(f func(ctx context.Context)) {
	l.wg.Go(func() { f(l.ctx) })
}

// close ends the loops' context and waits for every loop to return.
func (l *loops) close() {
	l.stop()
	l.wg.Wait()
}

// startLoops starts the issuer, the live and adaptive counters and the
// adaptive controller, the share links' sweep, the push listener, the
// database's preparation, the rooms' and the sale's rounds and, with
// DEBUG_ADDR, the pprof listener.
func startLoops(l *loops, cfg config.Config, s *services, migrations fs.FS, log *slog.Logger) {
	iss := issuer.New(s.eng, cfg.Tick, log, s.metrics).Record(s.live).WatchPhases(s.sale).WithClock(s.clk).Share(s.eng, s.id)
	l.run(func(ctx context.Context) { iss.Run(ctx) })
	l.run(s.live.Run)
	l.run(s.signal.Run)
	l.run(func(ctx context.Context) {
		adapt.NewController(s.eng, adapt.NewReader(s.conn.Client, s.ns).WithClock(s.clk), adapt.DefaultParams(), log, s.metrics).
			Feed(s.signal).WithClock(s.clk).Run(ctx)
	})
	l.run(func(ctx context.Context) {
		adapt.NewHealthPoller(s.eng, web.NewHealthProbe(), s.conn.Client, s.ns, log).WithClock(s.clk).Run(ctx)
	})
	l.run(s.shares.Run)
	l.run(func(ctx context.Context) {
		push.Listen(ctx, s.conn.Client, s.ns, listener{hub: s.hub, issuer: iss}, log)
	})
	// The waiting room runs without its database: migrations are retried
	// until they apply, and orders answer 503 meanwhile. The embedded store
	// lives in this process and cannot be away: it is migrated, and the
	// demo product seeded, before the first request, so that no buyer meets
	// the demo room without its product.
	prepare := func(ctx context.Context) {
		migrateUntilDone(ctx, s.db, migrations, log)
		if cfg.DemoMode() {
			seedDemo(ctx, s.orders, log)
		}
	}
	if s.db.Embedded {
		prepare(l.ctx)
	}
	l.run(func(ctx context.Context) {
		if !s.db.Embedded {
			prepare(ctx)
		}
		s.rooms.Check(ctx) // restore the rooms now rather than at the next round
	})
	l.run(func(ctx context.Context) { s.rooms.Run(ctx, roomCheckEvery) })
	l.run(func(ctx context.Context) { s.sale.Run(ctx, saleSummaryEvery) })
	if cfg.DebugAddr != "" {
		l.run(func(ctx context.Context) {
			if err := serveDebug(ctx, cfg.DebugAddr, log); err != nil {
				log.Error("debug listener", "err", err)
			}
		})
	}
}

// listener hands the rooms' channel to the hub (the ticks' events) and to
// the issuer (the wakes of sleeping rooms, and every room once the
// subscription is back, since wakes may have been missed meanwhile).
type listener struct {
	hub    *sse.Hub
	issuer *issuer.Loop
}

func (l listener) Event(room string, e queue.Event) { l.hub.Event(room, e) }
func (l listener) Lost()                            { l.hub.Lost() }
func (l listener) Woken(room string)                { l.issuer.Wake(room) }

func (l listener) Subscribed() {
	l.issuer.WakeAll()
	l.hub.Subscribed()
}
