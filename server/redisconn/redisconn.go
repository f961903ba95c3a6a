// Package redisconn opens the Redis deployment named by REDIS_URL, or an
// embedded in-process Redis when none is given.
package redisconn

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Conn is an open Redis client and what closes it.
type Conn struct {
	Client redis.UniversalClient
	// Embedded reports that Client talks to an in-process miniredis.
	Embedded bool
	close    func() error
	sent     *atomic.Int64
}

// Commands returns how many commands this process has sent to Redis (a
// script call counts as one), for the push-cost measurements.
func (c *Conn) Commands() int64 { return c.sent.Load() }

// counter is a go-redis hook that counts the commands a process sends.
type counter struct{ n *atomic.Int64 }

func (counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func newConn(c redis.UniversalClient, embedded bool, closeFn func() error) *Conn {
	n := new(atomic.Int64)
	c.AddHook(counter{n})
	return &Conn{Client: c, Embedded: embedded, close: closeFn, sent: n}
}

// Close closes the client and stops the embedded server, if any.
func (c *Conn) Close() error { return c.close() }

// Sentinel names a Sentinel-managed deployment: the master's name and the
// sentinels' addresses (REDIS_SENTINEL_MASTER, REDIS_SENTINEL_ADDRS).
type Sentinel struct {
	Master string
	Addrs  []string
}

// Open connects to Redis and pings it. With a Sentinel, it opens a failover
// client (REDIS_URL, if set, gives the password and database). Otherwise a
// URL with addr= query parameters opens a Cluster client (go-redis's
// cluster URL form), and any other URL a single-node client. An empty URL
// without a Sentinel starts an embedded miniredis, which keeps nothing
// across restarts and is for demos only. It returns an error when the
// settings are malformed or the server does not answer.
func Open(ctx context.Context, rawURL string, sentinel Sentinel, log *slog.Logger) (*Conn, error) {
	if sentinel.Master != "" || len(sentinel.Addrs) > 0 {
		return openSentinel(ctx, rawURL, sentinel, log)
	}
	if rawURL == "" {
		return openEmbedded(log)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redisconn: parse REDIS_URL: %w", err)
	}
	var c redis.UniversalClient
	if u.Query().Has("addr") {
		opt, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redisconn: parse cluster REDIS_URL: %w", err)
		}
		c = redis.NewClusterClient(opt)
	} else {
		opt, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redisconn: parse REDIS_URL: %w", err)
		}
		c = redis.NewClient(opt)
	}
	if err := ping(ctx, c, u.Redacted()); err != nil {
		return nil, err
	}
	log.Info("redis connected", "url", u.Redacted())
	return newConn(c, false, c.Close), nil
}

func ping(ctx context.Context, c redis.UniversalClient, what string) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return fmt.Errorf("redisconn: ping %s: %w", what, err)
	}
	return nil
}

func openSentinel(ctx context.Context, rawURL string, s Sentinel, log *slog.Logger) (*Conn, error) {
	if s.Master == "" || len(s.Addrs) == 0 {
		return nil, fmt.Errorf("redisconn: REDIS_SENTINEL_MASTER and REDIS_SENTINEL_ADDRS go together")
	}
	opt := &redis.FailoverOptions{MasterName: s.Master, SentinelAddrs: s.Addrs}
	if rawURL != "" {
		base, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("redisconn: parse REDIS_URL: %w", err)
		}
		opt.Username, opt.Password, opt.DB = base.Username, base.Password, base.DB
	}
	c := redis.NewFailoverClient(opt)
	what := "sentinel master " + s.Master
	if err := ping(ctx, c, what); err != nil {
		return nil, err
	}
	log.Info("redis connected", "via", what, "sentinels", s.Addrs)
	return newConn(c, false, c.Close), nil
}

func openEmbedded(log *slog.Logger) (*Conn, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true) // tokens and slots expire on the wall clock
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("redisconn: start embedded redis: %w", err)
	}
	log.Warn("REDIS_URL is empty: running on an EMBEDDED in-process Redis (miniredis). " +
		"The line is lost on restart and cannot be shared by several instances. " +
		"Set REDIS_URL for anything but a demo.")
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	return newConn(c, true, func() error {
		err := c.Close()
		m.Close()
		return err
	}), nil
}
