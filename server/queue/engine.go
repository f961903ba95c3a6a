// Package queue is the admission core: an atomic FIFO line per room, an
// exact global issuer and single-use entry tokens, all in Redis.
//
// Every state change is one Lua script, so that Redis is the single
// serialisation point for any number of server instances.
package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/draw"
	"waitingroom/server/room"
)

// Errors returned by the token lifecycle.
var (
	// ErrTokenInvalid reports a token that does not exist, has expired, or
	// is not the one issued to this visitor.
	ErrTokenInvalid = errors.New("entry token invalid or expired")
	// ErrTokenInUse reports a token already claimed by a running order
	// (wrapped in a *WaitError).
	ErrTokenInUse = errors.New("entry token in use")
	// ErrTokenPaused reports a token resting after too many failed order
	// attempts (wrapped in a *WaitError).
	ErrTokenPaused = errors.New("entry token paused after too many failed attempts")
	// ErrTokenUsed reports a token that already placed its order.
	ErrTokenUsed = errors.New("entry token already used")
	// ErrNotOpen reports an enter before the room's pre-queue (or
	// opening): nobody can join yet.
	ErrNotOpen = errors.New("the sale is not open yet")
	// ErrSaleEnded reports an enter after the room's closing, or into a
	// closed room.
	ErrSaleEnded = errors.New("the sale has ended")
	// ErrTokenNotClaimed reports a release or consume by someone who does
	// not hold the token's claim: it is not claimed, or a newer claim took
	// it over.
	ErrTokenNotClaimed = errors.New("entry token not claimed by this holder")
)

// WaitError reports a token that cannot be claimed yet; Err is
// ErrTokenInUse or ErrTokenPaused and RetryAfter is how long until it can.
type WaitError struct {
	Err        error
	RetryAfter time.Duration
}

func (e *WaitError) Error() string { return e.Err.Error() }

// Unwrap returns ErrTokenInUse or ErrTokenPaused.
func (e *WaitError) Unwrap() error { return e.Err }

// Engine runs the queue scripts against one Redis deployment.
type Engine struct {
	rdb   redis.UniversalClient
	ns    string
	s     scripts
	drawn drawnCache
	// enters gathers concurrent enters of a room into one script call
	// (batch.go).
	enters *batcher
	// touches gathers concurrent session checks into one round trip
	// (touch_batch.go).
	touches *toucher
	// registry holds the issuers' registry scripts (issuers.go).
	registry registryScripts
	heads    callHeads
	// challengeDefault is the challenge setting of a room saved without
	// one ("" is off); see SetChallengeDefault.
	challengeDefault string
	// now is the clock the scripts decide by (SetClock); nil is Redis'
	// own TIME.
	now func() time.Time
	// seeder derives the draws' seeds (SetDrawSeeder); nil keeps them in
	// Redis.
	seeder *draw.Seeder
}

// New returns an Engine that uses rdb, which may be a single node, a
// Sentinel-backed or a Cluster client, and prefixes every key and channel
// with the deployment namespace ns (see DefaultNamespace). It panics when
// ns is not ValidNamespace: configuration checks it first.
func New(rdb redis.UniversalClient, ns string) *Engine {
	if !ValidNamespace(ns) {
		panic(fmt.Sprintf("queue: invalid namespace %q", ns))
	}
	e := &Engine{rdb: rdb, ns: ns, s: loadScripts()}
	e.enters = newBatcher(e.places, defaultMaxBatch, defaultCalls, EnterWait)
	e.touches = &toucher{e: e}
	e.registry = newRegistryScripts()
	return e
}

// Namespace returns the deployment namespace of the engine's keys and
// channels.
func (e *Engine) Namespace() string { return e.ns }

// Enter puts visitor in room's line unless they already wait or hold a
// token, and returns their position. Repeated or concurrent calls keep one
// ticket. It returns room.ErrNotFound for an unknown room.
func (e *Engine) Enter(ctx context.Context, roomName, visitor string) (Position, error) {
	return e.EnterFrom(ctx, roomName, visitor, "", Campaign{})
}

