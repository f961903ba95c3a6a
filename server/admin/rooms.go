package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/salelog"
)

// RoomDeps are what the writes of rooms need. Store and Log are required.
type RoomDeps struct {
	Store Store
	// Records keeps the database's record of the rooms; nil keeps none.
	Records Records
	// Audit records who changed what; nil records nothing.
	Audit AuditLog
	// AuditTimeout bounds one write to the audit log (default
	// DefaultAuditTimeout).
	AuditTimeout time.Duration
	// Sale is told of a sale's events; nil tells no one.
	Sale SaleLog
	Log  *slog.Logger
	// ChallengeDefault is the challenge setting of a new room.
	ChallengeDefault string
	// Tick is the admission period: a room's readySpreadMs is at most one
	// tick. 0 bounds it by room.MaxReadySpreadMs alone.
	Tick time.Duration
	// Saved, when set, is told the settings of each room saved.
	Saved func(name string, set room.Settings)
	// Deleted, when set, is told each room deleted.
	Deleted func(name string)
	// Codes, when set, are the rooms' access codes, deleted with their
	// room: a room made again under the name does not get them back.
	Codes interface {
		DeleteRoom(ctx context.Context, room string) (int64, error)
	}
}

// Rooms writes rooms: every write of a room's settings, for the JSON admin
// API and the console alike, is patched, validated, saved to the store,
// moves the sold-out flag, is recorded in the database and told to the
// sale log and the audit log.
type Rooms struct {
	d     RoomDeps
	audit auditor
	// recording serializes the records' writes that read the API key's
	// hash from the store (Record).
	recording sync.Mutex
}

// NewRooms returns the writes of rooms over d.
func NewRooms(d RoomDeps) *Rooms {
	if d.Sale == nil {
		d.Sale = noSaleLog{}
	}
	return &Rooms{d: d, audit: auditor{log: d.Audit, timeout: d.AuditTimeout, slog: d.Log}}
}

// Existence says whether a write may create the room, or only change it.
type Existence int

const (
	CreateOrUpdate Existence = iota // the JSON API's PUT
	MustExist                       // the console's settings and actions
	MustBeNew                       // the console's "new room"
)

// Write is one change of a room.
type Write struct {
	Patch room.Patch
	// SoldOut, when set, sets the sold-out flag: false reopens a room that
	// sold out (after a restock).
	SoldOut *bool
	Exist   Existence
	// Action is the audit log's name of the change; "" names it from what
	// changed (room.create, room.pause, room.resume or room.update).
	Action string
}

// Written is what a write did.
type Written struct {
	Created  bool
	Old, New room.Settings
	// WasSoldOut and SoldOut are the flag before and after (both false for
	// a new room).
	WasSoldOut, SoldOut bool
	// SoldOutErr is why the sold-out flag the write asked for was not set:
	// the settings are saved all the same, and the answer says so.
	SoldOutErr error
}

// Defaults returns the settings of a new room name, before its patch:
// room.Defaults with the default challenge.
func (rs *Rooms) Defaults(name string) room.Settings {
	set := room.Defaults(name)
	set.Challenge = rs.d.ChallengeDefault
	return set
}

