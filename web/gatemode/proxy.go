package gatemode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"waitingroom/server/egress"
	"waitingroom/server/queue"
	"waitingroom/web/request"
)

// Reverse-proxy mode (gate): a second listener serves the shop at
// ORIGIN_URL through httputil.ReverseProxy. Every request goes straight
// through, streamed, but POST /_waitingroom/enter (the hand-off, served
// here and never forwarded) and requests under some room's protect prefix
// without a live wr_gate session of that room, which are sent to the room.

// GateSessions checks the gate's sessions (server/queue).
type GateSessions interface {
	// TouchSession reports a live session and, when renew and the room's
	// mode is "idle", pushes its expiry; queue.ErrSessionGone when it is
	// not live.
	TouchSession(ctx context.Context, roomName, sessionID string, renew bool) (queue.Session, error)
}

// ProxyOptions configure a Proxy.
type ProxyOptions struct {
	// Origin is the shop (ORIGIN_URL), an absolute http(s) URL.
	Origin string
	// Rooms are the source of the protect prefixes (required).
	Rooms ProtectRooms
	// Recorded is the database's record of the rooms, read for the protect
	// prefixes when Redis cannot be read at start-up; nil uses the
	// Gate's (Deps.Recorded).
	Recorded RecordedRooms
	// Sessions checks wr_gate sessions; nil uses the Gate's (Deps.Gates).
	Sessions GateSessions
	// Enter serves POST /_waitingroom/enter (verify, redeem, set wr_gate);
	// nil uses the Gate's (Enter).
	Enter http.Handler
	// MainAddr is the main listener's address: without PUBLIC_URL, a room's
	// page is sent to on the proxy request's host name at its port.
	MainAddr string
	// Refresh is how often the protect prefixes are read (default 2 s).
	Refresh time.Duration
	// Transport reaches the origin; nil uses one with timeouts and bounded
	// idle connections (newOriginTransport).
	Transport http.RoundTripper
	// WriteTimeout bounds each write to the client (default 30 s): a
	// stream goes on while the client reads, a client that stops reading
	// is cut.
	WriteTimeout time.Duration
	// Signal is told the origin's answers to the protected requests of
	// live sessions (the adaptive controller's signal); nil uses the
	// Gate's (Deps.Signal), and none counts nothing.
	Signal ShopSignal
	// ConnState caps each client network's idle keep-alive connections;
	// nil caps none.
	ConnState func(net.Conn, http.ConnState)
}

// Proxy is the reverse-proxy listener's handler.
type Proxy struct {
	gt       *Gate
	rp       *httputil.ReverseProxy
	protect  *protectCache
	sessions GateSessions
	enter    http.Handler
	mainPort string
	write    time.Duration
	// firstWait is how long a request waits for the first protect table.
	firstWait time.Duration
	connState func(net.Conn, http.ConnState)
	requests  *prometheus.CounterVec
	log       *slog.Logger
}

const (
	// EnterPath is the hand-off's callback on the shop's host.
	EnterPath = "/_waitingroom/enter"
	// reservedPrefix is the gate's own paths on the shop's host: never
	// forwarded to the origin.
	reservedPrefix = "/_waitingroom/"
	// sessionCheckTimeout bounds the session check: past it, the room's
	// failOpen decides.
	sessionCheckTimeout = time.Second
	// firstLoadWait is how long a request waits for the first read of the
	// protect prefixes before it is answered "please retry".
	firstLoadWait         = 3 * time.Second
	defaultProtectRefresh = 2 * time.Second
)