// EnterFrom is Enter for a visitor from client network network (for
// example "203.0.113.0/24"; "" if unknown), which is counted once per
// pre-queue entry (see Networks). Before the room's pre-queue opens it
// returns the position (NOT_ENTERED, with the schedule) and ErrNotOpen;
// after its closing, or in mode closed, ErrSaleEnded (sold out or not).
// A new ticket counts a join for campaign c, and the visitor's admission
// counts for it too (see Attribution); a repeated enter counts nothing.
func (e *Engine) EnterFrom(ctx context.Context, roomName, visitor, network string, c Campaign) (Position, error) {
	return e.EnterWithProof(ctx, roomName, visitor, network, c, Proof{})
}

// EnterWithProof is EnterFrom with a proof of work (the zero Proof for
// none). In a room whose challenge is not off, an enter that would create
// a new place (a ticket or a pre-queue entry) returns ErrChallengeRequired
// without a proof, ErrChallengeUsed with a proof that made a place in
// the room before, and ErrChallengeStale with one issued before the
// room's current phase began (its pre-queue, else its opening); the proof is recorded, atomically with the place, so
// that it makes one place at most. A visitor who has a place enters
// without one (a reconnect), and so does one who lapsed and goes back at
// the end; one who left, or was admitted, needs a new proof.
func (e *Engine) EnterWithProof(ctx context.Context, roomName, visitor, network string, c Campaign, proof Proof) (Position, error) {
	return e.EnterWith(ctx, roomName, visitor, network, c, proof, Credentials{})
}

// EnterNew is EnterFrom for a visitor whose id was minted for this enter
// (visitor.NewID) and so cannot have a pass, a place or a pre-queue entry
// yet: the script does not look for one, which saves it most of its work
// for the enters of a sale's crowd. Passing the id of a visitor who may
// have a place would give them a second one: every other enter goes
// through EnterFrom or EnterWithProof. In a room whose challenge is not
// off it returns ErrChallengeRequired, as EnterFrom does.
func (e *Engine) EnterNew(ctx context.Context, roomName, visitor, network string, c Campaign) (Position, error) {
	return e.enter(ctx, roomName, placeReq{visitor: visitor, enter: true, network: network, c: c.Counted(), minted: true})
}

// enter runs one enter through the room's batcher.
func (e *Engine) enter(ctx context.Context, roomName string, req placeReq) (Position, error) {
	p, err := e.enters.do(ctx, roomName, req)
	if err != nil {
		return Position{}, fmt.Errorf("queue: enter %s: %w", roomName, err)
	}
	if p.Status == StatusNotEntered {
		switch {
		case p.Phase == PhaseScheduled && !p.SoldOut:
			return p, fmt.Errorf("queue: enter %s: %w", roomName, ErrNotOpen)
		case p.Phase == PhaseClosed:
			// Ended, sold out or not: new buyers can no longer join.
			return p, fmt.Errorf("queue: enter %s: %w", roomName, ErrSaleEnded)
		}
	}
	return p, nil
}

// Position returns visitor's place in room without entering. It returns
// room.ErrNotFound for an unknown room.
func (e *Engine) Position(ctx context.Context, roomName, visitor string) (Position, error) {
	res, err := e.places(ctx, roomName, []placeReq{{visitor: visitor}})
	if err == nil {
		err = res[0].err
	}
	if err != nil {
		return Position{}, fmt.Errorf("queue: position %s: %w", roomName, err)
	}
	return res[0].p, nil
}

// appendArgs appends r's group of position.lua's arguments: its flags, the
// visitor, and the fields the flags announce (see the script's ARGV).
func (r placeReq) appendArgs(args []any) []any {
	var fb [12]byte
	flags := fb[:0]
	if r.enter {
		flags = append(flags, 'e')
	}
	if r.minted {
		flags = append(flags, 'm')
	}
	if r.proof.Fresh {
		flags = append(flags, 'f')
	}
	key := r.c.key()
	if r.network != "" {
		flags = append(flags, 'n')
	}
	if key != "" {
		flags = append(flags, 'c')
	}
	if r.proof.ID != "" {
		flags = append(flags, 'p')
	}
	if r.cred.Code {
		flags = append(flags, 'g')
	}
	if r.cred.Identity {
		flags = append(flags, 'i')
	}
	if r.cred.NoCode {
		flags = append(flags, 'o')
	}
	if r.cred.Line != "" {
		flags = append(flags, 'l')
	}
	args = append(args, flagsArg(flags), r.visitor)
	if r.network != "" {
		args = append(args, r.network)
	}
	if key != "" {
		args = append(args, key, r.c.Source)
	}
	if r.proof.ID != "" {
		args = append(args, r.proof.ID, r.proof.Expires.UnixMilli(), r.proof.IssuedAt.UnixMilli())
	}
	if r.cred.Line != "" {
		args = append(args, r.cred.Line)
	}
	return args
}

