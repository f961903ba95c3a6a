// Package web is the HTTP server's assembler and the buyer's side: the
// one route list, the middleware, the buyer's pages and JSON API, the
// stream and widget endpoints, share links and link previews, built on
// the console, gate mode, the SSE hub and the response and request
// helpers.
package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/admin"
	"waitingroom/server/challenge"
	"waitingroom/server/identity"
	"waitingroom/server/operator"
	"waitingroom/server/order"
	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/visitor"
	"waitingroom/web/console"
	"waitingroom/web/gatemode"
	"waitingroom/web/media"
	"waitingroom/web/sse"
)

// Queue is the line as the HTTP handlers use it.
type Queue interface {
	// EnterWithProof enters with a proof of work (the zero Proof for none).
	// It and EnterNew bound their own wait (queue.EnterWait): the enter
	// route arms no timer for them (apiEnter).
	EnterWithProof(ctx context.Context, room, visitor, network string, c queue.Campaign, proof queue.Proof) (queue.Position, error)
	// EnterNew enters a visitor whose id was minted for this request
	// (visitor.NewID), without a proof: it does not look for a place they
	// cannot have.
	EnterNew(ctx context.Context, room, visitor, network string, c queue.Campaign) (queue.Position, error)
	// EnterWith is EnterWithProof with what the enter brings to a room
	// whose access is limited.
	EnterWith(ctx context.Context, room, visitor, network string, c queue.Campaign, proof queue.Proof, cred queue.Credentials) (queue.Position, error)
	// TakeGuess and ForgiveGuess count the access codes a client network
	// gets refused.
	TakeGuess(ctx context.Context, network string) (queue.Guess, error)
	ForgiveGuess(ctx context.Context, g queue.Guess) error
	// Bypass lets a visitor in at once, outside the line.
	Bypass(ctx context.Context, room, visitor, token, link string) (queue.Bypassed, error)
	// CountChallenge counts a challenge issued to network in room and
	// returns the room's challenge mode and the rates to price it at.
	CountChallenge(ctx context.Context, room, network string) (queue.ChallengeRates, error)
	// BookWait books a no-JavaScript join of network in room, wait after
	// the network's next free moment.
	BookWait(ctx context.Context, room, network string, wait time.Duration) (queue.WaitSlot, error)
	DrawInfo(ctx context.Context, room string) (queue.DrawInfo, error)
	Position(ctx context.Context, room, visitor string) (queue.Position, error)
	Leave(ctx context.Context, room, visitor string) (bool, error)
}

// Rooms is the room store as the admin API uses it.
type Rooms interface {
	Room(ctx context.Context, name string) (room.Settings, error)
	SaveRoom(ctx context.Context, name string, s room.Settings) error
	// SaveRoomKeepingRate is SaveRoom that leaves the rate as it is (the
	// adaptive controller's).
	SaveRoomKeepingRate(ctx context.Context, name string, s room.Settings) error
	// SetAPIKeyHash replaces room name's API key hash alone (SaveRoom
	// never writes it); room.ErrNotFound for an unknown room.
	SetAPIKeyHash(ctx context.Context, name, hash string) error
	// APIKeyHash is room name's API key hash as it is now.
	APIKeyHash(ctx context.Context, name string) (string, error)
	// CreateRoom saves s only when room name does not exist, and reports
	// whether it did.
	CreateRoom(ctx context.Context, name string, s room.Settings) (bool, error)
	Stats(ctx context.Context, name string) (queue.Stats, error)
	SetSoldOut(ctx context.Context, name string, soldOut bool) error
	DeleteRoom(ctx context.Context, name string) (queue.Deletion, error)
	Networks(ctx context.Context, name string, top int) ([]queue.NetworkCount, error)
	// Rooms lists the live rooms' names.
	Rooms(ctx context.Context) ([]string, error)
	// RoomsSettings reads the settings of the rooms of names at once, by
	// name, leaving out those it cannot read (preview: the front page).
	RoomsSettings(ctx context.Context, names []string) (map[string]room.Settings, error)
	// AdaptRooms reads the adaptive controller's state of the rooms of
	// names whose adaptive admission is on.
	AdaptRooms(ctx context.Context, names []string) (map[string]queue.AdaptRoom, error)
	// AdaptHistory reads room name's last n changes of the controller,
	// newest first.
	AdaptHistory(ctx context.Context, name string, n int) ([]queue.AdaptChange, error)
}

