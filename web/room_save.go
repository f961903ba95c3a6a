package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/salelog"
)

// The one path of every write of a room's settings, for the JSON admin API
// and the console alike: patch, validate, save to Redis, move the sold-out
// flag, record in the database, tell the sale log and the audit log.

// apiActor is who the audit log says made a change through the JSON admin
// API (its bearer token names no one).
const apiActor = "admin-token"

// roomExistence says whether a write may create the room, or only change it.
type roomExistence int

const (
	createOrUpdate roomExistence = iota // the JSON API's PUT
	mustExist                           // the console's settings and actions
	mustBeNew                           // the console's "new room"
)

// roomWrite is one change of a room.
type roomWrite struct {
	Patch room.Patch
	// SoldOut, when set, sets the sold-out flag: false reopens a room that
	// sold out (after a restock).
	SoldOut *bool
	Exist   roomExistence
	// Action is the audit log's name of the change; "" names it from what
	// changed (room.create, room.pause, room.resume or room.update).
	Action string
}

// roomWritten is what a write did.
type roomWritten struct {
	Created  bool
	Old, New room.Settings
	// WasSoldOut and SoldOut are the flag before and after (both false for
	// a new room).
	WasSoldOut, SoldOut bool
	// SoldOutErr is why the sold-out flag the write asked for was not set:
	// the settings are saved all the same, and the answer says so.
	SoldOutErr error
}

// The audit log's names of room changes.
const (
	actionCreate = "room.create"
	actionUpdate = "room.update"
	actionDelete = "room.delete"
	actionPause  = "room.pause"
	actionResume = "room.resume"
	actionDrain  = "room.drain"
	actionClose  = "room.close"
	actionReopen = "room.reopen"
)

// errRoomExists refuses to create a room that is already there.
var errRoomExists = errors.New("room already exists")

// invalidSettingsError is settings that room.Settings.Validate refused; its
// text names the field.
type invalidSettingsError struct{ err error }

func (e *invalidSettingsError) Error() string { return e.err.Error() }
func (e *invalidSettingsError) Unwrap() error { return e.err }

// roomDefaults returns the settings of a new room name, before its patch:
// room.Defaults with the server's default challenge.
func (s *Server) roomDefaults(name string) room.Settings {
	set := room.Defaults(name)
	set.Challenge = s.challengeDefault
	return set
}

// effectiveChallenge is a room's challenge setting as it applies: the
// server's default for a room saved before the setting existed ("").
func (s *Server) effectiveChallenge(c string) string {
	if c == "" {
		return s.challengeDefault
	}
	return c
}