// flagsArg returns flags as a script argument: the common sets boxed
// without an allocation.
func flagsArg(flags []byte) any {
	switch string(flags) {
	case "emn":
		return "emn"
	case "en":
		return "en"
	case "emnc":
		return "emnc"
	case "":
		return ""
	}
	return string(flags)
}

// places runs the position script once for the visitors of reqs, in their
// order, and returns one result per request (see batchFunc).
func (e *Engine) places(ctx context.Context, roomName string, reqs []placeReq) ([]placeResult, error) {
	args := make([]any, 0, 4+3*len(reqs))
	args = append(args, MaxCampaigns, MaxCampaignsPerSource, e.challengeDefault, ChallengeWindow.Milliseconds())
	for _, r := range reqs {
		args = r.appendArgs(args)
	}
	res, err := e.run(ctx, e.s.position, roomName, args...).Slice()
	if err != nil {
		return nil, err
	}
	if len(res) < 1 {
		return nil, fmt.Errorf("position script: empty reply")
	}
	roomPart, _ := res[0].([]any)
	if len(roomPart) >= 1 && asInt(roomPart[0]) < 0 {
		out := make([]placeResult, len(reqs))
		for i := range out {
			out[i].err = room.ErrNotFound
		}
		return out, nil
	}
	if len(roomPart) != 17 {
		return nil, fmt.Errorf("position script: unexpected reply %v for %d visitors", res, len(reqs))
	}
	// What every visitor is told of the room.
	tpl := Position{Head: asInt(roomPart[3]), Tick: asInt(roomPart[4]), SoldOut: asInt(roomPart[5]) == 1,
		Phase: asString(roomPart[6]), PrequeueAt: msOrNil(roomPart[7]), OpensAt: msOrNil(roomPart[8]), ClosesAt: msOrNil(roomPart[9]),
		ServerTime: asInt(roomPart[10]), Paused: asInt(roomPart[11]) == 1, Born: asInt(roomPart[16])}
	rate := admitRate(roomPart[12], roomPart[2])
	var phase TickPhase
	if since := asInt(roomPart[14]); since >= 0 {
		phase = TickPhase{Since: time.Duration(since) * time.Millisecond, Tick: time.Duration(asInt(roomPart[15])) * time.Millisecond}
	}
	var slots *Slots
	if s := asString(roomPart[13]); s != "" {
		slots = parseSlots(s)
	}
	out := make([]placeResult, 0, len(reqs))
	for _, r := range res[1:] {
		line, ok := r.(string)
		if !ok {
			return nil, fmt.Errorf("position script: unexpected reply %v", r)
		}
		if run, ok := strings.CutPrefix(line, "R "); ok {
			// A run of minted visitors who joined together.
			var f [3]int64
			if !parseFields(run, f[:]) || f[2] < 1 || int64(len(out))+f[2] > int64(len(reqs)) {
				return nil, fmt.Errorf("position script: unexpected reply %q", line)
			}
			for i := range f[2] {
				p := tpl
				p.Status, p.Created = StatusWaiting, true
				p.Ticket, p.Line, p.Rank, p.Waiting = f[0]+i, f[0]+i, f[1]-1+i, f[1]+i
				p.EstimatedWaitSeconds = ETAAt(p.Rank, rate, slots, p.Paused, phase)
				p.PollingIntervalSeconds = PollingInterval(p.Rank)
				out = append(out, placeResult{p: p})
			}
			continue
		}
		p, err := parsePlace(tpl, rate, slots, phase, line)
		if err == errPlaceReply {
			return nil, fmt.Errorf("position script: unexpected reply %q", line)
		}
		out = append(out, placeResult{p, err})
	}
	if len(out) != len(reqs) {
		return nil, fmt.Errorf("position script: %d answers for %d visitors", len(out), len(reqs))
	}
	return out, nil
}

