// Package roomsync keeps the database's record of the rooms in step with
// Redis, which holds the live copy: every admin write of a room is recorded
// in the database, and when Redis comes back without its data (its marker
// key is gone) the rooms are created again from that record. It also
// answers the readiness check: Redis, the database and Redis's data.
package roomsync

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"waitingroom/server/room"
	"waitingroom/server/store"
)

// Redis is the live side of the rooms.
type Redis interface {
	Ping(ctx context.Context) error
	HasMarker(ctx context.Context) (bool, error)
	SetMarker(ctx context.Context) error
	CreateRoom(ctx context.Context, name string, s room.Settings) (bool, error)
	SetSoldOut(ctx context.Context, name string, soldOut bool) error
}

// Records is the database's record of the rooms.
type Records interface {
	// Ready reports whether the database answers with its tables migrated.
	Ready(ctx context.Context) error
	SaveRoom(ctx context.Context, name string, s room.Settings) error
	DeleteRoom(ctx context.Context, name string) error
	Rooms(ctx context.Context) ([]store.RoomRecord, error)
}

// The readiness checks, by name, and their outcomes.
const (
	CheckRedis    = "redis"
	CheckDatabase = "database"
	CheckData     = "redisData"

	OK          = "ok"
	Unreachable = "unreachable"
	Migrating   = "migrating" // the database answers; its migrations have not applied yet
	Restored    = "restored"  // the data was lost and is back: ready
	Lost        = "lost"      // the data was lost and could not be restored yet
	Unknown     = "unknown"   // Redis does not answer
)

// Report is one readiness check.
type Report struct {
	Ready  bool              `json:"ready"`
	Checks map[string]string `json:"checks"`
}

// Failing returns the names of the checks that failed, sorted.
func (r Report) Failing() []string {
	var out []string
	for name, v := range r.Checks {
		if v != OK && v != Restored {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Sync records rooms in the database and restores them into Redis.
type Sync struct {
	redis Redis
	db    Records
	log   *slog.Logger
	// CacheFor is how long a readiness report is reused, so that a flood
	// of /readyz costs one check per interval (default 1 s).
	CacheFor time.Duration
	// Timeout bounds each step of a check (default 2 s).
	Timeout time.Duration

	writeMu sync.Mutex                // one record write at a time
	mu      sync.Mutex                // guards keep and pending
	keep    map[string]room.Settings  // re-created at every restore
	pending map[string]*room.Settings // writes the database missed; nil: a delete

	checkMu sync.Mutex // one check at a time
	last    Report
	lastAt  time.Time
}

// New returns a Sync of r and db.
func New(r Redis, db Records, log *slog.Logger) *Sync {
	return &Sync{redis: r, db: db, log: log, CacheFor: time.Second, Timeout: 2 * time.Second,
		keep: map[string]room.Settings{}, pending: map[string]*room.Settings{}}
}

// Keep makes every restore create room name with s if it is missing,
// whether or not the database records it: the demo room.
func (s *Sync) Keep(name string, set room.Settings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep[name] = set
}

// Record writes room name's settings to the database. When the database
// fails, the write is kept and retried by Run, and the error is returned:
// the room's live settings in Redis stand either way.
func (s *Sync) Record(ctx context.Context, name string, set room.Settings) error {
	return s.write(ctx, name, &set)
}

// Forget removes room name's record (its products and orders stay). When
// the database fails, the delete is retried by Run.
func (s *Sync) Forget(ctx context.Context, name string) error {
	return s.write(ctx, name, nil)
}

func (s *Sync) write(ctx context.Context, name string, set *room.Settings) error {
	// Writes go one at a time, and a newer write replaces a pending one,
	// so that an older write never lands after a newer one.
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	err := s.apply(ctx, name, set)
	s.mu.Lock()
	if err != nil {
		s.pending[name] = set
	} else {
		delete(s.pending, name)
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Warn("room record not written; retrying in the background", "room", name, "err", err)
	}
	return err
}

func (s *Sync) apply(ctx context.Context, name string, set *room.Settings) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Timeout)
	defer cancel()
	if set == nil {
		return s.db.DeleteRoom(ctx, name)
	}
	return s.db.SaveRoom(ctx, name, *set)
}

// flush retries the writes the database missed.
func (s *Sync) flush(ctx context.Context) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	todo := maps.Clone(s.pending)
	s.mu.Unlock()
	for name, set := range todo {
		if err := s.apply(ctx, name, set); err != nil {
			return // still down; the next round retries
		}
		s.mu.Lock()
		delete(s.pending, name)
		s.mu.Unlock()
		s.log.Info("room record written after a database outage", "room", name, "deleted", set == nil)
	}
}