// Save applies w to room name as actor. It returns room.ErrNotFound,
// ErrExists, an *InvalidError, or a store error.
func (rs *Rooms) Save(ctx context.Context, actor, name string, w Write) (Written, error) {
	if !room.ValidName(name) {
		return Written{}, &InvalidError{&room.FieldError{Field: "name",
			Reason: fmt.Sprintf("room names are 1 to %d characters of a-z, 0-9 and '-'", room.MaxNameLen)}}
	}
	cur, err := rs.d.Store.Room(ctx, name)
	created := errors.Is(err, room.ErrNotFound)
	switch {
	case created && w.Exist == MustExist:
		return Written{}, room.ErrNotFound
	case created:
		cur = rs.Defaults(name)
	case err != nil:
		return Written{}, fmt.Errorf("admin: read room %q: %w", name, err)
	case w.Exist == MustBeNew:
		return Written{}, ErrExists
	}
	next := w.Patch.Apply(cur)
	if err := next.Validate(); err != nil {
		return Written{}, &InvalidError{err}
	}
	if err := rs.checkReadySpread(cur, next); err != nil {
		return Written{}, err
	}
	done := Written{Created: created, Old: cur, New: next}
	if !created {
		st, err := rs.d.Store.Stats(ctx, name)
		if err != nil {
			return Written{}, fmt.Errorf("admin: read room %q: %w", name, err)
		}
		done.WasSoldOut = st.SoldOut
	}
	done.SoldOut = done.WasSoldOut
	if err := rs.store(ctx, name, w.Exist, created, cur, next); err != nil {
		return Written{}, err
	}
	if w.SoldOut != nil {
		if err := rs.d.Store.SetSoldOut(ctx, name, *w.SoldOut); err != nil {
			rs.d.Log.Warn("room saved, its sold-out flag not set", "room", name, "soldOut", *w.SoldOut, "err", err)
			done.SoldOutErr = err
		} else {
			done.SoldOut = *w.SoldOut
		}
	}
	rs.Record(ctx, name, next)
	rs.d.Log.Info("room saved", "room", name, "by", actor, "created", created, "rate", next.Rate, "maxActive", next.MaxActive, "paused", next.Paused, "mode", next.Mode,
		"readySpreadMs", readySpreadLog(next.ReadySpreadMs))
	if rs.d.Saved != nil {
		rs.d.Saved(name, next)
	}
	rs.events(name, actor, w.Action, done)
	rs.Audit(ctx, actor, name, w.Action, done)
	return done, nil
}

// store saves next, read as cur, to the store as exist asks. A line in
// use that next would rename or remove is an *InvalidError.
func (rs *Rooms) store(ctx context.Context, name string, exist Existence, created bool, cur, next room.Settings) error {
	err := rs.save(ctx, name, exist, created, cur, next)
	if fe, ok := errors.AsType[*room.FieldError](err); ok && errors.Is(err, room.ErrLineInUse) {
		return &InvalidError{fe}
	}
	return err
}

// save saves next, read as cur, to the store as exist asks.
func (rs *Rooms) save(ctx context.Context, name string, exist Existence, created bool, cur, next room.Settings) error {
	switch {
	case exist == MustBeNew:
		// Created only if still missing: two operators creating the same
		// name at once do not overwrite each other.
		made, err := rs.d.Store.CreateRoom(ctx, name, next)
		if err != nil {
			return fmt.Errorf("admin: create room %q: %w", name, err)
		}
		if !made {
			return ErrExists
		}
	case keepsControllerRate(created, cur, next):
		if err := rs.d.Store.SaveRoomKeepingRate(ctx, name, next); err != nil {
			return fmt.Errorf("admin: save room %q: %w", name, err)
		}
	default:
		if err := rs.d.Store.SaveRoom(ctx, name, next); err != nil {
			return fmt.Errorf("admin: save room %q: %w", name, err)
		}
	}
	return nil
}

// checkReadySpread refuses, with an *InvalidError, a write from cur to
// next that sets readySpreadMs above one tick. A write that leaves it as
// it was is not refused for it: a room saved under a longer tick can
// still be paused.
func (rs *Rooms) checkReadySpread(cur, next room.Settings) error {
	if room.SameReadySpread(cur.ReadySpreadMs, next.ReadySpreadMs) {
		return nil
	}
	if err := next.ValidateReadySpread(rs.d.Tick); err != nil {
		return &InvalidError{err}
	}
	return nil
}

// readySpreadLog is readySpreadMs for a log line: its value, or "default".
func readySpreadLog(ms *int) string {
	if ms == nil {
		return "default"
	}
	return strconv.Itoa(*ms)
}