// NewProxy returns the handler of the reverse-proxy listener.
func (gt *Gate) NewProxy(o ProxyOptions) (*Proxy, error) {
	origin, err := url.Parse(o.Origin)
	if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || origin.Host == "" {
		return nil, fmt.Errorf("proxy: origin must be an absolute http(s) URL")
	}
	if err := egress.CheckHost(origin.Hostname()); err != nil {
		return nil, fmt.Errorf("proxy: origin: %w", err)
	}
	if o.Sessions == nil && gt.d.Gates != nil {
		o.Sessions = gt.d.Gates
	}
	if o.Sessions == nil {
		return nil, errors.New("proxy: Sessions is required (Options.Gates)")
	}
	if o.Enter == nil {
		o.Enter = http.HandlerFunc(gt.Enter)
	}
	if o.Rooms == nil {
		return nil, errors.New("proxy: Rooms is required")
	}
	if o.Recorded == nil {
		o.Recorded = gt.d.Recorded
	}
	if o.Refresh <= 0 {
		o.Refresh = defaultProtectRefresh
	}
	if o.Transport == nil {
		o.Transport = newOriginTransport()
	}
	if o.Signal == nil {
		o.Signal = gt.d.Signal
	}
	if o.Signal != nil {
		o.Transport = observedTransport{next: o.Transport, signal: o.Signal}
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	_, port, _ := net.SplitHostPort(o.MainAddr)
	p := &Proxy{gt: gt, protect: newProtectCache(o.Rooms, o.Recorded, o.Refresh), sessions: o.Sessions, enter: o.Enter,
		mainPort: port, write: o.WriteTimeout, firstWait: firstLoadWait, requests: proxyRequests(gt.d.Registry), log: gt.d.Log.With("listener", "proxy"),
		connState: o.ConnState}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        func(pr *httputil.ProxyRequest) { p.rewrite(pr, origin) },
		Transport:      o.Transport,
		FlushInterval:  -1, // stream: every write of the origin reaches the client at once
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
		ErrorHandler:   p.originFailed,
		ModifyResponse: privateAnswer,
	}
	if gt.d.PublicURL == "" {
		p.log.Warn("PUBLIC_URL is empty: the proxy sends buyers to the rooms on the request's host at the main listener's port",
			"port", port)
	}
	return p, nil
}

// newOriginTransport reaches the origin: bounded dials that never reach an
// address package egress refuses, TLS handshakes and waits for response
// headers, and a bounded pool of idle connections.
func newOriginTransport() *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: egress.Control}).DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
	}
}

// Run reads the rooms' protect prefixes now and every Refresh until ctx is
// done. A failed read keeps the last table.
func (p *Proxy) Run(ctx context.Context) {
	t := time.NewTicker(p.protect.every)
	defer t.Stop()
	failing := false
	for {
		if err := p.protect.load(ctx); err != nil {
			if !failing && ctx.Err() == nil {
				p.log.Warn("proxy: protect prefixes not read; keeping the last ones", "err", err)
			}
			failing = true
		} else if failing {
			p.log.Info("proxy: protect prefixes read again")
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ConnState is the proxy http.Server's ConnState hook: it caps each
// client network's idle keep-alive connections, as the main listener's.
func (p *Proxy) ConnState(c net.Conn, st http.ConnState) {
	if p.connState != nil {
		p.connState(c, st)
	}
}

// Handler returns the proxy listener's handler.
func (p *Proxy) Handler() http.Handler {
	return p.gt.d.Recover(http.HandlerFunc(p.serve))
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	w = newDeadlineWriter(w, p.write)
	if checkPath(r.URL) != nil {
		p.count(proxyBadPath)
		p.page(w, r, http.StatusBadRequest, "")
		return
	}
	if strings.HasPrefix(strings.ToLower(cleanPath(r.URL.Path)), reservedPrefix) {
		p.count(proxyGate)
		p.serveReserved(w, r)
		return
	}
	table, ok := p.protect.current(r.Context(), p.firstWait)
	if !ok {
		p.count(proxyFailClosed)
		p.page(w, r, http.StatusServiceUnavailable, "")
		return
	}
	if rule, guarded := table.matchPath(r.URL.Path); guarded {
		through, live := p.admitted(w, r, rule)
		if !through {
			return
		}
		r = markGuarded(r)
		if live {
			r = markObserved(r, rule.room)
		}
	} else {
		p.count(proxyPassed)
	}
	p.rp.ServeHTTP(w, r)
}

func (p *Proxy) count(outcome string) { p.requests.WithLabelValues(outcome).Inc() }

// serveReserved serves the gate's own paths on the shop's host.
func (p *Proxy) serveReserved(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path != EnterPath:
		p.page(w, r, http.StatusNotFound, "")
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		p.page(w, r, http.StatusMethodNotAllowed, "")
	default:
		p.enter.ServeHTTP(w, r)
	}
}

// admitted checks a request to rule's protected path. It reports through
// to let it through, and live when a live session of the room did (not its
// failOpen); through is false when it has answered: a redirect to the room
// (or 403) without a live session, "please retry" when the session cannot
// be checked, or Redis is away, and the room fails closed.
func (p *Proxy) admitted(w http.ResponseWriter, r *http.Request, rule protectRule) (through, live bool) {
	id := gateSessionOf(r, rule.room)
	if id == "" {
		if p.protect.away.Load() {
			// Redis is away (the last read of the prefixes failed): the
			// room's page cannot let anyone in either.
			return p.failMode(w, r, rule, errors.New("redis away")), false
		}
		p.sendToRoom(w, r, rule.room)
		return false, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), sessionCheckTimeout)
	_, err := p.sessions.TouchSession(ctx, rule.room, id, true)
	cancel()
	switch {
	case err == nil:
		p.count(proxyAdmitted)
		return true, true
	case errors.Is(err, queue.ErrSessionGone):
		p.sendToRoom(w, r, rule.room)
		return false, false
	case r.Context().Err() != nil:
		return false, false // the client left
	default:
		return p.failMode(w, r, rule, err), false
	}
}

// failMode answers a protected request that cannot be checked, as its
// room chose: through (failOpen), or "please retry" (503).
func (p *Proxy) failMode(w http.ResponseWriter, r *http.Request, rule protectRule, err error) bool {
	if rule.failOpen {
		p.count(proxyFailOpen)
		p.log.Debug("proxy: session not checked; the room fails open", "room", rule.room, "err", err)
		return true
	}
	p.count(proxyFailClosed)
	p.log.Debug("proxy: session not checked; the room fails closed", "room", rule.room, "err", err)
	p.page(w, r, http.StatusServiceUnavailable, rule.room)
	return false
}

// sendToRoom answers a request without a session: 303 to the room's page
// for GET and HEAD, a 403 page linking to it otherwise.
func (p *Proxy) sendToRoom(w http.ResponseWriter, r *http.Request, roomName string) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		p.count(proxySentToRoom)
		http.Redirect(w, r, p.roomURL(r, roomName), http.StatusSeeOther)
		return
	}
	p.count(proxyRefused)
	p.page(w, r, http.StatusForbidden, roomName)
}

