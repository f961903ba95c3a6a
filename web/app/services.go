package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/access"
	"waitingroom/server/adapt"
	"waitingroom/server/audit"
	"waitingroom/server/challenge"
	"waitingroom/server/config"
	"waitingroom/server/draw"
	"waitingroom/server/identity"
	"waitingroom/server/livestats"
	"waitingroom/server/operator"
	"waitingroom/server/order"
	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/redisconn"
	"waitingroom/server/roomsync"
	"waitingroom/server/salelog"
	"waitingroom/server/share"
	"waitingroom/server/store"
	"waitingroom/server/visitor"
	"waitingroom/web"
	"waitingroom/web/sse"
)

// services are what the handlers and the loops work with: the Redis and
// database connections and everything built on them.
type services struct {
	// clk is what the server decides by (ServeOn).
	clk clockwork.Clock
	// id names this instance among the deployment's (instanceID).
	id         string
	static     fs.FS
	conn       *redisconn.Conn
	secret     []byte
	signer     *visitor.Signer
	passKeys   *pass.Keys
	db         *store.DB
	ns         string
	eng        *queue.Engine
	challenges *challenge.Keys
	devices    *operator.Devices
	sale       *salelog.Log
	rooms      *roomsync.Sync
	ops        *operator.Store
	audit      *audit.Log
	metrics    *web.Metrics
	hub        *sse.Hub
	orders     *order.Service
	codes      *access.Codes
	visitors   identity.Visitors
	shares     *share.Links
	live       *livestats.Recorder
	signal     *adapt.Recorder
}

// openServices connects to Redis, then to the database, and builds the
// services on them. On an error it closes what it opened.
func openServices(ctx context.Context, cfg config.Config, assets Assets, clk clockwork.Clock, log *slog.Logger) (_ *services, err error) {
	s := &services{clk: clk}
	if s.static, err = fs.Sub(assets.Static, "static"); err != nil {
		return nil, fmt.Errorf("embedded static: %w", err)
	}
	if s.conn, err = redisconn.Open(ctx, cfg.RedisURL, redisconn.Sentinel{Master: cfg.SentinelMaster, Addrs: cfg.SentinelAddrs}, log); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := s.openKeys(cfg, log); err != nil {
		return nil, err
	}
	if s.db, err = store.Open(ctx, cfg.DatabaseURL, cfg.DBMaxConns, log); err != nil {
		return nil, err
	}
	if err := s.openQueue(ctx, cfg, clk != nil, log); err != nil {
		return nil, err
	}
	if s.clk == nil {
		s.clk = clockwork.NewRealClock()
	}
	if err := s.openRecords(cfg, log); err != nil {
		return nil, err
	}
	return s, nil
}

// close closes the database, then Redis.
func (s *services) close() {
	if s.db != nil {
		s.db.Close()
	}
	s.conn.Close()
}

// openKeys derives the visitor cookies' and the gate passes' keys from
// SECRET_KEY (a random one when it is empty).
func (s *services) openKeys(cfg config.Config, log *slog.Logger) (err error) {
	s.secret = []byte(cfg.SecretKey)
	if len(s.secret) == 0 {
		s.secret = make([]byte, 32)
		rand.Read(s.secret)
		log.Warn("SECRET_KEY is empty: using a random key, so visitor cookies do not survive a restart " +
			"and are not shared between instances. Set SECRET_KEY in production.")
	}
	if s.signer, err = visitor.NewSigner(s.secret); err != nil {
		return err
	}
	if cfg.AdminToken == "" {
		log.Warn("ADMIN_TOKEN is empty: the admin API is disabled")
	}
	s.passKeys, err = passKeys(cfg, s.secret, log)
	return err
}

