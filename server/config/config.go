// Package config reads the server's settings from the environment, with
// command-line flags mirroring every variable.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"waitingroom/server/egress"
	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// Config is the server's configuration.
type Config struct {
	// ListenAddr is the HTTP listen address (LISTEN_ADDR).
	ListenAddr string
	// RedisURL selects Redis (REDIS_URL); empty runs an embedded miniredis.
	RedisURL string
	// Sentinel, when set, reaches Redis through Sentinel
	// (REDIS_SENTINEL_MASTER and REDIS_SENTINEL_ADDRS, comma-separated).
	SentinelMaster string
	SentinelAddrs  []string
	// DatabaseURL selects the order database (DATABASE_URL); empty runs an
	// embedded SQL store.
	DatabaseURL string
	// DBMaxConns is the order database's pool size (DB_MAX_CONNS).
	DBMaxConns int
	// OrderWork is simulated extra work per order transaction (ORDER_WORK),
	// for calibration demos of a slower downstream; 0 in production.
	OrderWork time.Duration
	// SecretKey signs visitor cookies (SECRET_KEY); empty means a random key
	// per process.
	SecretKey string
	// AdminToken guards the admin API (ADMIN_TOKEN); empty disables it.
	AdminToken string
	// Tick is the admission period (TICK).
	Tick time.Duration
	// ShutdownTimeout bounds the graceful shutdown (SHUTDOWN_TIMEOUT).
	ShutdownTimeout time.Duration
	// TrustedProxies may set X-Forwarded-For (TRUSTED_PROXIES, a comma
	// separated list of CIDRs or addresses).
	TrustedProxies []netip.Prefix
	// SSEMaxPerIP caps concurrent SSE connections per client IP
	// (SSE_MAX_PER_IP).
	SSEMaxPerIP int
	// EnterRatePerIP caps enters per second per client IP
	// (ENTER_RATE_PER_IP); the burst is three times as many. It is a
	// safety valve far above human rates: a proof of work makes identities
	// cost.
	EnterRatePerIP float64
	// NetworkFlagJoins is how many pre-queue joins from one client network
	// (/24, /64) flag it in the admin figures (NETWORK_FLAG_JOINS).
	NetworkFlagJoins int
	// ChallengeDefault is the challenge setting (off, auto, always) of a
	// room created without one (CHALLENGE_DEFAULT).
	ChallengeDefault string
	// DebugAddr, when set, serves Go's pprof profiles on this loopback
	// address (DEBUG_ADDR).
	DebugAddr string
	// Demo creates the demo room and its product (DEMO=1); see DemoMode.
	Demo bool
	// MetricsAddr is the private listen address of /metrics (METRICS_ADDR),
	// never the public port.
	MetricsAddr string
	// AllowedOrigins are other origins (scheme://host[:port]) whose
	// cross-origin POST, PUT and DELETE requests are accepted
	// (ALLOWED_ORIGINS, comma-separated); the server's own host always is.
	AllowedOrigins []string
	// IPv6Prefix is the prefix length that makes one client network of IPv6
	// addresses for every per-client cap (IPV6_PREFIX); an IPv4 client is
	// its address.
	IPv6Prefix int
	// IdleConnsPerIP caps the idle keep-alive connections of one client
	// network (IDLE_CONNS_PER_IP); beyond it the oldest idle one is closed.
	IdleConnsPerIP int
	// SSEMaxStreams caps the buyers' live streams of this process
	// (SSE_MAX_STREAMS); beyond it a connect is answered 503. Unset: 80% of
	// the open-file limit less the widgets' streams and a reserve
	// (StreamsFor).
	SSEMaxStreams int
	// SSEHeartbeat is how often every live stream hears a beat
	// (SSE_HEARTBEAT): it keeps proxies from timing out, finds peers that
	// have gone, and tells a counting page the server still runs.
	SSEHeartbeat time.Duration
	// WidgetMaxStreams caps the embedded widgets' live streams of this
	// process (WIDGET_MAX_STREAMS); 0: widgets poll only.
	WidgetMaxStreams int
	// WriteTimeout bounds the writing of every response but the SSE
	// streams, which set their own deadlines (WRITE_TIMEOUT).
	WriteTimeout time.Duration
	// RedisNamespace prefixes every Redis key and channel of this
	// deployment (REDIS_NAMESPACE); empty means "wr:db<N>", N the Redis
	// database number (see queue.DefaultNamespace).
	RedisNamespace string

	// preview: link previews and the site's front door.

	// PublicURL is the site's absolute origin as buyers reach it
	// (PUBLIC_URL, "https://queue.shop.example"), used in link previews;
	// empty takes each request's host.
	PublicURL string
	// LandingURL, when set, is where GET / redirects (LANDING_URL);
	// empty shows the page listing the listed rooms.
	LandingURL string
	// OGFont is the font file that draws the default preview images
	// (OG_FONT, a .ttf, .otf or .ttc); empty searches known CJK font paths.
	OGFont string

	// gate: the passes that send buyers on to an outside shop.

	// PassSigningKey is the PKCS#8 PEM file of the Ed25519 key that signs
	// the passes (PASS_SIGNING_KEY); empty derives one from SECRET_KEY.
	PassSigningKey string
	// PassSigningKeyPrevious is the PEM file of the key signed with before
	// the last rotation (PASS_SIGNING_KEY_PREVIOUS): still trusted, and
	// listed in the JWKS. Optional.
	PassSigningKeyPrevious string

	// gate: reverse-proxy mode.

	// OriginURL is the shop that the proxy listener serves (ORIGIN_URL,
	// an absolute http(s) URL such as http://127.0.0.1:3000); set with
	// ProxyAddr or not at all.
	OriginURL string
	// ProxyAddr is the proxy listener's address (PROXY_ADDR), a second
	// listener that serves the shop at OriginURL with the rooms' protect
	// prefixes guarded; empty turns reverse-proxy mode off.
	ProxyAddr string
}