// parseFields reads the space-separated integers of s into f, all of them
// and nothing else.
func parseFields(s string, f []int64) bool {
	for i := range f {
		field, rest, ok := strings.Cut(s, " ")
		if ok == (i == len(f)-1) {
			return false
		}
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return false
		}
		f[i], s = n, rest
	}
	return true
}

// errPlaceReply reports a visitor's reply that position.lua cannot have
// given.
var errPlaceReply = errors.New("malformed reply")

// parsePlace reads one visitor's reply of position.lua, given what the
// call told of the room (tpl, the admission rate the ETA counts on, the
// slots' schedule and the ticks' phase): their position, or why they have
// none.
func parsePlace(tpl Position, rate float64, slots *Slots, phase TickPhase, line string) (Position, error) {
	// code ticket rank waiting line passExpiresMs rankUp proved created
	// lineIndex lineShare lineName token
	var f [11]int64
	rest := line
	for i := range f {
		var field string
		var ok bool
		if field, rest, ok = strings.Cut(rest, " "); !ok {
			return Position{}, errPlaceReply
		}
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return Position{}, errPlaceReply
		}
		f[i] = n
	}
	lineName, token, ok := strings.Cut(rest, " ")
	if !ok || f[10] < 0 || f[10] > 1_000_000 {
		return Position{}, errPlaceReply
	}
	code := f[0]
	switch code {
	case -2:
		return Position{}, ErrChallengeRequired
	case -3:
		return Position{}, ErrChallengeUsed
	case -4:
		return Position{}, ErrChallengeStale
	case -5:
		return Position{}, ErrCodeRequired
	case -6:
		return Position{}, ErrIdentityRequired
	case -7:
		return Position{}, ErrCodeAsked
	}
	p := tpl
	p.Ticket, p.Rank, p.Waiting, p.Line = f[1], f[2], f[3], f[4]
	p.Proved, p.Created = f[7] == 1, f[8] == 1
	if lineName != "-" {
		p.LineName, p.LineIndex = lineName, int(f[9])
	}
	switch code {
	case 3:
		p.Status = StatusPrequeued
		p.PollingIntervalSeconds = PollingInterval(1000) // no rank moves before the draw
	case 2:
		p.Status, p.EntryToken, p.Rank = StatusReady, &token, 0
		p.PassExpiresAt = f[5]
		p.PollingIntervalSeconds = PollingTier(0)
	case 1:
		p.Status = StatusWaiting
		p.EstimatedWaitSeconds = ETAAt(LineRank(p.Rank, float64(f[10])/1e6), rate, slots, p.Paused, phase)
		if f[6] == 1 {
			p.RankUpReason = RankUpReturned
		}
		p.PollingIntervalSeconds = PollingInterval(p.Rank)
	default:
		p.Status = StatusNotEntered
		p.PollingIntervalSeconds = PollingTier(0)
	}
	return p, nil
}

// admitRate prefers the achievable throughput (see lib.lua; 0 when nobody
// is admitted) and falls back to the configured rate.
func admitRate(achievable, configured any) float64 {
	if f, err := strconv.ParseFloat(asString(achievable), 64); err == nil && f >= 0 {
		return f
	}
	f, _ := strconv.ParseFloat(asString(configured), 64)
	return f
}

// Leave takes visitor out of room's line, or gives up their unused entry
// token. It reports whether there was anything to leave.
func (e *Engine) Leave(ctx context.Context, roomName, visitor string) (bool, error) {
	n, err := e.run(ctx, e.s.leave, roomName, visitor).Int64()
	if err != nil {
		return false, fmt.Errorf("queue: leave %s: %w", roomName, err)
	}
	return n > 0, nil
}

