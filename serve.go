package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"waitingroom/server/adapt"
	"waitingroom/server/audit"
	"waitingroom/server/challenge"
	"waitingroom/server/config"
	"waitingroom/server/draw"
	"waitingroom/server/issuer"
	"waitingroom/server/livestats"
	"waitingroom/server/operator"
	"waitingroom/server/order"
	"waitingroom/server/push"
	"waitingroom/server/queue"
	"waitingroom/server/redisconn"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/server/salelog"
	"waitingroom/server/share"
	"waitingroom/server/store"
	"waitingroom/server/visitor"
	"waitingroom/web"
	"waitingroom/web/sse"
)

func serveCommand(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, log *slog.Logger) error {
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
	return serve(ctx, cfg, ln, log)
}

// serve runs the server on ln until ctx is done, then shuts down
// gracefully: it stops accepting, lets requests finish within
// cfg.ShutdownTimeout, stops the issuer and closes Redis.
func serve(ctx context.Context, cfg config.Config, ln net.Listener, log *slog.Logger) error {
	// The metrics listen privately, never on the public port.
	mln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("METRICS_ADDR %s: %w", cfg.MetricsAddr, err)
	}
	defer mln.Close()
	// Reverse-proxy mode listens on a port of its own (PROXY_ADDR); a
	// taken address stops the start-up, as METRICS_ADDR's does.
	var pln net.Listener
	if cfg.ProxyAddr != "" {
		if pln, err = net.Listen("tcp", cfg.ProxyAddr); err != nil {
			ln.Close()
			return fmt.Errorf("PROXY_ADDR %s: %w", cfg.ProxyAddr, err)
		}
		defer pln.Close()
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		ln.Close()
		return fmt.Errorf("embedded static: %w", err)
	}
	conn, err := redisconn.Open(ctx, cfg.RedisURL, redisconn.Sentinel{Master: cfg.SentinelMaster, Addrs: cfg.SentinelAddrs}, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer conn.Close()

	secret := []byte(cfg.SecretKey)
	if len(secret) == 0 {
		secret = make([]byte, 32)
		rand.Read(secret)
		log.Warn("SECRET_KEY is empty: using a random key, so visitor cookies do not survive a restart " +
			"and are not shared between instances. Set SECRET_KEY in production.")
	}
	signer, err := visitor.NewSigner(secret)
	if err != nil {
		ln.Close()
		return err
	}
	if cfg.AdminToken == "" {
		log.Warn("ADMIN_TOKEN is empty: the admin API is disabled")
	}
	passKeys, err := passKeys(cfg, secret, log)
	if err != nil {
		ln.Close()
		return err
	}

	db, err := store.Open(ctx, cfg.DatabaseURL, cfg.DBMaxConns, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer db.Close()

	ns := cfg.RedisNamespace
	if ns == "" {
		ns = queue.DefaultNamespace(conn.Client)
	}
	eng := queue.New(conn.Client, ns)
	// A room saved before the challenge setting existed follows the
	// server's default.
	eng.SetChallengeDefault(cfg.ChallengeDefault)
	// The draws' seeds come from the secret: Redis holds only their nonces
	// until the reveal.
	seeder, err := draw.NewSeeder(ns, secret)
	if err != nil {
		ln.Close()
		return err
	}
	eng.SetDrawSeeder(seeder)
	log.Info("redis namespace", "namespace", ns)
	// The namespace is in the keys: another deployment that shares the
	// secret refuses this one's proofs and wait tokens.
	challenges, err := challenge.Derive(secret, ns)
	if err != nil {
		ln.Close()
		return err
	}
	devices, err := operator.NewDevices(secret)
	if err != nil {
		ln.Close()
		return err
	}
	sale := salelog.New(eng, log)
	rooms := roomsync.New(eng, db, log)
	if err := startMode(ctx, cfg, eng, rooms, sale, log); err != nil {
		ln.Close()
		return err
	}

	ops, err := operator.New(db)
	if err != nil {
		ln.Close()
		return err
	}
	auditLog := audit.New(db)
	sale.RecordTo(auditLog)

	metrics := web.NewMetrics()
	metrics.CountRedisCommands(conn.Commands)
	metrics.CountDB(db.Stats)
	widgetStreams := cfg.WidgetMaxStreams
	if widgetStreams == 0 {
		widgetStreams = -1 // widgets poll only
	}
	hub := sse.NewHub(sse.Options{Source: eng, Metrics: metrics.Hub(), Log: log, MaxPerIP: cfg.SSEMaxPerIP, MaxStreams: cfg.SSEMaxStreams, ReadySpread: cfg.Tick * 8 / 10, Tick: cfg.Tick, Heartbeat: cfg.SSEHeartbeat, MaxWidgets: widgetStreams})
	orders := order.NewService(order.NewStore(db.DB, cfg.OrderWork), sale.WatchGate(eng), 0, log)
	shares := share.NewLinks(share.NewStore(db), log)
	id := instanceID()
	live := livestats.NewRecorder(conn.Client, ns, id, hub.Connections, log)
	// Adaptive admission: the order path's health, counted for the
	// adaptive rooms only: none until the controller's first tick feeds
	// the recorder their names.
	signal := adapt.NewRecorder(conn.Client, ns, id, db.Stats, log)
	signal.Track(nil)
	handler, err := web.New(web.Options{
		Queue:            eng,
		Rooms:            eng,
		Orders:           sale.CountOrders(orders).Observe(live, metrics, signal),
		Catalog:          orders,
		Stock:            orders,
		Live:             livestats.NewReader(conn.Client, ns),
		Records:          rooms,
		Ready:            rooms,
		Sale:             sale,
		RecordedRooms:    db,
		Images:           db,
		Operators:        ops,
		Audit:            auditLog,
		Devices:          devices,
		Shares:           shares,
		Health:           func(ctx context.Context) error { return conn.Client.Ping(ctx).Err() },
		Signer:           signer,
		PassKeys:         passKeys,
		Gates:            eng,
		Signal:           signal,
		AdminToken:       cfg.AdminToken,
		Static:           static,
		Hub:              hub,
		EnterRatePerIP:   cfg.EnterRatePerIP,
		EnterBurstPerIP:  int(3 * cfg.EnterRatePerIP),
		Challenges:       challenges,
		ChallengeDefault: cfg.ChallengeDefault,
		TrustedProxies:   cfg.TrustedProxies,
		AllowedOrigins:   cfg.AllowedOrigins,
		IPv6Prefix:       cfg.IPv6Prefix,
		IdleConnsPerIP:   cfg.IdleConnsPerIP,
		NetworkFlagJoins: cfg.NetworkFlagJoins,
		Metrics:          metrics,
		Log:              log,
		PublicURL:        cfg.PublicURL,
		LandingURL:       cfg.LandingURL,
		OGFont:           cfg.OGFont,
		Tick:             cfg.Tick,
	})
	if err != nil {
		ln.Close()
		return err
	}
	srv := publicServer(cfg, handler, log)
	var proxy *web.Proxy
	var proxySrv *http.Server
	if pln != nil {
		if proxy, err = handler.NewProxy(web.ProxyOptions{Origin: cfg.OriginURL, MainAddr: ln.Addr().String(),
			WriteTimeout: cfg.WriteTimeout}); err != nil {
			ln.Close()
			return err
		}
		proxySrv = proxyServer(proxy, log)
	}
	metricsMux := http.NewServeMux()
	metricsMux.Handle("GET /metrics", metrics.Handler())
	metricsSrv := &http.Server{Handler: metricsMux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	loopCtx, stopLoop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { issuer.New(eng, cfg.Tick, log, metrics).Record(live).WatchPhases(sale).Run(loopCtx) })
	wg.Go(func() { live.Run(loopCtx) })
	wg.Go(func() { signal.Run(loopCtx) })
	wg.Go(func() {
		adapt.NewController(eng, adapt.NewReader(conn.Client, ns), adapt.DefaultParams(), log, metrics).Feed(signal).Run(loopCtx)
	})
	wg.Go(func() { adapt.NewHealthPoller(eng, web.NewHealthProbe(), conn.Client, ns, log).Run(loopCtx) })
	wg.Go(func() { shares.Run(loopCtx) })
	wg.Go(func() { push.Listen(loopCtx, conn.Client, ns, hub, log) })
	// The waiting room runs without its database: migrations are retried
	// until they apply, and orders answer 503 meanwhile. The embedded store
	// lives in this process and cannot be away: it is migrated, and the
	// demo product seeded, before the first request, so that no buyer meets
	// the demo room without its product.
	prepare := func(ctx context.Context) {
		migrateUntilDone(ctx, db, log)
		if cfg.DemoMode() {
			seedDemo(ctx, orders, log)
		}
	}
	if db.Embedded {
		prepare(loopCtx)
	}
	wg.Go(func() {
		if !db.Embedded {
			prepare(loopCtx)
		}
		rooms.Check(loopCtx) // restore the rooms now rather than at the next round
	})
	wg.Go(func() { rooms.Run(loopCtx, roomCheckEvery) })
	wg.Go(func() { sale.Run(loopCtx, saleSummaryEvery) })
	if cfg.DebugAddr != "" {
		wg.Go(func() {
			if err := serveDebug(loopCtx, cfg.DebugAddr, log); err != nil {
				log.Error("debug listener", "err", err)
			}
		})
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	go metricsSrv.Serve(mln)
	proxyErr := make(chan error, 1)
	if proxySrv != nil {
		wg.Go(func() { proxy.Run(loopCtx) })
		go func() { proxyErr <- proxySrv.Serve(pln) }()
		log.Info("reverse proxy listening", "addr", pln.Addr().String(), "origin", cfg.OriginURL)
	}
	if cfg.DemoMode() {
		log.Info("waitingroom listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/r/"+room.Demo, "tick", cfg.Tick)
	} else {
		log.Info("waitingroom listening", "addr", ln.Addr().String(), "tick", cfg.Tick)
	}
	log.Info("metrics listening", "addr", mln.Addr().String(), "url", "http://"+mln.Addr().String()+"/metrics")

	select {
	case err = <-serveErr:
	case err = <-proxyErr:
		err = fmt.Errorf("reverse proxy: %w", err)
		srv.Close()
	case <-ctx.Done():
		log.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		if proxySrv != nil {
			var pwg sync.WaitGroup
			pwg.Go(func() { proxySrv.Shutdown(sctx) })
			err = srv.Shutdown(sctx)
			pwg.Wait()
		} else {
			err = srv.Shutdown(sctx)
		}
		cancel()
	}
	if proxySrv != nil {
		proxySrv.Close() // whatever outlived the graceful shutdown, or the main server's end
	}
	hub.Close() // SSE connections are hijacked: Shutdown does not see them
	metricsSrv.Close()
	stopLoop()
	wg.Wait()
	sale.Flush() // the last events reach the audit log before the database closes
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// instanceID names this server among the deployment's instances (for the
// live dashboard): hostname:pid and a short random part, so that two
// servers of one process (tests, drills) are told apart.
func instanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "instance"
	}
	return host + ":" + strconv.Itoa(os.Getpid()) + "-" + rand.Text()[:4]
}

// proxyServer is the reverse-proxy listener's server: the public
// server's header and read bounds and idle-connection cap, but no
// WriteTimeout, which would cut every long download or stream of the
// shop; the proxy gives each write its own deadline instead
// (web.ProxyOptions.WriteTimeout).
func proxyServer(p *web.Proxy, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           p.Handler(),
		ConnState:         p.ConnState,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// publicServer is the public HTTP server. Every answer but an SSE stream
// must be written within WRITE_TIMEOUT, so that a client that pipelines
// requests and never reads cannot pin a connection: SSE streams are
// hijacked and set deadlines of their own (web/sse/subscribe.go). Request
// headers must arrive within ReadHeaderTimeout (a slow client gets no
// answer, only a closed connection), bodies within ReadTimeout, and larger
// headers than MaxHeaderBytes get 431 from net/http itself. ConnState caps
// each client's idle keep-alive connections (IDLE_CONNS_PER_IP).
func publicServer(cfg config.Config, h *web.Server, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h.Handler(),
		ConnState:         h.ConnState,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