// Orders places orders and lists products.
type Orders interface {
	Place(ctx context.Context, r order.Request) (order.Order, error)
	Products(ctx context.Context, room string) ([]order.Product, error)
	Get(ctx context.Context, room, visitor, publicID string) (order.Order, error)
}

// Options are a Server's dependencies.
type Options struct {
	// Now is the clock of the per-client rate limits; nil is time.Now.
	Now func() time.Time
	// Clock decides the freshness of the buyer's cached pages, widget
	// status, room faces and front page list, the times of the proofs of
	// work and no-JavaScript waits, and the console's (console.Deps.Clock);
	// nil is clockwork.NewRealClock().
	Clock  clockwork.Clock
	Queue  Queue
	Rooms  Rooms
	Orders Orders
	// Health reports whether the server's dependencies answer.
	Health func(ctx context.Context) error
	// Signer signs the wr_vid cookie.
	Signer *visitor.Signer
	// AdminToken guards the admin API; empty disables it.
	AdminToken string
	// Static holds the embedded assets (static/ at its root).
	Static fs.FS
	// Hub pushes positions over SSE.
	Hub *sse.Hub
	// Live is the rooms' per-second record for the console's dashboard;
	// nil leaves its rates, charts and instances out.
	Live console.LiveStats
	// Stock is the dashboard's sold against stock; nil leaves it out.
	Stock console.StockSummaries
	// DashboardStreams bounds the open dashboard streams (default
	// console.DefaultDashboardStreams).
	DashboardStreams int
	// EnterRatePerIP and EnterBurstPerIP bound enters per client IP
	// (defaults DefaultEnterRatePerIP, and 3 times the rate): a safety
	// valve far above human rates, since the proof of work makes
	// identities cost.
	EnterRatePerIP  float64
	EnterBurstPerIP int
	// Challenges issues and verifies proofs of work; nil uses keys derived
	// from a random secret (this process alone can verify them).
	Challenges Challenges
	// ChallengePolicy prices challenges; the zero Policy is
	// challenge.DefaultPolicy().
	ChallengePolicy challenge.Policy
	// ChallengeDefault is the challenge setting of a room created without
	// one (room.ChallengeOff, Auto or Always); "" means off.
	ChallengeDefault string
	// TrustedProxies may set X-Forwarded-For.
	TrustedProxies []netip.Prefix
	// AllowedOrigins are other origins whose cross-origin POST, PUT and
	// DELETE are accepted (scheme://host[:port]); the server's own host
	// always is.
	AllowedOrigins []string
	// IPv6Prefix is the prefix length of the IPv6 network that per-client
	// caps count as one client (default 64).
	IPv6Prefix int
	// IdleConnsPerIP caps the idle keep-alive connections of one client
	// network (default 64); see ConnState.
	IdleConnsPerIP int
	// NetworkFlagJoins is how many pre-queue joins from one client network
	// flag it in the admin figures (default DefaultNetworkFlagJoins).
	NetworkFlagJoins int
	Metrics          *Metrics
	Log              *slog.Logger
	// Catalog is the product admin; nil turns it off.
	Catalog Catalog
	// Codes are the rooms' access codes; nil turns their admin API and
	// console page off.
	Codes console.Codes
	// AccessCodes redeems the codes for joins; nil refuses every code
	// (503).
	AccessCodes AccessCodes
	// Visitors derives the visitors of the shops' identities; the zero
	// value derives them from a random key (one instance only).
	Visitors identity.Visitors
	// TestLinks are the rooms' test links; nil turns them off (404).
	TestLinks TestLinks
	// ConsoleOrders is the order database of the console's orders and
	// attribution pages; nil makes them say that none is attached.
	ConsoleOrders console.Orders
	// PlacedOrders finds the order a resent order form placed; nil
	// answers a resent form as a used token.
	PlacedOrders PlacedOrders
	// CampaignCounts is the line's joins per campaign; nil shows the
	// attribution page's orders alone.
	CampaignCounts console.CampaignCounts
	// Records keeps the database's record of the rooms; nil keeps none.
	Records RoomRecords
	// Ready is the readiness check of /readyz; nil uses Health.
	Ready Readiness
	// Sale is told of a sale's events; nil logs them nowhere.
	Sale SaleLog
	// RecordedRooms lists the database's record of the rooms for the
	// console; nil lists only the live rooms.
	RecordedRooms RecordedRooms
	// Operators are the console's accounts and sessions; nil turns the
	// console off (its sign-in page says why).
	Operators console.Operators
	// Audit records who changed what; nil records nothing.
	Audit console.Audit
	// Devices signs the console's device cookies; nil signs them with a
	// key of this process alone.
	Devices *operator.Devices

	// preview: PublicURL is the site's absolute origin for link previews
	// ("" takes each request's host); LandingURL is where GET / redirects
	// ("" lists the listed rooms); OGFont is the font file of the default
	// preview images ("" searches known CJK font paths, and Go's font,
	// without Hangul, draws when none is found).
	PublicURL  string
	LandingURL string
	OGFont     string
	// Images keeps the uploaded images (brand); nil serves none and
	// refuses uploads.
	Images media.Images
	// Shares are the rooms' short links (share); nil turns them off.
	Shares console.ShareLinks

	// gate: PassKeys signs the passes and serves the JWKS;
	// Gates mints and redeems them and keeps the sessions they open. With
	// either nil, gate mode is off: its endpoints answer 404 gate_off.
	PassKeys *pass.Keys
	Gates    gatemode.Gates
	// Signal is the adaptive controller's health signal, told the shop's
	// answers to the gate's protected requests (the reverse proxy's, and
	// those the gate middleware reports); nil counts none.
	Signal gatemode.ShopSignal

	// Tick is the admission period (TICK): a room's readySpreadMs is at
	// most one tick. 0 bounds it by room.MaxReadySpreadMs alone.
	Tick time.Duration
}