// Admission is the outcome of one admission tick.
type Admission struct {
	// Visitors were admitted, in ticket order.
	Visitors []string
	// Head is the highest ticket admitted so far.
	Head int64
	// Waiting is the length of the line after the tick.
	Waiting int64
	// Active is the number of admitted sessions holding a slot.
	Active int64
	// Tick is the room's tick sequence number after this tick.
	Tick int64
	// Burst is how many tokens an issuer should pass: two batches at the
	// room's rate, more than one tick admits (a late tick's catch-up goes
	// out at most a fifth over the batch).
	Burst int
	// Departures are the room's running totals of why people left, as of
	// this tick.
	Departures Departures
	// Phase is the room's phase at this tick; "drawing" means the
	// pre-queue is frozen and waits for its draw (see Engine.Draw).
	Phase string
	// Rate is the room's admission rate as set, per second.
	Rate float64
	// Prequeued is the size of the room's pre-queue (0 once it is drawn
	// and admitted).
	Prequeued int64
	// Paused and SoldOut are the room's flags at this tick.
	Paused, SoldOut bool
	// Sessions are the room's gate sessions as of this tick.
	Sessions SessionCounts
	// Asleep reports that the room was quiet after this tick (nobody in
	// line or pre-queue, no pass, session or tombstone held) and sleeps:
	// for WakeIn from now (until its schedule's next change, by the
	// scripts' clock; 0 for none), a tick runs nothing (Slept), unless a
	// join, a setting or a sell-out wakes it, which its channel tells
	// every instance (push.Handler's Woken).
	Asleep bool
	WakeIn time.Duration
	// Slept reports that the room slept and the tick ran nothing: the
	// other fields but WakeIn are zero.
	Slept bool
}

// SessionCounts are a room's gate sessions: Live now, and since the room
// was created Opened (passes redeemed), Ended (by the shop) and Idle (past
// sessionSeconds without renewal, or the end of a fixed one).
type SessionCounts struct {
	Live, Opened, Ended, Idle int64
}

// Departures count, for one room since it was created, the visitors who
// left the line (Leaves: they said so; Abandoned: not seen for the room's
// abandonAfterSeconds) and the passes that ran out unused (Expired).
type Departures struct {
	Leaves    int64 `json:"leaves"`
	Abandoned int64 `json:"abandoned"`
	Expired   int64 `json:"expired"`
}

// Admit runs one admission tick for room. tick is the caller's tick length
// (it sizes the burst); tokens are fresh entry tokens, one per visitor that
// may be admitted, so Admit admits at most len(tokens). It returns
// room.ErrNotFound for an unknown room. In mode random the tick's picks
// come from a fresh seed, so that they do not depend on the Redis
// version's seeding of its scripts.
func (e *Engine) Admit(ctx context.Context, roomName string, tick time.Duration, tokens []string) (Admission, error) {
	args := make([]any, 0, len(tokens)+2)
	args = append(args, strconv.FormatFloat(tick.Seconds(), 'f', -1, 64), rand.Int32())
	for _, t := range tokens {
		args = append(args, t)
	}
	res, err := e.run(ctx, e.s.admit, roomName, args...).Slice()
	if err != nil {
		return Admission{}, fmt.Errorf("queue: admit %s: %w", roomName, err)
	}
	if len(res) == 2 && asInt(res[0]) == -2 {
		return Admission{Asleep: true, Slept: true, WakeIn: time.Duration(asInt(res[1])) * time.Millisecond}, nil
	}
	if len(res) >= 1 && asInt(res[0]) < 0 {
		return Admission{}, fmt.Errorf("queue: admit %s: %w", roomName, room.ErrNotFound)
	}
	if len(res) < 20 {
		return Admission{}, fmt.Errorf("queue: admit %s: unexpected reply %v", roomName, res)
	}
	rate, _ := strconv.ParseFloat(asString(res[10]), 64)
	a := Admission{Head: asInt(res[1]), Waiting: asInt(res[2]), Burst: int(asInt(res[3])),
		Active: asInt(res[4]), Tick: asInt(res[5]),
		Departures: Departures{Leaves: asInt(res[6]), Abandoned: asInt(res[7]), Expired: asInt(res[8])},
		Phase:      asString(res[9]), Rate: rate, Prequeued: asInt(res[11]),
		Paused: asInt(res[12]) == 1, SoldOut: asInt(res[13]) == 1,
		Sessions: SessionCounts{Live: asInt(res[14]), Opened: asInt(res[15]), Ended: asInt(res[16]), Idle: asInt(res[17])},
		Asleep:   asInt(res[18]) == 1, WakeIn: time.Duration(asInt(res[19])) * time.Millisecond}
	for _, v := range res[20:] {
		a.Visitors = append(a.Visitors, asString(v))
	}
	return a, nil
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}

