// Package config reads the server's settings from the environment, with
// command-line flags mirroring every variable.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// Config is the server's configuration.
type Config struct {
	// ListenAddr is the HTTP listen address (LISTEN_ADDR).
	ListenAddr string
	// RedisURL selects Redis (REDIS_URL); empty runs an embedded miniredis.
	RedisURL string
	// SecretKey signs visitor cookies (SECRET_KEY); empty means a random key
	// per process.
	SecretKey string
	// AdminToken guards the admin API (ADMIN_TOKEN); empty disables it.
	AdminToken string
	// Tick is the admission period (TICK).
	Tick time.Duration
	// ShutdownTimeout bounds the graceful shutdown (SHUTDOWN_TIMEOUT).
	ShutdownTimeout time.Duration
}

// Defaults used when neither a variable nor a flag is set.
const (
	DefaultListenAddr      = "127.0.0.1:8080"
	DefaultTick            = time.Second
	DefaultShutdownTimeout = 10 * time.Second
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
	dur(&c.Tick, "tick", "TICK", DefaultTick, "admission period")
	dur(&c.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", DefaultShutdownTimeout, "graceful shutdown bound")
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
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
	}
	return nil
}