// Server serves the waiting room's HTTP routes: the buyer's pages and
// API, the streams, the console, gate mode and the operations endpoints.
type Server struct {
	q      Queue
	rooms  Rooms
	orders Orders
	health func(ctx context.Context) error
	signer *visitor.Signer
	// jsonBufs are the buffers writePosition writes its JSON into.
	jsonBufs sync.Pool
	admin    []byte // SHA-256 of the admin token, nil when disabled
	assets   *assets
	hub      *sse.Hub
	enters   *ipLimiter
	// challengeFetches bounds the challenges fetched per client, at the
	// enters' rate (a join needs one).
	challengeFetches *ipLimiter
	// challenges, policy and challengeDefault: the proof of work.
	challenges       Challenges
	policy           challenge.Policy
	challengeDefault string
	trusted          []netip.Prefix
	// v6Prefix makes one client network of IPv6 addresses.
	v6Prefix   int
	adminFails *failures
	origins    *http.CrossOriginProtection
	trustHosts map[string][]string // ALLOWED_ORIGINS by host name (requestOrigin)
	idle       *idleConns
	pages      pageCache
	metrics    *Metrics
	log        *slog.Logger
	catalog    Catalog
	codes      console.Codes
	// redeemer, visitors, jwks and pasted: who may join a room whose
	// access is limited (join_access.go).
	redeemer AccessCodes
	visitors identity.Visitors
	jwks     *JWKS
	pasted   pastedKeys
	// links are the rooms' test links (bypass.go); nil when off.
	links    TestLinks
	placed   PlacedOrders
	records  RoomRecords
	ready    Readiness
	sale     SaleLog
	recorded RecordedRooms
	auditLog console.Audit
	// preview
	publicURL, landingURL string
	og                    *ogImages
	front                 *homeCache
	images                *media.Store       // brand: uploaded images
	shares                console.ShareLinks // share
	// widgets caches the embeddable widget's room settings and status.
	widgets widgetCache

	// console serves the operator's pages under /admin.
	console *console.Console

	// gate serves gate mode (package gatemode).
	gate *gatemode.Gate
	// nets reads the rooms' pre-queue networks and flags the busy ones.
	nets *networkFlags
	// roomWrites and productWrites are the audited writes of rooms and
	// products.
	roomWrites    *admin.Rooms
	productWrites *admin.Products
	// tick is the admission period (Options.Tick), which bounds
	// readySpreadMs.
	tick time.Duration
	// clock is Options.Clock.
	clock clockwork.Clock
}