// saveRoom applies w to room name as actor. It returns room.ErrNotFound,
// errRoomExists, an *invalidSettingsError, or a store error.
func (s *Server) saveRoom(ctx context.Context, actor, name string, w roomWrite) (roomWritten, error) {
	if !room.ValidName(name) {
		return roomWritten{}, &invalidSettingsError{fmt.Errorf("room names are 1 to %d characters of a-z, 0-9 and '-'", room.MaxNameLen)}
	}
	cur, err := s.rooms.Room(ctx, name)
	created := errors.Is(err, room.ErrNotFound)
	switch {
	case created && w.Exist == mustExist:
		return roomWritten{}, room.ErrNotFound
	case created:
		cur = s.roomDefaults(name)
	case err != nil:
		return roomWritten{}, err
	case w.Exist == mustBeNew:
		return roomWritten{}, errRoomExists
	}
	next := w.Patch.Apply(cur)
	if err := next.Validate(); err != nil {
		return roomWritten{}, &invalidSettingsError{err}
	}
	if err := s.checkReadySpread(cur, next); err != nil {
		return roomWritten{}, err
	}
	done := roomWritten{Created: created, Old: cur, New: next}
	if !created {
		st, err := s.rooms.Stats(ctx, name)
		if err != nil {
			return roomWritten{}, err
		}
		done.WasSoldOut = st.SoldOut
	}
	done.SoldOut = done.WasSoldOut
	if w.Exist == mustBeNew {
		// Created only if still missing: two operators creating the same
		// name at once do not overwrite each other.
		if made, err := s.rooms.CreateRoom(ctx, name, next); err != nil {
			return roomWritten{}, err
		} else if !made {
			return roomWritten{}, errRoomExists
		}
	} else if keepsControllerRate(created, cur, next) {
		if err := s.rooms.SaveRoomKeepingRate(ctx, name, next); err != nil {
			return roomWritten{}, err
		}
	} else if err := s.rooms.SaveRoom(ctx, name, next); err != nil {
		return roomWritten{}, err
	}
	if w.SoldOut != nil {
		if err := s.rooms.SetSoldOut(ctx, name, *w.SoldOut); err != nil {
			s.log.Warn("room saved, its sold-out flag not set", "room", name, "soldOut", *w.SoldOut, "err", err)
			done.SoldOutErr = err
		} else {
			done.SoldOut = *w.SoldOut
		}
	}
	s.recordRoom(ctx, name, next)
	s.log.Info("room saved", "room", name, "by", actor, "created", created, "rate", next.Rate, "maxActive", next.MaxActive, "paused", next.Paused, "mode", next.Mode,
		"readySpreadMs", readySpreadLog(next.ReadySpreadMs))
	s.gate.Remember(name, next)
	s.roomEvents(name, actor, w.Action, done)
	s.auditRoom(ctx, actor, name, w.Action, done)
	return done, nil
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

// recordRoom writes room name's settings set to the database record, with
// the API key's hash as Redis has it now: set was read before, and a key
// rotation since must not be undone in the record (a restore after a loss
// of Redis brings the record back). A failure is logged and retried.
func (s *Server) recordRoom(ctx context.Context, name string, set room.Settings) {
	if s.records == nil {
		return
	}
	s.recording.Lock()
	defer s.recording.Unlock()
	if h, err := s.rooms.APIKeyHash(ctx, name); err == nil {
		set.Gate.APIKeyHash = h
	}
	s.records.Record(ctx, name, set)
}

// openNow reports whether a room with settings r sells at now: not closed,
// not paused, past its opening and before its closing.
func openNow(r room.Settings, now time.Time) bool {
	return r.Mode != room.ModeClosed && !r.Paused &&
		(r.OpensAt == nil || !r.OpensAt.After(now)) && (r.ClosesAt == nil || r.ClosesAt.After(now))
}

// roomEvents tells the sale log what a write changed.
func (s *Server) roomEvents(name, actor, action string, d roomWritten) {
	cur, next := d.Old, d.New
	switch {
	case d.Created:
		ev := salelog.Created // the issuers tell its schedule's opening
		if openNow(next, time.Now()) {
			ev = salelog.Opened
		}
		s.sale.Event(name, ev, "by", actor, "rate", next.Rate, "maxActive", next.MaxActive, "paused", next.Paused, "mode", next.Mode)
	case !cur.Paused && next.Paused:
		s.sale.Event(name, salelog.Paused, "by", actor)
	case cur.Paused && !next.Paused:
		s.sale.Event(name, salelog.Resumed, "by", actor)
	}
	if !d.Created && cur.Rate != next.Rate {
		s.sale.Event(name, salelog.RateChanged, "by", actor, "old", cur.Rate, "new", next.Rate)
	}
	switch a := next.Adapt; {
	case a.Adaptive && (d.Created || !cur.Adaptive):
		s.sale.Event(name, salelog.AdaptiveOn, "by", actor, "minRate", a.MinRate, "maxRate", a.MaxRate,
			"targetP95Ms", a.TargetP95Ms, "maxErrorRate", a.MaxErrorRate)
	case !d.Created && cur.Adaptive && !a.Adaptive:
		s.sale.Event(name, salelog.AdaptiveOff, "by", actor, "rate", next.Rate)
	}
	if !d.Created && cur.Mode != next.Mode && next.Mode == room.ModeClosed {
		s.sale.Event(name, salelog.Closed, "by", actor)
	}
	if action == actionDrain && next.ClosesAt != nil {
		s.sale.Event(name, salelog.Draining, "by", actor, "closesAt", *next.ClosesAt)
	}
	reopened := !d.Created && cur.Mode == room.ModeClosed && next.Mode != room.ModeClosed
	switch {
	case d.SoldOut && !d.WasSoldOut:
		s.sale.Event(name, salelog.SoldOut, "by", actor)
	case d.WasSoldOut && !d.SoldOut, reopened, action == actionReopen:
		s.sale.Event(name, salelog.Reopened, "by", actor)
	}
}

// deleteRoomAs removes room name, its line and all its Redis keys, and its
// record, as actor; its products and orders stay in the database. It
// returns room.ErrNotFound when there was no such room.
func (s *Server) deleteRoomAs(ctx context.Context, actor, name string) (queue.Deletion, error) {
	old, err := s.rooms.Room(ctx, name)
	if err != nil && !errors.Is(err, room.ErrNotFound) {
		return queue.Deletion{}, err
	}
	d, err := s.rooms.DeleteRoom(ctx, name)
	if err != nil {
		return queue.Deletion{}, err
	}
	if s.records != nil {
		s.records.Forget(ctx, name) // a failure is logged and retried
	}
	if !d.Existed {
		return d, room.ErrNotFound
	}
	s.hub.RoomGone(name) // WIDGET: its open widgets show that it ended
	s.widgets.mu.Lock()
	delete(s.widgets.rooms, name)
	s.widgets.mu.Unlock()
	s.log.Info("room deleted", "room", name, "by", actor, "redisKeys", d.Keys)
	s.sale.Event(name, salelog.Deleted, "by", actor, "redisKeys", d.Keys)
	s.audit(ctx, audit.Entry{Actor: actor, Room: name, Action: actionDelete, Old: compactJSON(audited(old, false).Settings)})
	return d, nil
}

// auditedRoom is what the audit log compares of a room: its settings and
// its sold-out flag. The API key's hash is recorded as a short
// fingerprint (keyFingerprint), enough to see that a key was replaced.
type auditedRoom struct {
	room.Settings
	SoldOut bool `json:"soldOut"`
}

func audited(set room.Settings, soldOut bool) auditedRoom {
	set.Gate.APIKeyHash = keyFingerprint(set.Gate.APIKeyHash)
	return auditedRoom{set, soldOut}
}

// keyFingerprint is "" for no API key, else "sha256:" and the first 8
// hex digits of its hash.
func keyFingerprint(hash string) string {
	if len(hash) < 8 {
		return ""
	}
	return "sha256:" + hash[:8]
}

// auditRoom records a write of room name in the audit log: a new room with
// all its settings, a change with the fields that changed, old and new. A
// write that changed nothing is not recorded. Without an action, the
// write is named by what it changed: the JSON API's {"paused":true} is a
// room.pause, as the console's Pause is.
func (s *Server) auditRoom(ctx context.Context, actor, name, action string, d roomWritten) {
	if d.Created {
		if action == "" {
			action = actionCreate
		}
		s.audit(ctx, audit.Entry{Actor: actor, Room: name, Action: action, New: compactJSON(audited(d.New, d.SoldOut))})
		return
	}
	cs := audit.Changes(audited(d.Old, d.WasSoldOut), audited(d.New, d.SoldOut))
	if len(cs) == 0 {
		return
	}
	if action == "" {
		action = actionUpdate
		if len(cs) == 1 && cs[0].Field == "paused" {
			action = actionResume
			if d.New.Paused {
				action = actionPause
			}
		}
	}
	old, nw := changeObjects(cs)
	s.audit(ctx, audit.Entry{Actor: actor, Room: name, Action: action, Old: old, New: nw})
}

// changeObjects writes changes as two JSON objects of the changed fields:
// their old values and their new ones, such as {"rate":50} and
// {"rate":80}.
func changeObjects(cs []audit.Change) (old, nw string) {
	var o, n strings.Builder
	for i, c := range cs {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		key, _ := json.Marshal(c.Field)
		o.WriteString(sep + string(key) + ":" + jsonOrNull(c.Old))
		n.WriteString(sep + string(key) + ":" + jsonOrNull(c.New))
	}
	if len(cs) == 0 {
		return "", ""
	}
	return o.String() + "}", n.String() + "}"
}

// jsonOrNull is v, a JSON value, or null for a field one side lacks.
func jsonOrNull(v string) string {
	if v == "" {
		return "null"
	}
	return v
}

// compactJSON is v as compact JSON, "" when it does not marshal.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