// MarkSeen records that the visitors holding tickets are connected, so that
// they are not taken for abandoned. It is one round trip whatever their
// number.
func (e *Engine) MarkSeen(ctx context.Context, roomName string, tickets []int64) error {
	if len(tickets) == 0 {
		return nil
	}
	args := make([]any, len(tickets))
	for i, t := range tickets {
		if line, ticket := SplitLineTicket(t); line > 0 {
			args[i] = strconv.Itoa(line) + ":" + strconv.FormatInt(ticket, 10)
		} else {
			args[i] = t
		}
	}
	if err := e.run(ctx, e.s.seen, roomName, args...).Err(); err != nil {
		return fmt.Errorf("queue: mark seen in %s: %w", roomName, err)
	}
	return nil
}

// lineShift places a line's index above its tickets in LineTicket.
const lineShift = 48

// LineTicket returns ticket of a room's line (from 0) as MarkSeen takes
// it: the ticket itself for the first line, and the line's index above
// the ticket's 48 bits for another.
func LineTicket(line int, ticket int64) int64 {
	return int64(line)<<lineShift | ticket
}

// SplitLineTicket returns the line and the ticket of a LineTicket.
func SplitLineTicket(t int64) (line int, ticket int64) {
	return int(t >> lineShift), t & (1<<lineShift - 1)
}

// Snapshot is what an instance needs to compute ranks in-process: the
// room's tick, head and the departed tickets above the head, sorted.
type Snapshot struct {
	SoldOut bool
	Paused  bool
	Slots   *Slots
	Tick    int64
	Head    int64
	Waiting int64
	Rate    float64
	// ReadySpreadMs is the room's readySpreadMs, as in Event: nil follows
	// the server's default.
	ReadySpreadMs *int
	// Born is when the room was created, as in Event (0: unknown).
	Born     int64
	Departed []int64
	// Lines are the lines of a room with lines, as in Event; Head,
	// Departed are the first line's.
	Lines []LineState
}

// Snapshot reads room's rank state in one round trip. It returns
// room.ErrNotFound for an unknown room.
func (e *Engine) Snapshot(ctx context.Context, roomName string) (Snapshot, error) {
	res, err := e.run(ctx, e.s.snapshot, roomName).Slice()
	if err != nil {
		return Snapshot{}, fmt.Errorf("queue: snapshot %s: %w", roomName, err)
	}
	if len(res) >= 1 && asInt(res[0]) < 0 {
		return Snapshot{}, fmt.Errorf("queue: snapshot %s: %w", roomName, room.ErrNotFound)
	}
	if len(res) < 10 {
		return Snapshot{}, fmt.Errorf("queue: snapshot %s: unexpected reply %v", roomName, res)
	}
	rate, _ := strconv.ParseFloat(asString(res[3]), 64)
	s := Snapshot{Tick: asInt(res[0]), Head: asInt(res[1]), Waiting: asInt(res[2]), Rate: rate, SoldOut: asInt(res[4]) == 1,
		Paused: asInt(res[5]) == 1, Slots: parseSlots(res[6]), Born: asInt(res[8])}
	if rs := int(asInt(res[7])); rs >= 0 { // -1: the server's default
		s.ReadySpreadMs = &rs
	}
	if ls := asString(res[9]); ls != "" {
		if err := json.Unmarshal([]byte(ls), &s.Lines); err != nil {
			return Snapshot{}, fmt.Errorf("queue: snapshot %s: lines: %w", roomName, err)
		}
	}
	for _, d := range res[10:] {
		s.Departed = append(s.Departed, asInt(d))
	}
	return s, nil
}
