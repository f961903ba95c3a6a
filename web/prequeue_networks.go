package web

import (
	"context"
	"sync"
	"time"

	"waitingroom/server/queue"
	"waitingroom/views"
)

const (
	// DefaultNetworkFlagJoins is how many pre-queue joins from one client
	// network flag it when Options.NetworkFlagJoins is 0.
	DefaultNetworkFlagJoins = 50
	// topNetworks is how many client networks the admin room view lists.
	topNetworks = 20
	// networksFresh is how long the dashboard shows a room's networks
	// before reading them again: the read scans the room's whole count.
	networksFresh = 10 * time.Second
	// networksCached bounds the rooms whose networks are kept.
	networksCached = 256
)

// NetworkLister reads a room's pre-queue joins per client network, most
// first (queue.Engine).
type NetworkLister interface {
	Networks(ctx context.Context, name string, top int) ([]queue.NetworkCount, error)
}

// networkView is a client network's pre-queue joins as the admin API
// shows them.
type networkView struct {
	queue.NetworkCount
	// Flagged: the network's joins reached the flag threshold.
	Flagged bool `json:"flagged"`
}

// networkFlags reads the rooms' pre-queue networks and flags those with
// threshold joins or more.
type networkFlags struct {
	rooms     NetworkLister
	threshold int64

	mu    sync.Mutex
	cache map[string]readNetworks
}

// readNetworks are a room's networks as read at at.
type readNetworks struct {
	at   time.Time
	nets []networkView
}

func newNetworkFlags(rooms NetworkLister, threshold int) *networkFlags {
	if threshold <= 0 {
		threshold = DefaultNetworkFlagJoins
	}
	return &networkFlags{rooms: rooms, threshold: int64(threshold), cache: map[string]readNetworks{}}
}

// read returns room name's top networks, flagged, as they are now (never
// nil).
func (f *networkFlags) read(ctx context.Context, name string) ([]networkView, error) {
	nets, err := f.rooms.Networks(ctx, name, topNetworks)
	if err != nil {
		return nil, err
	}
	return flagNetworks(nets, f.threshold), nil
}

// recent is read at most networksFresh old at now: the dashboard reads
// it every second.
func (f *networkFlags) recent(ctx context.Context, name string, now time.Time) ([]networkView, error) {
	f.mu.Lock()
	c, ok := f.cache[name]
	f.mu.Unlock()
	if ok && now.Sub(c.at) < networksFresh && !now.Before(c.at) {
		return c.nets, nil
	}
	nets, err := f.read(ctx, name)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.cache) >= networksCached {
		for k, v := range f.cache {
			if now.Sub(v.at) >= networksFresh {
				delete(f.cache, k)
			}
		}
		if len(f.cache) >= networksCached {
			clear(f.cache)
		}
	}
	f.cache[name] = readNetworks{at: now, nets: nets}
	return nets, nil
}

// flagNetworks marks the networks of nets with threshold joins or more.
func flagNetworks(nets []queue.NetworkCount, threshold int64) []networkView {
	out := make([]networkView, len(nets))
	for i, n := range nets {
		out[i] = networkView{NetworkCount: n, Flagged: n.Entries >= threshold}
	}
	return out
}

// flaggedRows are the flagged networks of nets, for the dashboard.
func flaggedRows(nets []networkView) []views.NetworkRow {
	var rows []views.NetworkRow
	for _, n := range nets {
		if n.Flagged {
			rows = append(rows, views.NetworkRow{Network: n.Network, Entries: n.Entries})
		}
	}
	return rows
}

// Flagged returns whether room name had pre-queue networks lately, the
// rows of those flagged, and the flag threshold (the dashboard's).
func (f *networkFlags) Flagged(ctx context.Context, name string, now time.Time) (bool, []views.NetworkRow, int64, error) {
	nets, err := f.recent(ctx, name, now)
	if err != nil {
		return false, nil, 0, err
	}
	return len(nets) > 0, flaggedRows(nets), f.threshold, nil
}
