package config

import "strconv"

// DemoMode reports whether the server creates the demo room and its
// product: when DEMO is set, or when both stores are embedded (no Redis
// and no database configured), so that `make run` sells something. A
// production server, with its own Redis and database, has no demo.
func (c Config) DemoMode() bool {
	return c.Demo || c.EmbeddedStores()
}

// EmbeddedStores reports whether neither Redis nor the database is
// configured, so that both run in-process.
func (c Config) EmbeddedStores() bool {
	return c.RedisURL == "" && c.SentinelMaster == "" && len(c.SentinelAddrs) == 0 && c.DatabaseURL == ""
}

// parseBool reads a boolean variable; empty is false.
func parseBool(s string) (bool, error) {
	if s == "" {
		return false, nil
	}
	return strconv.ParseBool(s)
}