// New returns a Server. Every field of o is required but AdminToken and
// the tuning fields. It returns an error when the static assets cannot be
// loaded.
func New(o Options) (*Server, error) {
	if o.Queue == nil || o.Rooms == nil || o.Orders == nil || o.Signer == nil || o.Hub == nil ||
		o.Metrics == nil || o.Log == nil || o.Health == nil {
		return nil, errors.New("web: Queue, Rooms, Orders, Signer, Hub, Metrics, Log and Health are required")
	}
	a, err := loadAssets(o.Static)
	if err != nil {
		return nil, err
	}
	if o.EnterRatePerIP <= 0 {
		o.EnterRatePerIP = DefaultEnterRatePerIP
	}
	if o.EnterBurstPerIP <= 0 {
		o.EnterBurstPerIP = int(3 * o.EnterRatePerIP)
	}
	if o.Challenges == nil {
		k, err := randomChallengeKeys()
		if err != nil {
			return nil, err
		}
		o.Challenges = k
	}
	if o.ChallengePolicy == (challenge.Policy{}) {
		o.ChallengePolicy = challenge.DefaultPolicy()
	}
	o.ChallengeDefault = room.CanonicalChallenge(o.ChallengeDefault)
	if !room.ValidChallenge(o.ChallengeDefault) {
		return nil, fmt.Errorf("web: challenge default %q: want off, auto or always", o.ChallengeDefault)
	}
	if o.IPv6Prefix <= 0 {
		o.IPv6Prefix = 64
	}
	if o.IdleConnsPerIP <= 0 {
		o.IdleConnsPerIP = 64
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	s := &Server{q: o.Queue, rooms: o.Rooms, orders: o.Orders, health: o.Health, signer: o.Signer,
		metrics: o.Metrics, log: o.Log, assets: a, hub: o.Hub, trusted: o.TrustedProxies,
		enters:           newIPLimiter(o.EnterRatePerIP, o.EnterBurstPerIP, o.Now),
		challengeFetches: newIPLimiter(o.EnterRatePerIP, o.EnterBurstPerIP, o.Now),
		challenges:       o.Challenges, policy: o.ChallengePolicy, challengeDefault: o.ChallengeDefault,
		v6Prefix:   o.IPv6Prefix,
		adminFails: newFailures(adminFailures, adminFailWindow),
		tick:       o.Tick,
		clock:      o.Clock,
		pages:      pageCache{pages: map[string]*renderedPage{}}}
	s.idle = newIdleConns(o.IdleConnsPerIP, o.IPv6Prefix, o.TrustedProxies, s.metrics.Rejected.WithLabelValues("idle_conns").Inc)
	if s.origins, err = newCrossOrigin(o.AllowedOrigins, http.HandlerFunc(s.refuseCrossSite)); err != nil {
		return nil, err
	}
	// The shop's callback is posted by the hand-off page of this site to
	// the shop's host, across sites by design: the pass in its body is
	// its credential (gatemode.Gate.Enter).
	s.origins.AddInsecureBypassPattern("POST /_waitingroom/enter")
	if o.AdminToken != "" {
		s.admin = digest(o.AdminToken)
	}
	s.operations(o)
	s.adminWrites(o)
	if err := s.previews(o); err != nil {
		return nil, err
	}
	s.images = media.New(o.Images)
	s.shares = o.Shares
	if err := s.joinAccess(o); err != nil {
		return nil, err
	}
	s.gate = s.newGate(o)
	s.nets = newNetworkFlags(o.Rooms, o.NetworkFlagJoins)
	if s.console, err = console.New(s.consoleDeps(o)); err != nil {
		return nil, err
	}
	s.metrics.WatchReadiness(s.readiness)
	return s, nil
}

// requestTimeout bounds the Redis work of one API request.
const requestTimeout = 5 * time.Second

// Handler returns the server's routes wrapped in its middleware.
func (s *Server) Handler() http.Handler {
	// routes takes the routes alone; mux takes them and "/", everything
	// else, which goes to fallbacks: a request a route takes is routed
	// once, and only one that none takes is routed again, by routes, to
	// tell a 404 from a 405 or a redirect.
	routes, mux := http.NewServeMux(), http.NewServeMux()
	for _, rt := range s.routes() {
		h := labelRoute(rt.handler)
		routes.Handle(rt.pattern, h)
		mux.Handle(rt.pattern, h)
	}
	mux.Handle("/", s.fallbacks(routes))
	return s.countResponses(s.recoverPanics(s.origins.Handler(mux)))
}

// ConnState is the http.Server's ConnState hook: it caps the idle
// keep-alive connections per client network (Options.IdleConnsPerIP).
func (s *Server) ConnState(c net.Conn, st http.ConnState) {
	s.idle.connState(c, st)
}
