// Package console is the operator's console: the HTML pages under /admin
// (sign-in, rooms, products, branding, share links, embed, gate keys, the
// live dashboard, orders, attribution and the audit log). Its needs are
// the fields of Deps; a nil field turns its feature off.
package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/a-h/templ"
	"github.com/jonboulle/clockwork"

	"waitingroom/server/admin"
	"waitingroom/server/operator"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/media"
	"waitingroom/web/response"
)

// Rooms is the room store as the console reads it.
type Rooms interface {
	Room(ctx context.Context, name string) (room.Settings, error)
	Stats(ctx context.Context, name string) (queue.Stats, error)
	// Rooms lists the live rooms' names.
	Rooms(ctx context.Context) ([]string, error)
	// AdaptRooms reads the adaptive controller's state of the rooms of
	// names whose adaptive admission is on.
	AdaptRooms(ctx context.Context, names []string) (map[string]queue.AdaptRoom, error)
	// AdaptHistory reads room name's last n changes of the controller,
	// newest first.
	AdaptHistory(ctx context.Context, name string, n int) ([]queue.AdaptChange, error)
}

// Catalog is the product admin as the console reads it.
type Catalog interface {
	AdminProducts(ctx context.Context, room string) ([]order.Product, error)
}

// Networks reads a room's pre-queue networks for the dashboard.
type Networks interface {
	// Flagged returns whether room name had pre-queue networks lately,
	// those that reached the flag threshold, and the threshold.
	Flagged(ctx context.Context, name string, now time.Time) (seen bool, flagged []views.NetworkRow, threshold int64, err error)
}

// Throttle counts failed authentications per client network.
type Throttle interface {
	// Attempt counts one attempt of key at now, and returns how long key
	// must wait first (0: go on).
	Attempt(key string, now time.Time) time.Duration
	// Forgive takes back key's attempt made at at.
	Forgive(key string, at time.Time)
}

// Deps are the console's needs. Rooms, RoomWrites, ProductWrites, Log,
// Rejected, AssetURL, ClientKey, BaseURL and AdminFails are required;
// every other nil field turns its feature off.
type Deps struct {
	Rooms         Rooms
	RoomWrites    *admin.Rooms
	ProductWrites *admin.Products
	// Operators are the accounts and sessions; nil turns the console off
	// (its sign-in page says why).
	Operators Operators
	// Audit records who changed what and feeds the audit page and the
	// dashboard's timeline; nil records nothing.
	Audit Audit
	// Orders is the order database of the orders and attribution pages;
	// nil makes them say that none is attached.
	Orders Orders
	// Catalog lists a room's products; nil lists none.
	Catalog Catalog
	// Campaigns is the line's joins per campaign; nil shows the
	// attribution page's orders alone.
	Campaigns CampaignCounts
	// Recorded lists the database's record of the rooms; nil lists only
	// the live rooms.
	Recorded RecordedRooms
	// Shares are the rooms' short links; nil turns them off.
	Shares ShareLinks
	// Codes are the rooms' access codes; nil turns their page off.
	Codes Codes
	// Links are the rooms' test links; nil turns their page off.
	Links TestLinks
	// Images keeps the uploaded images; nil refuses uploads.
	Images *media.Store
	// Live is the rooms' per-second record; nil leaves the dashboard's
	// rates, charts and instances out.
	Live LiveStats
	// Stock is the dashboard's sold against stock; nil leaves it out.
	Stock StockSummaries
	// Networks flags the busy pre-queue networks on the dashboard.
	Networks Networks
	// DashboardStreams bounds the open dashboard streams (default
	// DefaultDashboardStreams).
	DashboardStreams int
	// NewAPIKey gives a room a new API key as an operator and returns it.
	NewAPIKey func(ctx context.Context, actor, name string) (string, error)
	// Devices signs the device cookies; nil signs them with a key of
	// this process alone.
	Devices *operator.Devices
	// AdminDigest is the SHA-256 of the admin token, nil when there is
	// none: a session opened with the token lasts while it stays.
	AdminDigest []byte
	// AdminFails counts failed admin token authentications, shared with
	// the admin API.
	AdminFails Throttle
	// ChallengeDefault is the challenge setting of a room saved without
	// one.
	ChallengeDefault string
	// ReadySpreadDefaultMs and ReadySpreadMaxMs are the default and
	// highest readySpreadMs.
	ReadySpreadDefaultMs, ReadySpreadMaxMs int
	// PublicURL is the site's configured origin ("" takes each request's
	// host).
	PublicURL string
	// TrustedProxies may say the request came over TLS.
	TrustedProxies []netip.Prefix
	// Fail answers errors through the one error table; the console
	// sets its console parts.
	Fail response.Failer
	// AssetURL is the fingerprinted URL of a static asset.
	AssetURL func(name string) string
	// ClientKey is a request's client network.
	ClientKey func(r *http.Request) string
	// BaseURL is the origin of the console's absolute URLs.
	BaseURL func(r *http.Request) string
	// Rejected counts a refused request by reason.
	Rejected func(reason string)
	Log      *slog.Logger
	// Clock is what the console decides by: the sign-in lockouts, the
	// dashboard's second, and its streams' ticks, session checks and
	// shared frames; nil is clockwork.NewRealClock(). A stream's write
	// deadlines are on the real clock whatever it is.
	Clock clockwork.Clock
}

