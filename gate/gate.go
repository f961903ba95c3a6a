// Package gate puts a waitingroom room in front of a Go shop.
//
// Wrap the pages that need a turn (a checkout) with Gate.Protect. A buyer
// let in by the room arrives with a pass (a compact JWS) posted to
// EnterPath on the shop's host. The gate verifies the pass offline against
// the room's JWKS, redeems it once at waitingroom, which opens a session
// holding one of the room's slots, and keeps the session in its own
// first-party cookie (wr_gate). Every later request renews the session now
// and then; a visitor without a live session is sent to the room. Call
// Gate.End when the buyer is done, to give the slot back at once.
//
// The cookie carries a MAC keyed by the API key, so a forged one costs no
// call to waitingroom. When waitingroom is down, the gate fails open (lets
// buyers through) or closed (a "please retry" page), as the room's
// operator chose or as Options.FailOpen says. Only a background probe
// (GET /api/rooms/{room}/gate) decides that waitingroom is down, after
// several failures in a row; a call that waitingroom refuses (a rotated
// API key, a throttle) or that fails alone fails closed for its request.
// At most 64 calls to waitingroom are in flight at once.
//
// Protect also times the answers of the handlers it wraps and reports
// them to waitingroom once a second, in one small summary (report.go):
// a room with adaptive admission on sets its rate from them, admitting
// buyers as fast as the shop answers them well. Options.NoReport turns
// this off.
//
// The package depends only on the standard library and go-jose.
package gate

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// EnterPath is the path on the shop's host where the room posts passes
// (form fields pass and next). Protect serves it.
const EnterPath = "/_waitingroom/enter"

// CookieName is the gate's session cookie; its value is
// "<room>.<sessionID>.<mac>", where mac is the first 22 characters of
// base64url(HMAC-SHA256(key, room+"."+sessionID)) and key is
// HMAC-SHA256(APIKey, "waitingroom gate cookie v1"). A cookie whose MAC
// does not verify is no session, and costs no call to waitingroom.
const CookieName = "wr_gate"

// Options configure a Gate.
type Options struct {
	RoomURL    string        // base URL of waitingroom, e.g. https://queue.shop.example
	Room       string        // the room's name
	APIKey     string        // the room's API key (console: Gate, "New API key")
	Audience   string        // this shop's origin; must equal the room's TargetURL origin
	FailOpen   *bool         // nil: the room's failOpen from GET /api/rooms/{room}/gate (cached); closed before it is known
	Timeout    time.Duration // per call to waitingroom, default 2 s
	RenewEvery time.Duration // how often a request renews the session at waitingroom, default 10 s per session
	Client     *http.Client  // default: a client that follows no redirects and keeps 64 idle connections to waitingroom
	Logger     *slog.Logger  // default slog.Default()
	// NoReport turns off the report of the protected handlers' times to
	// waitingroom (the room's adaptive admission signal; see Protect).
	NoReport bool
}

// Gate guards a shop's handlers. It is safe for concurrent use. Make it
// with New.
type Gate struct {
	opts     Options
	base     string // RoomURL without a trailing slash
	roomPage string // RoomURL/r/{room}
	secure   bool   // the shop is served over https: cookies are Secure
	client   *http.Client
	log      *slog.Logger
	now      func() time.Time

	cookieKey []byte        // HMAC key of the cookie's MAC
	slots     chan struct{} // the calls to waitingroom in flight (at most maxCalls)
	probeGap  time.Duration // pause between the probes that confirm an outage

	keys    *keyCache
	cfg     *configCache
	live    *liveCache
	health  *health
	reports *reporter
}

// New checks opts and returns a Gate. It makes no network call.
func New(opts Options) (*Gate, error) {
	base, err := parseBase(opts.RoomURL)
	if err != nil {
		return nil, err
	}
	if opts.Room == "" || strings.ContainsAny(opts.Room, "/?#") {
		return nil, fmt.Errorf("gate: new: Room %q: want a room name", opts.Room)
	}
	if opts.APIKey == "" {
		return nil, errors.New("gate: new: APIKey is empty")
	}
	aud, err := parseOrigin(opts.Audience)
	if err != nil {
		return nil, err
	}
	opts.Audience = aud
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	if opts.RenewEvery <= 0 {
		opts.RenewEvery = 10 * time.Second
	}
	g := &Gate{
		opts:     opts,
		base:     base,
		roomPage: base + "/r/" + url.PathEscape(opts.Room),
		secure:   strings.HasPrefix(aud, "https://"),
		client:   opts.Client,
		log:      opts.Logger,
		now:      time.Now,

		cookieKey: cookieKey(opts.APIKey),
		slots:     make(chan struct{}, maxCalls),
		probeGap:  probeGap,
	}
	if g.client == nil {
		g.client = newClient(opts.Timeout)
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	g.log = g.log.With("room", opts.Room)
	g.keys = &keyCache{}
	g.cfg = &configCache{}
	g.live = newLiveCache(maxLiveEntries)
	g.health = &health{}
	g.reports = &reporter{every: reportEvery}
	return g, nil
}

// parseBase checks RoomURL: an absolute http(s) URL without userinfo,
// query or fragment.
func parseBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("gate: new: RoomURL %q: want an absolute http(s) URL", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// parseOrigin checks Audience and returns it as scheme://host[:port], in
// lower case and without the scheme's default port, as waitingroom writes
// a room's audience.
func parseOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("gate: new: Audience %q: want this shop's origin, scheme://host[:port]", raw)
	}
	host := strings.ToLower(u.Host)
	switch u.Scheme {
	case "https":
		host = strings.TrimSuffix(host, ":443")
	case "http":
		host = strings.TrimSuffix(host, ":80")
	}
	return u.Scheme + "://" + host, nil
}
