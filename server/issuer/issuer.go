// Package issuer runs the admission loop that every server instance runs.
//
// Instances need no leader: the room's credit lives in Redis and is accrued
// from Redis TIME inside the admission script, so N loops together admit
// exactly what one would. They share the rooms' ticks (share.go): each
// room is ticked by one loop at a time.
package issuer

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/draw"
	"waitingroom/server/loop"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/token"
)

// Admitter is the part of the queue engine the loop drives.
type Admitter interface {
	Rooms(ctx context.Context) ([]string, error)
	Admit(ctx context.Context, room string, tick time.Duration, tokens []string) (queue.Admission, error)
}

// Drawer performs a room's pre-queue draw (see queue.Engine.Draw). An
// Admitter that is also a Drawer has every issuer drive the draw of a room
// whose tick reports it frozen and waiting for its draw.
type Drawer interface {
	Draw(ctx context.Context, room string, opt queue.DrawOptions) (queue.DrawState, error)
}

// Observer is told about every tick, for metrics, a sleeping room's
// answer too (queue.Admission's Slept: no figures). It must not block.
type Observer interface {
	Ticked(room string, a queue.Admission, took time.Duration, err error)
}

// TickRecorder keeps each room's tick for the live dashboard (see
// livestats.Recorder). It is called once per room per tick that succeeded,
// on the tick's path: it must not block (it buffers, and writes later).
type TickRecorder interface {
	RecordTick(room string, a queue.Admission)
}

// FailureRecorder is a TickRecorder that also counts each room's failed
// ticks and draws, for the live dashboard. It must not block.
type FailureRecorder interface {
	RecordIssuerFailure(room string)
}

// RoomsObserver is an Observer that is also told, at every tick, every
// room listed, so that it can forget the rooms deleted since, and the
// rooms among them whose ticks are this loop's (see Share), so that it can
// drop what it shows of the others' ticks. It must not block.
type RoomsObserver interface {
	Listed(rooms, mine []string)
}

// PhaseMarker records the schedule phase last seen in a room and returns
// the one before, atomically across instances (see queue.Engine.MarkPhase).
type PhaseMarker interface {
	MarkPhase(ctx context.Context, room, phase string) (old string, err error)
}

// PhaseWatcher is told each change of a room's schedule phase (scheduled,
// prequeue, open, closed), once across all the instances' loops (see
// salelog.Log.PhaseChanged). The first phase seen in a room is no change.
type PhaseWatcher interface {
	PhaseChanged(ctx context.Context, room, old, phase string)
}

// Loop admits visitors into every room once per tick, but for the rooms
// that sleep (see sleep.go) and, when it shares the ticks (see share.go),
// the rooms of the other instances.
type Loop struct {
	eng   Admitter
	tick  time.Duration
	log   *slog.Logger
	obs   Observer
	rec   TickRecorder
	pw    PhaseWatcher
	clk   clockwork.Clock
	peers Peers
	id    string

	mu      sync.Mutex
	want    map[string]int    // tokens to mint per room: the room's last burst
	drawing map[string]bool   // rooms whose draw this loop is running
	phase   map[string]string // the phase this loop last marked, per room
	// asleep holds, per sleeping room, when this loop next ticks it;
	// woken, when this loop last heard it woken, and wokenAll when it
	// last woke every room (see Wake).
	asleep   map[string]time.Time
	woken    map[string]time.Time
	wokenAll time.Time
	// failing counts the ticks in a row in which every admission failed
	// (see failingTicks).
	failing int
	wg      sync.WaitGroup
}

// MaxTokensPerTick bounds one tick's tokens: two batches (a late tick
// catches up) at room.MaxRate, the ceiling of a room's rate, so that the
// issuer can always pass what the settings accept.
func MaxTokensPerTick(tick time.Duration) int {
	return 2 * max(1, int(math.Ceil(room.MaxRate*tick.Seconds()-1e-9)))
}

// New returns a Loop that ticks every tick. obs may be nil.
func New(eng Admitter, tick time.Duration, log *slog.Logger, obs Observer) *Loop {
	return &Loop{eng: eng, tick: tick, log: log, obs: obs, clk: clockwork.NewRealClock(), want: make(map[string]int),
		drawing: make(map[string]bool), phase: make(map[string]string), asleep: make(map[string]time.Time),
		woken: make(map[string]time.Time)}
}

// Record has the loop hand every successful tick to rec, and returns the
// loop. Call it before Run.
func (l *Loop) Record(rec TickRecorder) *Loop {
	l.rec = rec
	return l
}

// WatchPhases has the loop tell w each change of a room's phase, when its
// Admitter is a PhaseMarker, and returns the loop. Call it before Run.
func (l *Loop) WatchPhases(w PhaseWatcher) *Loop {
	l.pw = w
	return l
}

// WithClock has the loop tick by clk, and returns the loop. Call it
// before Run.
func (l *Loop) WithClock(clk clockwork.Clock) *Loop {
	l.clk = clk
	return l
}

// Run ticks until ctx is done and then returns ctx's error. The first tick
// is delayed by a random part of one tick, so that instances started
// together do not tick in lockstep. A loop that shares the ticks retires
// from the issuers when it returns, so that the others take its rooms over
// at their next tick.
func (l *Loop) Run(ctx context.Context) error {
	defer l.wg.Wait()
	defer l.retire(ctx)
	return loop.Every(ctx, l.clk, rand.N(l.tick), l.tick, l.Tick)
}

