package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/config"
)

// serveCommand parses the serve flags, listens on LISTEN_ADDR and serves
// until ctx is done.
func serveCommand(ctx context.Context, assets Assets, args []string, getenv func(string) string, stdout io.Writer, log *slog.Logger) error {
	cfg, err := config.Parse(args, getenv, stdout)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.ListenAddr, err)
	}
	if cfg.DemoMode() && cfg.AdminToken == "" {
		// A local demo (`make run`) has no operators and no token, so its
		// console could not be opened: a random token for this run only,
		// said once on stdout (not in the log, which may be shipped
		// elsewhere). A production server never gets one: without
		// ADMIN_TOKEN or operators, its sign-in page says how to set one up.
		cfg.AdminToken = rand.Text()
		fmt.Fprintf(stdout, "console: http://%s/admin/signin — sign in with this run's demo token %s (it works until the server stops)\n", ln.Addr(), cfg.AdminToken)
	}
	return Serve(ctx, cfg, assets, ln, log)
}

// Serve runs the server on ln until ctx is done, then shuts down
// gracefully: it stops accepting, lets requests finish within
// cfg.ShutdownTimeout, stops the loops and closes the database and Redis.
// It closes ln when it cannot start.
func Serve(ctx context.Context, cfg config.Config, assets Assets, ln net.Listener, log *slog.Logger) error {
	return ServeOn(ctx, cfg, assets, ln, nil, log)
}

// ServeOn is Serve on clk. nil is the real clock, with the scripts on
// Redis' TIME, as Serve runs. Any other clk, even a real one, puts the
// scripts on it too, so that instances would no longer admit by one
// clock: it is for tests that move a whole server's time
// (servicetest.JumpClock). On clk are the scripts' schedule, credit,
// passes and absences, the issuer, the adaptive loops, the live stats,
// the hub, the buyer's pages and caches, and the console. Gate mode's
// passes and sessions, the sale log and audit times, the rooms' records
// and the per-client limits keep the real clock.
func ServeOn(ctx context.Context, cfg config.Config, assets Assets, ln net.Listener, clk clockwork.Clock, log *slog.Logger) error {
	lns, err := openListeners(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	defer lns.close()
	s, err := openServices(ctx, cfg, assets, clk, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer s.close()
	handler, err := newHandler(cfg, s, log)
	if err != nil {
		ln.Close()
		return err
	}
	sv, err := newServers(cfg, handler, s.metrics, lns, ln, log)
	if err != nil {
		ln.Close()
		return err
	}
	l := newLoops(ctx)
	startLoops(l, cfg, s, assets.migrations(), log)
	err = sv.serve(ctx, cfg, ln, lns, l, log)
	s.hub.Close() // SSE connections are hijacked: Shutdown does not see them
	sv.metrics.Close()
	l.close()
	s.sale.Flush() // the last events reach the audit log before the database closes
	return err
}