// roomBase is the origin of the waiting room's own pages: PUBLIC_URL,
// else the proxy request's host name at the main listener's port.
func (p *Proxy) roomBase(r *http.Request) string {
	if p.gt.d.PublicURL != "" {
		return p.gt.d.PublicURL
	}
	host := strings.ToLower(r.Host)
	if !request.ValidHost(host) {
		host = "localhost"
	}
	name := request.HostName(host)
	if strings.Contains(name, ":") {
		name = "[" + name + "]"
	}
	scheme := "http://"
	if p.gt.overTLS(r) {
		scheme = "https://"
	}
	if p.mainPort == "" {
		return scheme + name
	}
	return scheme + name + ":" + p.mainPort
}

func (p *Proxy) roomURL(r *http.Request, roomName string) string {
	return p.roomBase(r) + "/r/" + roomName
}

// rewrite makes the request to the origin: its URL and Host, and the
// X-Forwarded-For, -Host and -Proto headers. Those of a trusted proxy in
// front of this one are kept (its client, and https when it terminated
// TLS); anyone else's are dropped.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest, origin *url.URL) {
	pr.SetURL(origin)
	trusted := p.fromTrustedProxy(pr.In)
	if trusted {
		if v := pr.In.Header.Values("X-Forwarded-For"); len(v) > 0 {
			pr.Out.Header["X-Forwarded-For"] = v
		}
	}
	pr.SetXForwarded()
	if trusted {
		if v := pr.In.Header.Get("X-Forwarded-Proto"); v == "https" || v == "http" {
			pr.Out.Header.Set("X-Forwarded-Proto", v)
		}
		if v := pr.In.Header.Get("X-Forwarded-Host"); v != "" && request.ValidHost(strings.ToLower(v)) {
			pr.Out.Header.Set("X-Forwarded-Host", v)
		}
	}
}

func (p *Proxy) fromTrustedProxy(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && request.IsTrusted(a, p.gt.d.Trusted)
}

// originFailed answers when the origin could not be reached or did not
// answer in time: a 502 page in the visitor's language (never the error).
func (p *Proxy) originFailed(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client left; nobody reads an answer
	}
	p.count(proxyOriginError)
	p.log.Warn("proxy: origin failed", "method", r.Method, "path", r.URL.Path, "err", err)
	p.page(w, r, http.StatusBadGateway, "")
}