// Console serves the console's pages; its exported methods are the
// handlers of its routes.
type Console struct {
	rooms         Rooms
	roomWrites    *admin.Rooms
	productWrites *admin.Products
	operators     Operators
	auditLog      Audit
	orderAdmin    Orders
	catalog       Catalog
	campaigns     CampaignCounts
	recorded      RecordedRooms
	shares        ShareLinks
	codes         Codes
	links         TestLinks
	images        *media.Store
	nets          Networks
	dash          *dashboard
	newAPIKey     func(ctx context.Context, actor, name string) (string, error)

	admin            []byte
	adminFails       Throttle
	devices          *operator.Devices
	challengeDefault string
	spreadDefault    int
	spreadMax        int
	publicURL        string
	trusted          []netip.Prefix

	// hashing holds a slot per password check under way, and
	// untrustedHashing one more per untrusted check (SigninUntrustedHashes).
	hashing, untrustedHashing chan struct{}
	// signins are the sign-in's lockouts.
	signins *signinGuard

	fail      response.Failer
	assetURL  func(name string) string
	clientKey func(r *http.Request) string
	baseURL   func(r *http.Request) string
	rejected  func(reason string)
	log       *slog.Logger
	clk       clockwork.Clock
}

// New returns the console of d.
func New(d Deps) (*Console, error) {
	if d.Rooms == nil || d.RoomWrites == nil || d.ProductWrites == nil || d.Log == nil || d.Rejected == nil ||
		d.AssetURL == nil || d.ClientKey == nil || d.BaseURL == nil || d.AdminFails == nil {
		return nil, errors.New("console: Rooms, RoomWrites, ProductWrites, Log, Rejected, AssetURL, ClientKey, BaseURL and AdminFails are required")
	}
	if d.Devices == nil {
		var err error
		if d.Devices, err = randomDevices(); err != nil {
			return nil, err
		}
	}
	if d.Clock == nil {
		d.Clock = clockwork.NewRealClock()
	}
	c := &Console{rooms: d.Rooms, roomWrites: d.RoomWrites, productWrites: d.ProductWrites,
		operators: d.Operators, auditLog: d.Audit, orderAdmin: d.Orders, catalog: d.Catalog,
		campaigns: d.Campaigns, recorded: d.Recorded, shares: d.Shares, codes: d.Codes, links: d.Links, images: d.Images, nets: d.Networks,
		dash: newDashboard(d), newAPIKey: d.NewAPIKey,
		admin: d.AdminDigest, adminFails: d.AdminFails, devices: d.Devices,
		challengeDefault: d.ChallengeDefault, spreadDefault: d.ReadySpreadDefaultMs, spreadMax: d.ReadySpreadMaxMs,
		publicURL: d.PublicURL, trusted: d.TrustedProxies,
		hashing: make(chan struct{}, SigninHashes), untrustedHashing: make(chan struct{}, SigninUntrustedHashes),
		signins: newSigninGuard(d.Clock.Now),
		fail:    d.Fail, assetURL: d.AssetURL, clientKey: d.ClientKey, baseURL: d.BaseURL, rejected: d.Rejected, log: d.Log,
		clk: d.Clock}
	c.fail.ConsoleLang, c.fail.Console = Lang, c.Error
	return c, nil
}

// requestTimeout bounds the store work of one console request.
const requestTimeout = 5 * time.Second

// readsBudget bounds a page whose reads each have a budget of their own
// (the rooms list, the dashboard): one slow read leaves the others'.
const readsBudget = 20 * time.Second

// render writes c as a page with status.
func (s *Console) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.Error("render", "path", r.URL.Path, "err", err)
		response.WriteError(w, http.StatusInternalServerError, "internal", "The page could not be rendered.")
		return
	}
	response.HTMLHeaders(w)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// effectiveChallenge is a room's challenge setting as it applies: the
// server's default for a room saved before the setting existed ("").
func (s *Console) effectiveChallenge(c string) string {
	if c == "" {
		return s.challengeDefault
	}
	return c
}

// leftoverProducts returns the products already in the database under
// room name; none without a catalog.
func (s *Console) leftoverProducts(ctx context.Context, name string) ([]order.Product, error) {
	if s.catalog == nil {
		return nil, nil
	}
	return s.catalog.AdminProducts(ctx, name)
}

// maxLeftoversShown bounds the leftover products a warning names.
const maxLeftoversShown = 50

// leftoverRows are ps as the settings page's warning lists them.
func leftoverRows(ps []order.Product) []views.LeftoverProduct {
	var out []views.LeftoverProduct
	for _, p := range ps[:min(len(ps), maxLeftoversShown)] {
		out = append(out, views.LeftoverProduct{Name: p.Name, Stock: p.Stock})
	}
	return out
}

// digest is the SHA-256 of s.
func digest(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}