// Defaults used when neither a variable nor a flag is set.
const (
	DefaultListenAddr      = "127.0.0.1:8080"
	DefaultTick            = time.Second
	DefaultSSEHeartbeat    = 15 * time.Second
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultSSEMaxPerIP leaves room for a crowd behind one address
	// (carrier-grade NAT) while keeping one address from most of a
	// process's ~20,000 files.
	DefaultSSEMaxPerIP    = 10000
	DefaultEnterRatePerIP = 200
	// DefaultChallenge is CHALLENGE_DEFAULT's default.
	DefaultChallenge      = room.ChallengeAuto
	DefaultDBMaxConns     = 40
	DefaultMetricsAddr    = "127.0.0.1:9090"
	DefaultIPv6Prefix     = 64
	DefaultIdleConnsPerIP = 64
	// DefaultNetworkFlagJoins flags a network with 50 pre-queue joins.
	DefaultNetworkFlagJoins = 50
	// DefaultWidgetMaxStreams leaves most of a process's ~20,000 files
	// to the buyers' streams.
	DefaultWidgetMaxStreams = 4000
	DefaultWriteTimeout     = 30 * time.Second
	// MinAdminToken is the shortest ADMIN_TOKEN accepted, in bytes.
	MinAdminToken = 32
)

// Parse reads the configuration from getenv, then from args, which override
// the environment. It returns an error naming the bad variable or flag.
func Parse(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	fs := flag.NewFlagSet("waitingroom", flag.ContinueOnError)
	fs.SetOutput(usage)
	var c Config
	str := func(p *string, name, env, def, help string) {
		v := getenv(env)
		if v == "" {
			v = def
		}
		fs.StringVar(p, name, v, help+" ($"+env+")")
	}
	str(&c.ListenAddr, "listen", "LISTEN_ADDR", DefaultListenAddr, "HTTP listen address")
	str(&c.RedisURL, "redis-url", "REDIS_URL", "", "Redis URL; empty runs an embedded in-process Redis")
	str(&c.DatabaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL URL of the order database; empty runs an embedded SQL store")
	str(&c.SecretKey, "secret-key", "SECRET_KEY", "", "key that signs visitor cookies (at least 16 bytes); empty is random per process")
	str(&c.AdminToken, "admin-token", "ADMIN_TOKEN", "", "bearer token of the admin API (at least 32 bytes); empty disables it")
	str(&c.MetricsAddr, "metrics-addr", "METRICS_ADDR", DefaultMetricsAddr, "private listen address of /metrics")
	var errs []error
	dur := func(p *time.Duration, name, env string, def time.Duration, help string) {
		v := def
		if s := getenv(env); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", env, err))
			}
			v = d
		}
		fs.DurationVar(p, name, v, help+" ($"+env+")")
	}
	str(&c.DebugAddr, "debug-addr", "DEBUG_ADDR", "", "loopback address for Go's pprof profiles; empty disables them")
	str(&c.RedisNamespace, "redis-namespace", "REDIS_NAMESPACE", "", "prefix of every Redis key and channel of this deployment ([A-Za-z0-9:_-], at most 64); empty is wr:db<N>, N the Redis database")
	str(&c.PublicURL, "public-url", "PUBLIC_URL", "", "absolute origin of the site as buyers reach it (https://queue.shop.example), for link previews; empty uses each request's host")
	str(&c.LandingURL, "landing-url", "LANDING_URL", "", "absolute http(s) URL that GET / redirects to; empty lists the listed rooms")
	str(&c.OGFont, "og-font", "OG_FONT", "", "font file (.ttf, .otf, .ttc) for the default preview images; empty searches known CJK font paths")
	str(&c.PassSigningKey, "pass-signing-key", "PASS_SIGNING_KEY", "", "PKCS#8 PEM file of the Ed25519 key that signs gate passes (openssl genpkey -algorithm ed25519); empty derives one from SECRET_KEY")
	str(&c.PassSigningKeyPrevious, "pass-signing-key-previous", "PASS_SIGNING_KEY_PREVIOUS", "", "PEM file of the previous pass signing key, still trusted after a rotation (optional)")
	str(&c.OriginURL, "origin-url", "ORIGIN_URL", "", "reverse-proxy mode: absolute http(s) URL of the shop served on -proxy-addr (http://127.0.0.1:3000)")
	str(&c.ProxyAddr, "proxy-addr", "PROXY_ADDR", "", "reverse-proxy mode: listen address that serves ORIGIN_URL with the rooms' protect prefixes guarded; empty: off")
	var maxStreams string
	str(&maxStreams, "sse-max-streams", "SSE_MAX_STREAMS", "", "live buyer SSE streams per process, beyond which a connect is answered 503; empty: 80% of the open-file limit less the widgets' streams and a reserve")
	var proxies, maxPerIP, ratePerIP, dbConns, sentinels, origins, v6Prefix, idleConns, widgetStreams, flagJoins string
	str(&flagJoins, "network-flag-joins", "NETWORK_FLAG_JOINS", strconv.Itoa(DefaultNetworkFlagJoins), "pre-queue joins from one client network (/24, /64) that flag it in the admin figures")
	str(&widgetStreams, "widget-max-streams", "WIDGET_MAX_STREAMS", strconv.Itoa(DefaultWidgetMaxStreams), "live streams of embedded widgets per process (0: widgets poll only)")
	str(&origins, "allowed-origins", "ALLOWED_ORIGINS", "", "comma-separated origins (https://shop.example) whose cross-origin POST, PUT and DELETE are accepted")
	str(&v6Prefix, "ipv6-prefix", "IPV6_PREFIX", strconv.Itoa(DefaultIPv6Prefix), "IPv6 prefix length that per-client caps count as one client")
	str(&idleConns, "idle-conns-per-ip", "IDLE_CONNS_PER_IP", strconv.Itoa(DefaultIdleConnsPerIP), "idle keep-alive connections kept per client network")
	str(&c.SentinelMaster, "redis-sentinel-master", "REDIS_SENTINEL_MASTER", "", "Sentinel master name (with -redis-sentinel-addrs)")
	str(&sentinels, "redis-sentinel-addrs", "REDIS_SENTINEL_ADDRS", "", "comma-separated Sentinel addresses")
	str(&dbConns, "db-max-conns", "DB_MAX_CONNS", strconv.Itoa(DefaultDBMaxConns), "order database connection pool size")
	str(&proxies, "trusted-proxies", "TRUSTED_PROXIES", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed")
	str(&maxPerIP, "sse-max-per-ip", "SSE_MAX_PER_IP", strconv.Itoa(DefaultSSEMaxPerIP), "concurrent SSE connections per client IP")
	str(&ratePerIP, "enter-rate-per-ip", "ENTER_RATE_PER_IP", strconv.Itoa(DefaultEnterRatePerIP), "enters per second per client IP (burst: three times)")
	str(&c.ChallengeDefault, "challenge-default", "CHALLENGE_DEFAULT", DefaultChallenge, "proof-of-work challenge of a room created without one: off, auto or always")
	demo, demoErr := parseBool(getenv("DEMO"))
	if demoErr != nil {
		errs = append(errs, fmt.Errorf("DEMO: %w", demoErr))
	}
	fs.BoolVar(&c.Demo, "demo", demo, "create the demo room and its product even with external stores ($DEMO)")
	dur(&c.Tick, "tick", "TICK", DefaultTick, "admission period")
	dur(&c.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", DefaultShutdownTimeout, "graceful shutdown bound")
	dur(&c.OrderWork, "order-work", "ORDER_WORK", 0, "simulated extra work per order transaction (calibration demos only)")
	dur(&c.SSEHeartbeat, "sse-heartbeat", "SSE_HEARTBEAT", DefaultSSEHeartbeat, "period of the beat every live stream hears; a counting page stops when it hears nothing for a fifth more")
	dur(&c.WriteTimeout, "write-timeout", "WRITE_TIMEOUT", DefaultWriteTimeout, "bound on writing a response (SSE streams excepted)")
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, a := range strings.Split(sentinels, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.SentinelAddrs = append(c.SentinelAddrs, a)
		}
	}
	var err error
	if c.DBMaxConns, err = strconv.Atoi(dbConns); err != nil || c.DBMaxConns < 1 || c.DBMaxConns > 10000 {
		return Config{}, fmt.Errorf("DB_MAX_CONNS %q must be between 1 and 10000", dbConns)
	}
	if c.TrustedProxies, err = parsePrefixes(proxies); err != nil {
		return Config{}, fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	if c.SSEMaxPerIP, err = strconv.Atoi(maxPerIP); err != nil || c.SSEMaxPerIP < 1 {
		return Config{}, fmt.Errorf("SSE_MAX_PER_IP %q must be a positive integer", maxPerIP)
	}
	if c.EnterRatePerIP, err = strconv.ParseFloat(ratePerIP, 64); err != nil || !(c.EnterRatePerIP > 0 && c.EnterRatePerIP <= 1e6) {
		return Config{}, fmt.Errorf("ENTER_RATE_PER_IP %q must be a number above 0", ratePerIP)
	}
	if c.NetworkFlagJoins, err = strconv.Atoi(flagJoins); err != nil || c.NetworkFlagJoins < 1 {
		return Config{}, fmt.Errorf("NETWORK_FLAG_JOINS %q must be a positive integer", flagJoins)
	}
	if c.AllowedOrigins, err = parseOrigins(origins); err != nil {
		return Config{}, fmt.Errorf("ALLOWED_ORIGINS: %w", err)
	}
	if c.IPv6Prefix, err = strconv.Atoi(v6Prefix); err != nil || c.IPv6Prefix < 16 || c.IPv6Prefix > 128 {
		return Config{}, fmt.Errorf("IPV6_PREFIX %q must be between 16 and 128", v6Prefix)
	}
	if c.IdleConnsPerIP, err = strconv.Atoi(idleConns); err != nil || c.IdleConnsPerIP < 1 {
		return Config{}, fmt.Errorf("IDLE_CONNS_PER_IP %q must be a positive integer", idleConns)
	}
	if c.WidgetMaxStreams, err = strconv.Atoi(widgetStreams); err != nil || c.WidgetMaxStreams < 0 {
		return Config{}, fmt.Errorf("WIDGET_MAX_STREAMS %q must be an integer, 0 or more", widgetStreams)
	}
	if maxStreams == "" {
		c.SSEMaxStreams = StreamsFor(fileLimit(), c.WidgetMaxStreams)
	} else if c.SSEMaxStreams, err = strconv.Atoi(maxStreams); err != nil || c.SSEMaxStreams < 1 {
		return Config{}, fmt.Errorf("SSE_MAX_STREAMS %q must be a positive integer", maxStreams)
	}
	if c.PublicURL, err = parsePublicURL(c.PublicURL); err != nil {
		return Config{}, fmt.Errorf("PUBLIC_URL: %w", err)
	}
	if c.LandingURL != "" && !absoluteHTTP(c.LandingURL) {
		return Config{}, fmt.Errorf("LANDING_URL %q must be an absolute http(s) URL such as https://shop.example/sale", c.LandingURL)
	}
	if c.OriginURL, err = parseOriginURL(c.OriginURL, c.ProxyAddr); err != nil {
		return Config{}, err
	}
	return c, c.validate()
}

// parseOriginURL checks ORIGIN_URL against PROXY_ADDR: both set or
// neither, and the origin an absolute http(s) URL with neither query,
// fragment nor credentials (a trailing slash is dropped).
func parseOriginURL(origin, proxyAddr string) (string, error) {
	switch {
	case origin == "" && proxyAddr == "":
		return "", nil
	case origin == "":
		return "", fmt.Errorf("PROXY_ADDR %q needs ORIGIN_URL, the shop it serves (http://127.0.0.1:3000)", proxyAddr)
	case proxyAddr == "":
		return "", fmt.Errorf("ORIGIN_URL %q needs PROXY_ADDR, the address that serves it (127.0.0.1:8081)", origin)
	}
	u, err := url.Parse(origin)
	if err != nil || !absoluteHTTP(origin) || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		if err == nil {
			origin = u.Redacted() // a password is never echoed
		}
		return "", fmt.Errorf("ORIGIN_URL %q must be an absolute http(s) URL without query, such as http://127.0.0.1:3000", origin)
	}
	if err := egress.CheckHost(u.Hostname()); err != nil {
		return "", fmt.Errorf("ORIGIN_URL: %w; loopback and private addresses are allowed", err)
	}
	return strings.TrimSuffix(origin, "/"), nil
}