// Tick runs one admission tick over every room of this loop's that does
// not sleep.
func (l *Loop) Tick(ctx context.Context) {
	rooms, err := l.eng.Rooms(ctx)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("issuer: list rooms", "err", err)
		}
		return
	}
	mine, asks := l.mine(ctx, rooms)
	if ro, ok := l.obs.(RoomsObserver); ok {
		ro.Listed(rooms, mine)
	}
	l.forgetUnlisted(rooms)
	now := l.clk.Now()
	tried, failed := 0, 0
	for _, name := range mine {
		if !l.sleeping(name, now) {
			tried++
			if !l.admit(ctx, name) {
				failed++
			}
		}
	}
	l.mu.Lock()
	switch {
	case tried > 0 && failed == tried:
		l.failing++
	case failed < tried:
		l.failing = 0
	}
	l.mu.Unlock()
	if len(asks) > 0 {
		listed := make(map[string]bool, len(rooms))
		for _, r := range rooms {
			listed[r] = true
		}
		for _, r := range asks {
			if listed[r] && !slices.Contains(mine, r) {
				l.startDraw(ctx, r)
			}
		}
	}
}

// admit runs one admission tick of room name, and reports whether it
// worked (a room deleted meanwhile counts as worked).
func (l *Loop) admit(ctx context.Context, name string) bool {
	start := time.Now()
	began := l.clk.Now()
	tctx, cancel := context.WithTimeout(ctx, l.tick)
	defer cancel()
	n := l.tokensFor(name)
	toks, err := token.NewBatch(n)
	var a queue.Admission
	if err == nil {
		a, err = l.eng.Admit(tctx, name, l.tick, toks)
	}
	took := time.Since(start)
	switch {
	case err == nil && a.Slept:
		l.sleep(name, began, a.WakeIn)
	case err == nil:
		l.mu.Lock()
		l.want[name] = min(max(a.Burst, 1), MaxTokensPerTick(l.tick))
		l.mu.Unlock()
		if a.Asleep {
			l.sleep(name, began, a.WakeIn)
		}
		if a.Phase == "drawing" {
			l.startDraw(ctx, name)
		}
		l.watchPhase(tctx, name, a.Phase)
		if l.rec != nil {
			l.rec.RecordTick(name, a)
		}
	case errors.Is(err, room.ErrNotFound):
		l.mu.Lock()
		delete(l.want, name)
		delete(l.phase, name)
		delete(l.woken, name)
		l.mu.Unlock()
	case ctx.Err() == nil:
		l.log.Warn("issuer: admit", "room", name, "err", err)
		l.failed(name)
	}
	if l.obs != nil {
		l.obs.Ticked(name, a, took, err)
	}
	return err == nil || errors.Is(err, room.ErrNotFound) || ctx.Err() != nil
}

// watchPhase marks room's phase in Redis when this loop sees it change,
// and tells the watcher when the mark shows a change: of the loops that
// see one change, exactly one is told. "drawing" is still the pre-queue:
// the sale opens once the draw is done.
func (l *Loop) watchPhase(ctx context.Context, name, phase string) {
	pm, ok := l.eng.(PhaseMarker)
	if l.pw == nil || !ok || phase == "" {
		return
	}
	if phase == "drawing" {
		phase = queue.PhasePrequeue
	}
	l.mu.Lock()
	same := l.phase[name] == phase
	l.mu.Unlock()
	if same {
		return
	}
	old, err := pm.MarkPhase(ctx, name, phase)
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("issuer: mark phase", "room", name, "err", err)
		}
		return // marked again at the next tick
	}
	l.mu.Lock()
	l.phase[name] = phase
	l.mu.Unlock()
	if old != "" && old != phase {
		l.pw.PhaseChanged(ctx, name, old, phase)
	}
}

// failed counts a failed tick or draw of room, when the recorder counts
// them.
func (l *Loop) failed(name string) {
	if fr, ok := l.rec.(FailureRecorder); ok {
		fr.RecordIssuerFailure(name)
	}
}

func (l *Loop) tokensFor(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n, ok := l.want[name]; ok {
		return n
	}
	return 64
}

// startDraw runs room's draw in the background unless this loop already
// runs it. Another instance may hold the draw's lease: this one then tries
// again at a later tick, and takes over if that instance died.
func (l *Loop) startDraw(ctx context.Context, name string) {
	d, ok := l.eng.(Drawer)
	if !ok {
		return
	}
	l.mu.Lock()
	if l.drawing[name] {
		l.mu.Unlock()
		return
	}
	l.drawing[name] = true
	l.mu.Unlock()
	l.wg.Go(func() {
		defer func() {
			l.mu.Lock()
			delete(l.drawing, name)
			l.mu.Unlock()
		}()
		start := time.Now()
		st, err := d.Draw(ctx, name, queue.DrawOptions{})
		switch {
		case err == nil && st == queue.DrawDone:
			l.log.Info("issuer: pre-queue drawn", "room", name, "took", time.Since(start))
		case errors.Is(err, queue.ErrDrawBusy) || ctx.Err() != nil:
		case errors.Is(err, draw.ErrNoSecret) && l.peers != nil:
			// Another instance may know the committed secret: every issuer
			// tries this room's draw while the ask holds.
			l.log.Warn("issuer: draw", "room", name, "err", err)
			if aerr := l.peers.AskDraw(ctx, name, askFor(l.tick)); aerr != nil && ctx.Err() == nil {
				l.log.Warn("issuer: ask for the draw", "room", name, "err", aerr)
			}
			l.failed(name)
		case err != nil:
			l.log.Warn("issuer: draw", "room", name, "err", err)
			l.failed(name)
		}
	})
}
