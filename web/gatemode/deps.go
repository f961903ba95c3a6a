package gatemode

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/views"
)

// Gates is the engine's gate mode as the handlers use it: passes that
// send a buyer on to an outside shop, and the sessions they open there.
type Gates interface {
	MintPass(ctx context.Context, roomName, visitor, tok, jti string) (time.Time, error)
	Redeem(ctx context.Context, roomName, jti, sessionID string) (queue.Session, error)
	TouchSession(ctx context.Context, roomName, sessionID string, renew bool) (queue.Session, error)
	EndSession(ctx context.Context, roomName, sessionID string) error
	ActiveSessions(ctx context.Context, roomName string) (int, error)
	// Namespace is the deployment's Redis namespace, which the pass's
	// subject hashes in (queue.Subject).
	Namespace() string
}

// Rooms reads a room's settings.
type Rooms interface {
	Room(ctx context.Context, name string) (room.Settings, error)
}

// RecordedRooms is the database's record of the rooms.
type RecordedRooms interface {
	Rooms(ctx context.Context) ([]store.RoomRecord, error)
}

// Signer keys the MACs of the session ids and of the retry cookie.
type Signer interface {
	MAC(purpose, msg string) string
}

// KeyFails counts the failed API key authentications per client and room.
type KeyFails interface {
	// Refuse answers 429 with msg, counted under label, and reports true
	// when key failed too often lately.
	Refuse(w http.ResponseWriter, key, label, msg string) bool
	// Fail counts a failure of key now.
	Fail(key string)
}

// Deps are a Gate's dependencies. With PassKeys or Gates nil, gate mode
// is off: its endpoints answer 404 gate_off.
type Deps struct {
	// PassKeys signs the passes and serves the JWKS.
	PassKeys *pass.Keys
	// Gates mints and redeems the passes and keeps the sessions they open.
	Gates Gates
	Rooms Rooms
	// Recorded is read for the proxy's protect prefixes when Redis cannot
	// be read at start-up; nil reads none.
	Recorded RecordedRooms
	// Signer keys the session ids that a pass opens.
	Signer Signer
	// Signal is told the shop's answers to the gate's protected requests
	// (the reverse proxy's, and those the gate middleware reports); nil
	// counts none.
	Signal ShopSignal
	// KeyFails throttles wrong room API keys.
	KeyFails KeyFails
	// AllowReport takes one of room's reports from its rate.
	AllowReport func(room string) bool
	// Fail answers err through web/response's table.
	Fail func(w http.ResponseWriter, r *http.Request, err error)
	// Page answers the buyer's error page p; base, when set, is the
	// waiting room's origin that a page on the shop's host loads from.
	Page func(w http.ResponseWriter, r *http.Request, p views.ErrorPage, base string)
	// Text is the visitor's messages.
	Text func(r *http.Request) views.Messages
	// Origin is the waiting room's origin as r reached it.
	Origin func(r *http.Request) string
	// Client is the client network of r that limits count.
	Client func(r *http.Request) string
	// Recover answers a handler's panic.
	Recover func(next http.Handler) http.Handler
	// Trusted may set X-Forwarded-For and X-Forwarded-Proto.
	Trusted []netip.Prefix
	// PublicURL is the site's absolute origin ("" takes each request's).
	PublicURL string
	// CSS is the path of the waiting room's stylesheet.
	CSS string
	// Checks counts /gate/check's answers by outcome; Rejected counts
	// the refused requests by reason.
	Checks, Rejected *prometheus.CounterVec
	// Registry takes the proxy's metrics.
	Registry prometheus.Registerer
	Log      *slog.Logger
}

// Gate serves gate mode: the JWKS, the shop's API, the hand-off's pass,
// the callback on the shop's host and nginx's check.
type Gate struct {
	d Deps
	// rooms caches the gate rooms' fail modes and shops' hosts.
	rooms gateRoomCache
	// storeDown is whether Redis answered the gate's last calls.
	storeDown storeDown
	// checks are d.Checks' counters, looked up once.
	checks checkCounters
}

// checkCounters are the counters of /gate/check's outcomes.
type checkCounters struct {
	allowed, denied, failOpen, failClosed prometheus.Counter
}

// New returns the Gate of d.
func New(d Deps) *Gate {
	gt := &Gate{d: d}
	if d.Checks != nil {
		gt.checks = checkCounters{allowed: d.Checks.WithLabelValues("allowed"), denied: d.Checks.WithLabelValues("denied"),
			failOpen: d.Checks.WithLabelValues("fail_open"), failClosed: d.Checks.WithLabelValues("fail_closed")}
	}
	return gt
}

// on reports whether gate mode is on.
func (gt *Gate) on() bool { return gt.d.Gates != nil && gt.d.PassKeys != nil }

// Remember records room name's settings as just read (a save).
func (gt *Gate) Remember(name string, set room.Settings) {
	gt.rooms.remember(name, gateSettings(set), time.Now())
}

// requestTimeout bounds the Redis work of one request.
const requestTimeout = 5 * time.Second

// BodyMax bounds the bodies of the gate's endpoints (a pass is well under
// 1 KiB).
const BodyMax = 8 << 10