// openQueue builds the queue engine on Redis, the rooms' record in the
// database and the sale's log, and starts the server's mode.
func (s *services) openQueue(ctx context.Context, cfg config.Config, ownClock bool, log *slog.Logger) (err error) {
	s.ns = cfg.RedisNamespace
	if s.ns == "" {
		s.ns = queue.DefaultNamespace(s.conn.Client)
	}
	s.eng = queue.New(s.conn.Client, s.ns)
	// On the real clock the scripts keep Redis' TIME: every instance of a
	// deployment then admits by one clock.
	if ownClock {
		s.eng.SetClock(s.clk.Now)
	}
	// A room saved before the challenge setting existed follows the
	// server's default.
	s.eng.SetChallengeDefault(cfg.ChallengeDefault)
	// The draws' seeds come from the secret: Redis holds only their nonces
	// until the reveal.
	seeder, err := draw.NewSeeder(s.ns, s.secret)
	if err != nil {
		return err
	}
	s.eng.SetDrawSeeder(seeder)
	log.Info("redis namespace", "namespace", s.ns)
	// The namespace is in the keys: another deployment that shares the
	// secret refuses this one's proofs and wait tokens.
	if s.challenges, err = challenge.Derive(s.secret, s.ns); err != nil {
		return err
	}
	if s.devices, err = operator.NewDevices(s.secret); err != nil {
		return err
	}
	s.sale = salelog.New(s.eng, log)
	s.rooms = roomsync.New(s.eng, s.db, log)
	return startMode(ctx, cfg, s.eng, s.rooms, s.sale, log)
}

// openRecords builds the operators, the audit log, the metrics, the SSE
// hub, the orders, the share links and the live and adaptive counters.
func (s *services) openRecords(cfg config.Config, log *slog.Logger) (err error) {
	if s.ops, err = operator.New(s.db, operator.Options{}); err != nil {
		return err
	}
	s.audit = audit.New(s.db)
	s.sale.RecordTo(s.audit)

	s.metrics = web.NewMetrics()
	s.metrics.CountRedisCommands(s.conn.Commands)
	s.metrics.CountDB(s.db.Stats)
	widgetStreams := cfg.WidgetMaxStreams
	if widgetStreams == 0 {
		widgetStreams = -1 // widgets poll only
	}
	s.hub = sse.NewHub(sse.Options{Source: s.eng, Metrics: s.metrics.Hub(), Log: log, MaxPerIP: cfg.SSEMaxPerIP, MaxStreams: cfg.SSEMaxStreams, ReadySpread: cfg.Tick * 8 / 10, Tick: cfg.Tick, Heartbeat: cfg.SSEHeartbeat, MaxWidgets: widgetStreams, Clock: s.clk})
	s.orders = order.NewService(order.NewStore(s.db.DB, cfg.OrderWork), s.sale.WatchGate(s.eng), 0, log).WithClock(s.clk)
	s.shares = share.NewLinks(share.NewStore(s.db), log)
	codeKey, err := access.NewHasher(s.secret)
	if err != nil {
		return err
	}
	s.codes = access.New(s.db.DB, codeKey, s.clk.Now)
	if s.visitors, err = identity.NewVisitors(s.secret); err != nil {
		return err
	}
	s.id = instanceID()
	s.live = livestats.NewRecorder(s.conn.Client, s.ns, s.id, s.hub.Connections, log).WithClock(s.clk)
	// Adaptive admission: the order path's health, counted for the
	// adaptive rooms only: none until the controller's first tick feeds
	// the recorder their names.
	s.signal = adapt.NewRecorder(s.conn.Client, s.ns, s.id, s.db.Stats, log).WithClock(s.clk)
	s.signal.Track(nil)
	return nil
}

// instanceID names this server among the deployment's instances (for the
// live dashboard, and among the issuers that share the rooms' ticks): hostname:pid and a short random part, so that two
// servers of one process (tests, drills) are told apart.
func instanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "instance"
	}
	return host + ":" + strconv.Itoa(os.Getpid()) + "-" + rand.Text()[:4]
}