// parsePublicURL reads PUBLIC_URL: empty, or an http(s) origin (a
// trailing slash is dropped); it returns the origin.
func parsePublicURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	o, err := parseOrigins(s)
	if err != nil || len(o) != 1 || strings.Contains(s, ",") {
		return "", fmt.Errorf("%q must be the absolute origin of the site, such as https://queue.shop.example (a scheme, a host, an optional port, no path)", s)
	}
	return o[0], nil
}

// absoluteHTTP reports whether u is an absolute http or https URL with a
// host and no credentials.
func absoluteHTTP(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" && p.User == nil &&
		len(u) <= 2048 && !strings.ContainsAny(u, " \t\r\n")
}

// parseOrigins reads a comma-separated list of origins: a scheme (http or
// https) and a host, with neither path, query nor credentials.
func parseOrigins(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := url.Parse(part)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("%q is not an origin such as https://shop.example", part)
		}
		out = append(out, u.Scheme+"://"+u.Host)
	}
	return out, nil
}

// parsePrefixes reads a comma-separated list of CIDRs or single addresses.
func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR nor an address", part)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func (c Config) validate() error {
	switch {
	case c.ListenAddr == "":
		return errors.New("LISTEN_ADDR must not be empty")
	case c.Tick < 10*time.Millisecond || c.Tick > time.Minute:
		return fmt.Errorf("TICK %v must be between 10ms and 1m", c.Tick)
	case c.SSEHeartbeat < 100*time.Millisecond || c.SSEHeartbeat > time.Minute:
		return fmt.Errorf("SSE_HEARTBEAT %v must be between 100ms and 1m", c.SSEHeartbeat)
	case c.SecretKey != "" && len(c.SecretKey) < 16:
		return errors.New("SECRET_KEY must be at least 16 bytes")
	case c.AdminToken != "" && len(c.AdminToken) < MinAdminToken:
		return fmt.Errorf("ADMIN_TOKEN must be at least %d bytes (try: openssl rand -hex 32)", MinAdminToken)
	case c.MetricsAddr == "":
		return errors.New("METRICS_ADDR must not be empty")
	case c.WriteTimeout < time.Second || c.WriteTimeout > 10*time.Minute:
		return fmt.Errorf("WRITE_TIMEOUT %v must be between 1s and 10m", c.WriteTimeout)
	case c.ShutdownTimeout <= 0:
		return errors.New("SHUTDOWN_TIMEOUT must be positive")
	case c.OrderWork < 0 || c.OrderWork > 10*time.Second:
		return errors.New("ORDER_WORK must be between 0 and 10s")
	case c.RedisNamespace != "" && !queue.ValidNamespace(c.RedisNamespace):
		return fmt.Errorf("REDIS_NAMESPACE %q must be 1 to %d characters of A-Z, a-z, 0-9, ':', '_' and '-'", c.RedisNamespace, queue.MaxNamespaceLen)
	case !room.ValidChallenge(c.ChallengeDefault):
		return fmt.Errorf("CHALLENGE_DEFAULT %q must be off, auto or always", c.ChallengeDefault)
	case c.PassSigningKeyPrevious != "" && c.PassSigningKey == "":
		return errors.New("PASS_SIGNING_KEY_PREVIOUS needs PASS_SIGNING_KEY (the key rotated to)")
	}
	return nil
}