// Restore creates the recorded rooms in Redis when its data marker is
// gone, then sets the marker. Rooms still in Redis are left as they are.
// It reports whether the marker was gone (and is now back).
func (s *Sync) Restore(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*s.Timeout)
	defer cancel()
	if ok, err := s.redis.HasMarker(ctx); err != nil || ok {
		return false, err
	}
	s.mu.Lock()
	keep := maps.Clone(s.keep)
	pending := maps.Clone(s.pending)
	s.mu.Unlock()
	recs, err := s.db.Rooms(ctx)
	if err != nil {
		recs = nil // the kept rooms come back all the same
	}
	for name, set := range keep {
		recs = append(recs, store.RoomRecord{Name: name, Settings: set})
	}
	var created []string
	for _, r := range recs {
		set, missed := pending[r.Name]
		switch {
		case missed && set == nil:
			continue // deleted while the database was down
		case missed:
			r.Settings = *set // newer than the record
		}
		// An adaptive room restarts at a safe rate (room.Settings.Restored).
		ok, err := s.redis.CreateRoom(ctx, r.Name, r.Settings.Restored())
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		created = append(created, r.Name)
		if r.SoldOut {
			if err := s.redis.SetSoldOut(ctx, r.Name, true); err != nil {
				return false, err
			}
		}
	}
	if err != nil {
		return false, err
	}
	if err := s.redis.SetMarker(ctx); err != nil {
		return false, err
	}
	s.log.Warn("Redis had no data marker (a first start on this Redis, or it lost its data): rooms restored from the database",
		"restored", len(created), "rooms", created)
	return true, nil
}

// Check runs the readiness checks, restoring Redis's data when it is
// lost. Reports are reused for CacheFor, and one check runs at a time.
func (s *Sync) Check(ctx context.Context) Report {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	if !s.lastAt.IsZero() && time.Since(s.lastAt) < s.CacheFor {
		return s.last
	}
	r := s.check(ctx)
	first := s.lastAt.IsZero()
	switch {
	case !r.Ready && (first || s.last.Ready):
		s.log.Warn("not ready", "failing", r.Failing(), "checks", r.Checks)
	case r.Ready && !first && !s.last.Ready:
		s.log.Info("ready again", "checks", r.Checks)
	}
	s.last, s.lastAt = r, time.Now()
	return r
}

func (s *Sync) check(ctx context.Context) Report {
	r := Report{Checks: map[string]string{CheckRedis: OK, CheckDatabase: OK, CheckData: OK}}
	step := func(f func(context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, s.Timeout)
		defer cancel()
		return f(ctx)
	}
	if err := step(s.db.Ready); errors.Is(err, store.ErrNotMigrated) {
		r.Checks[CheckDatabase] = Migrating
	} else if err != nil {
		r.Checks[CheckDatabase] = Unreachable
	}
	if err := step(s.redis.Ping); err != nil {
		r.Checks[CheckRedis], r.Checks[CheckData] = Unreachable, Unknown
	} else if restored, err := s.Restore(ctx); err != nil {
		r.Checks[CheckData] = Lost
		if errors.Is(err, context.Canceled) {
			r.Checks[CheckData] = Unknown
		}
		s.log.Warn("Redis lost its data and the rooms could not be restored yet", "err", err)
	} else if restored {
		r.Checks[CheckData] = Restored
	}
	r.Ready = len(r.Failing()) == 0
	return r
}

// Run retries missed writes and checks Redis's data every interval until
// ctx is done, starting at once.
func (s *Sync) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.flush(ctx)
		s.Check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