// keepsControllerRate reports whether a write of an existing room from cur
// to next leaves the rate to the adaptive controller: adaptive before and
// after, and the rate unchanged by the patch (and not moved into new
// bounds). The controller may have moved the rate since cur was read
// (between a console page's load and its save, or within this write):
// writing cur's rate back would undo its step.
func keepsControllerRate(created bool, cur, next room.Settings) bool {
	return !created && cur.Adaptive && next.Adaptive && next.Rate == cur.Rate
}

// Record writes room name's settings set to the database record, with
// the API key's hash as the store has it now: set was read before, and a
// key rotation since must not be undone in the record (a restore after a
// loss of Redis brings the record back). A failure is logged and retried
// by the records.
func (rs *Rooms) Record(ctx context.Context, name string, set room.Settings) {
	if rs.d.Records == nil {
		return
	}
	rs.recording.Lock()
	defer rs.recording.Unlock()
	if h, err := rs.d.Store.APIKeyHash(ctx, name); err == nil {
		set.Gate.APIKeyHash = h
	}
	_ = rs.d.Records.Record(ctx, name, set) // the records log and retry a failure
}

// Delete removes room name, its line and all its store keys, and its
// record, as actor; its products and orders stay in the database. It
// returns room.ErrNotFound when there was no such room.
func (rs *Rooms) Delete(ctx context.Context, actor, name string) (queue.Deletion, error) {
	old, err := rs.d.Store.Room(ctx, name)
	if err != nil && !errors.Is(err, room.ErrNotFound) {
		return queue.Deletion{}, fmt.Errorf("admin: read room %q: %w", name, err)
	}
	d, err := rs.d.Store.DeleteRoom(ctx, name)
	if err != nil {
		return queue.Deletion{}, fmt.Errorf("admin: delete room %q: %w", name, err)
	}
	if rs.d.Records != nil {
		_ = rs.d.Records.Forget(ctx, name) // the records log and retry a failure
	}
	if rs.d.Codes != nil {
		// Also when the room was gone already: a delete sent again after
		// this failed finishes the job.
		if n, err := rs.d.Codes.DeleteRoom(ctx, name); err != nil {
			return d, fmt.Errorf("admin: delete the access codes of room %q: %w", name, err)
		} else if n > 0 {
			rs.d.Log.Info("room's access codes deleted", "room", name, "codes", n)
		}
	}
	if !d.Existed {
		return d, room.ErrNotFound
	}
	if rs.d.Deleted != nil {
		rs.d.Deleted(name)
	}
	rs.d.Log.Info("room deleted", "room", name, "by", actor, "redisKeys", d.Keys)
	rs.d.Sale.Event(name, salelog.Deleted, "by", actor, "redisKeys", d.Keys)
	rs.audit.record(ctx, audit.Entry{Actor: actor, Room: name, Action: ActionDelete, Old: CompactJSON(audited(old, false).Settings)})
	return d, nil
}

// Audit records a write of room name in the audit log: a new room with
// all its settings, a change with the fields that changed, old and new. A
// write that changed nothing is not recorded. Without an action, the
// write is named by what it changed: the JSON API's {"paused":true} is a
// room.pause, as the console's Pause is.
func (rs *Rooms) Audit(ctx context.Context, actor, name, action string, d Written) {
	if d.Created {
		if action == "" {
			action = ActionCreate
		}
		rs.audit.record(ctx, audit.Entry{Actor: actor, Room: name, Action: action, New: CompactJSON(audited(d.New, d.SoldOut))})
		return
	}
	cs := audit.Changes(audited(d.Old, d.WasSoldOut), audited(d.New, d.SoldOut))
	if len(cs) == 0 {
		return
	}
	if action == "" {
		action = ActionUpdate
		if len(cs) == 1 && cs[0].Field == "paused" {
			action = ActionResume
			if d.New.Paused {
				action = ActionPause
			}
		}
	}
	old, nw := changeObjects(cs)
	rs.audit.record(ctx, audit.Entry{Actor: actor, Room: name, Action: action, Old: old, New: nw})
}
