package k6

import (
	"context"
	"slices"
	"time"
)

// settleRounds bounds the collections SettleMemory runs, a second apart.
const settleRounds = 8

// SettleTime is the longest SettleMemory takes, with room for the
// collections and the readings.
const SettleTime = settleRounds * 3 * time.Second / 2

// SettleMemory brings the servers' RSS down to what they hold, before a
// soak's memory figures are read: a fresh server keeps some 30 MiB of
// start-up garbage resident after one collection, and returns it to the
// system over the next few, which a soak would see as its connections
// costing nothing; at the end, the ramp's garbage is not the
// connections'. It collects each server's garbage (through its GC URL) a
// second apart until their summed RSS falls by less than 1 MiB a server,
// at most settleRounds times. Servers without GC URLs are left as they
// are.
func SettleMemory(ctx context.Context, servers []SoakServer) error {
	if !slices.ContainsFunc(servers, func(s SoakServer) bool { return s.GCURL != "" }) {
		return nil
	}
	last := -1.0
	for range settleRounds {
		if err := CollectGarbage(ctx, servers); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		now, err := ScrapeSoakAll(ctx, servers)
		if err != nil {
			return err
		}
		rss := sumScrapes(now)[metricRSS]
		if settled(last, rss, len(servers)) {
			return nil
		}
		last = rss
	}
	return nil
}

// settled reports whether the summed RSS fell by less than 1 MiB a server
// from one collection to the next (last < 0: no previous reading).
func settled(last, rss float64, servers int) bool {
	return last >= 0 && last-rss < float64(servers)*(1<<20)
}
