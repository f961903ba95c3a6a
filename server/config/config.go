// Package config reads the server's settings from the environment, with
// command-line flags mirroring every variable.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"waitingroom/server/queue"
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
	// (ENTER_RATE_PER_IP); the burst is three times as many.
	EnterRatePerIP float64
	// DebugAddr, when set, serves Go's pprof profiles on this loopback
	// address (DEBUG_ADDR).
	DebugAddr string
	// RedisNamespace prefixes every Redis key and channel of this
	// deployment (REDIS_NAMESPACE); empty means "wr:db<N>", N the Redis
	// database number (see queue.DefaultNamespace).
	RedisNamespace string
}

// Defaults used when neither a variable nor a flag is set.
const (
	DefaultListenAddr      = "127.0.0.1:8080"
	DefaultTick            = time.Second
	DefaultShutdownTimeout = 10 * time.Second
	DefaultSSEMaxPerIP     = 50
	DefaultEnterRatePerIP  = 10
	DefaultDBMaxConns      = 40
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
	str(&c.AdminToken, "admin-token", "ADMIN_TOKEN", "", "bearer token of the admin API; empty disables it")
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
	var proxies, maxPerIP, ratePerIP, dbConns, sentinels string
	str(&c.SentinelMaster, "redis-sentinel-master", "REDIS_SENTINEL_MASTER", "", "Sentinel master name (with -redis-sentinel-addrs)")
	str(&sentinels, "redis-sentinel-addrs", "REDIS_SENTINEL_ADDRS", "", "comma-separated Sentinel addresses")
	str(&dbConns, "db-max-conns", "DB_MAX_CONNS", strconv.Itoa(DefaultDBMaxConns), "order database connection pool size")
	str(&proxies, "trusted-proxies", "TRUSTED_PROXIES", "", "comma-separated CIDRs of proxies whose X-Forwarded-For is believed")
	str(&maxPerIP, "sse-max-per-ip", "SSE_MAX_PER_IP", strconv.Itoa(DefaultSSEMaxPerIP), "concurrent SSE connections per client IP")
	str(&ratePerIP, "enter-rate-per-ip", "ENTER_RATE_PER_IP", strconv.Itoa(DefaultEnterRatePerIP), "enters per second per client IP (burst: three times)")
	dur(&c.Tick, "tick", "TICK", DefaultTick, "admission period")
	dur(&c.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", DefaultShutdownTimeout, "graceful shutdown bound")
	dur(&c.OrderWork, "order-work", "ORDER_WORK", 0, "simulated extra work per order transaction (calibration demos only)")
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
	return c, c.validate()
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
	case c.SecretKey != "" && len(c.SecretKey) < 16:
		return errors.New("SECRET_KEY must be at least 16 bytes")
	case c.AdminToken != "" && len(c.AdminToken) < 8:
		return errors.New("ADMIN_TOKEN must be at least 8 bytes")
	case c.ShutdownTimeout <= 0:
		return errors.New("SHUTDOWN_TIMEOUT must be positive")
	case c.OrderWork < 0 || c.OrderWork > 10*time.Second:
		return errors.New("ORDER_WORK must be between 0 and 10s")
	case c.RedisNamespace != "" && !queue.ValidNamespace(c.RedisNamespace):
		return fmt.Errorf("REDIS_NAMESPACE %q must be 1 to %d characters of A-Z, a-z, 0-9, ':', '_' and '-'", c.RedisNamespace, queue.MaxNamespaceLen)
	}
	return nil
}
