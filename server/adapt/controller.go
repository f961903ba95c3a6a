package adapt

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/loop"
	"waitingroom/server/queue"
)

// Rooms is the queue's side of the controller (queue.Engine).
type Rooms interface {
	AdaptiveRooms(ctx context.Context) ([]string, error)
	AdaptRooms(ctx context.Context, names []string) (map[string]queue.AdaptRoom, error)
	ApplyAdapt(ctx context.Context, name string, d queue.AdaptDecision) (applied bool, why string, err error)
}

// SignalReader reads a room's health signal (Reader).
type SignalReader interface {
	Read(ctx context.Context, room string, window int) (Signal, error)
}

// Observer is told every decision applied, for metrics. It must not
// block.
type Observer interface {
	Adapted(room, reason string, from, to float64)
}

// Controller runs Decide for every adaptive room, on every instance. The
// decisions are applied by queue.ApplyAdapt, which takes one per
// Params.Every (less a tenth, for the instances' jitter) across all
// instances, and only if nothing was applied since it was read: N
// instances take one step, not N. An instance that sees a decision taken
// within that gap skips the room, so that per adaptive room and second
// one instance reads the signal (a pipeline of Window reads) and applies
// (one script call), and the others read only the room's state (a
// pipeline of three commands).
type Controller struct {
	rooms Rooms
	sig   SignalReader
	p     Params
	log   *slog.Logger
	obs   Observer
	track Tracker
	clk   clockwork.Clock
	// lateLogged is when a tick that ran past its interval was last
	// logged (Unix seconds): its errors are not logged one by one (the
	// deadline is the cause), so it is said once a minute at most.
	lateLogged atomic.Int64
}

// Tracker is told, at every tick, the rooms marked adaptive (the
// Recorder: it counts the orders of those rooms only, so that rooms that
// are not adaptive cost nothing).
type Tracker interface {
	Track(rooms []string)
}

// Feed has the controller tell t the adaptive rooms at every tick, and
// returns the controller. Call it before Run.
func (c *Controller) Feed(t Tracker) *Controller {
	c.track = t
	return c
}

// NewController returns a Controller on the real clock. obs may be nil.
func NewController(rooms Rooms, sig SignalReader, p Params, log *slog.Logger, obs Observer) *Controller {
	return &Controller{rooms: rooms, sig: sig, p: p, log: log, obs: obs, clk: clockwork.NewRealClock()}
}

// WithClock has the controller tick and decide by clk, and returns the
// controller. Call it before Run.
func (c *Controller) WithClock(clk clockwork.Clock) *Controller {
	c.clk = clk
	return c
}

// minGap is the least time between two decisions applied to a room:
// Every, less a tenth, so that an instance whose tick comes a little early
// is not refused every other second.
func (c *Controller) minGap() time.Duration { return c.p.Every - c.p.Every/10 }

// Run decides every Params.Every until ctx is done, starting at a random
// point of the first interval (instances started together do not decide
// in lockstep).
func (c *Controller) Run(ctx context.Context) error {
	return loop.Every(ctx, c.clk, rand.N(c.p.Every), c.p.Every, c.Tick)
}

// Tick runs one decision for every adaptive room.
func (c *Controller) Tick(ctx context.Context) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.p.Every)
	defer cancel()
	defer func() {
		if ctx.Err() != nil && parent.Err() == nil {
			now := c.clk.Now().Unix()
			if last := c.lateLogged.Load(); now-last >= 60 && c.lateLogged.CompareAndSwap(last, now) {
				c.log.Warn("adapt: a tick ran past its interval; its decisions were not taken", "every", c.p.Every)
			}
		}
	}()
	names, err := c.rooms.AdaptiveRooms(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("adapt: list rooms", "err", err)
		}
		return
	}
	if c.track != nil {
		defer func() { c.track.Track(names) }()
	}
	if len(names) == 0 {
		return
	}
	rooms, err := c.rooms.AdaptRooms(ctx, names)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("adapt: read rooms", "err", err)
		}
		return
	}
	for name, r := range rooms {
		c.decide(ctx, name, r)
	}
}

// decide takes one decision for room name, read as r. Another
// instance's decision applied less than minGap ago (by this instance's
// clock) means the script would refuse this one: the signal is not read.
// The script stays the judge: a clock off by a little only costs a
// refused call or a second's delay.
func (c *Controller) decide(ctx context.Context, name string, r queue.AdaptRoom) {
	if !r.Last.IsZero() && c.clk.Since(r.Last) < c.minGap() {
		return
	}
	sig, err := c.sig.Read(ctx, name, c.p.Window)
	if err != nil && ctx.Err() == nil {
		c.log.Warn("adapt: read signal", "room", name, "err", err)
	}
	// A room with a healthURL that did not answer has no signal (health.go).
	ok := err == nil && (r.Adapt.HealthURL == "" || sig.HasLoad)
	d := Decide(inputOf(r, sig, ok, c.clk.Now()), c.p)
	applied, _, err := c.rooms.ApplyAdapt(ctx, name, queue.AdaptDecision{N: r.N, From: r.Rate, To: d.Rate, Reason: d.Reason,
		MinGap: c.minGap(), P95: sig.P95, ErrorRate: sig.ErrorRate(), Samples: sig.Samples, Knee: d.Knee, Base: d.Base, Cut: d.Cut()})
	switch {
	case err != nil:
		if ctx.Err() == nil {
			c.log.Warn("adapt: apply", "room", name, "err", err)
		}
		return
	case !applied: // another instance decided, or adaptive was turned off
		return
	}
	if c.obs != nil {
		c.obs.Adapted(name, d.Reason, r.Rate, d.Rate)
	}
	if d.Rate != r.Rate {
		c.log.Info("adapt: rate changed", "room", name, "old", r.Rate, "new", d.Rate, "reason", d.Reason,
			"p95", sig.P95, "errorRate", sig.ErrorRate(), "samples", sig.Samples, "waiting", r.Waiting)
	}
}

// inputOf is the Input of a decision on room r at now, from signal sig
// (ok: it was read).
func inputOf(r queue.AdaptRoom, sig Signal, ok bool, now time.Time) Input {
	in := Input{Rate: r.Rate, Waiting: r.Waiting, Paused: r.Paused, Settings: r.Adapt, Signal: sig, SignalOK: ok, Knee: r.Knee, Base: r.Base}
	if !r.LastCut.IsZero() {
		in.SinceCut = max(now.Sub(r.LastCut), time.Millisecond) // 0 means none
	}
	return in
}
