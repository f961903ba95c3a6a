package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/line"
	"waitingroom/server/room"
)

// CreatedField is the field of a room's settings hash (SettingsKey) that
// holds when the room was created, in unix ms: a room deleted and created
// again under the same name is a new room from then on (the live series
// ignore the seconds before it). Rooms created before it existed have none.
const CreatedField = "createdMs"

// SettingsKey is the Redis key of room's settings hash, for readers outside
// the queue (read only).
func SettingsKey(ns, room string) string { return roomKeys(ns, room).key("cfg") }

// settingsFields flattens s into the cfg hash's field/value pairs.
func settingsFields(s room.Settings) []any {
	sessionSeconds, sessionMode := s.Session()
	paused := "0"
	if s.Paused {
		paused = "1"
	}
	return []any{
		"title", s.Title,
		"rate", strconv.FormatFloat(s.Rate, 'f', -1, 64),
		"maxActive", strconv.Itoa(s.MaxActive),
		"tokenTTLSeconds", strconv.Itoa(s.TokenTTLSeconds),
		"orderRate", strconv.FormatFloat(s.OrderRate, 'f', -1, 64),
		"orderBurst", strconv.Itoa(s.OrderBurst),
		"paused", paused,
		"abandonAfterSeconds", strconv.Itoa(s.AbandonAfterSeconds),
		"mode", room.CanonicalMode(s.Mode),
		// DRAW: the schedule, in unix ms ("" when unset).
		"prequeueAt", unixMs(s.PrequeueAt),
		"opensAt", unixMs(s.OpensAt),
		"closesAt", unixMs(s.ClosesAt),
		"serveLineAfterClose", flag(s.ServeLineAfterClose),
		"returnWithinSeconds", strconv.Itoa(s.ReturnWithinSeconds), // ABSENCE

		"shopURL", s.ShopURL,
		"maxPerBuyer", strconv.Itoa(s.MaxPerBuyer),
		// CHALLENGE: read by the enter and challenge scripts.
		"challenge", s.Challenge, // "": the engine's default (SetChallengeDefault)
		// Read by the admission script for its event ("rs"), and by the
		// snapshot: "" follows the server's default.
		"readySpreadMs", optionalInt(s.ReadySpreadMs),
		// The branding, one JSON field: no script reads it.
		"branding", brandingJSON(s.Branding),
		// GATE: the gate, one JSON field, and the session's length and mode
		// (defaults filled in) as plain fields for the session scripts.
		"gate", gateJSON(s.Gate),
		"sessionSeconds", strconv.Itoa(sessionSeconds),
		"sessionMode", sessionMode,
		"gateOn", flag(s.TargetURL != ""), // the ETA's hold before one is measured
		// ADAPT: read by the controller's script (adapt.lua).
		"adaptive", flag(s.Adaptive),
		"minRate", strconv.FormatFloat(s.Adapt.MinRate, 'f', -1, 64),
		"maxRate", strconv.FormatFloat(s.Adapt.MaxRate, 'f', -1, 64),
		"targetP95Ms", strconv.Itoa(s.TargetP95Ms),
		"maxErrorRate", strconv.FormatFloat(s.MaxErrorRate, 'f', -1, 64),
		"healthURL", s.HealthURL,
		// Who may take a new place: "access" and "identity" are read by
		// the enter script; the shop's keys and sign-in page by the server.
		"access", s.Access.Access,
		"identity", s.Identity,
		"identityJWKSURL", s.IdentityJWKSURL,
		"identityKeys", s.IdentityKeys,
		"signInURL", s.SignInURL,
		// The named lines, read by the scripts: "" for none, else
		// "name share access" a line, joined by "|" (linesField).
		"lines", linesField(s.Lines),
		// Who skips the line, one JSON field: no script reads it.
		"staffNetworks", staffJSON(s.Bypass),
	}
}

// linesField encodes lines for the cfg hash: "" for none, else each line
// as its name, share and access (open, code or identity) separated by one
// space, the lines joined by "|", such as "presale 0.7 code|general 0.3
// open". The scripts parse exactly this.
func linesField(lines []room.Line) string {
	var b strings.Builder
	for i, l := range room.NormalizeLines(lines) {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(l.Name)
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(l.Share, 'f', -1, 64))
		b.WriteByte(' ')
		b.WriteString(l.Access)
	}
	return b.String()
}

// parseLinesField decodes a cfg hash's lines (linesField): nil for "".
func parseLinesField(v string) ([]room.Line, error) {
	if v == "" {
		return nil, nil
	}
	var lines []room.Line
	for _, part := range strings.Split(v, "|") {
		f := strings.Split(part, " ")
		if len(f) != 3 || f[0] == "" || !line.ValidName(f[0]) {
			return nil, fmt.Errorf("field lines: %q is not \"name share access\" a line", part)
		}
		share, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("field lines: line %q: share %q is not a number", f[0], f[1])
		}
		switch f[2] {
		case room.LineOpen, room.LineCode, room.LineIdentity:
		default:
			return nil, fmt.Errorf("field lines: line %q: unknown access %q", f[0], f[2])
		}
		lines = append(lines, room.Line{Name: f[0], Share: share, Access: f[2]})
	}
	return lines, nil
}

// staffJSON encodes b's networks for the cfg hash ("" for none).
func staffJSON(b room.Bypass) string {
	if len(b.StaffNetworks) == 0 {
		return ""
	}
	out, _ := json.Marshal(b.StaffNetworks)
	return string(out)
}

// optionalInt is n in decimal, or "" for nil.
func optionalInt(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

// gateJSON encodes g for the cfg hash. Marshal cannot fail on strings, a
// string slice, an int and a bool.
// The API key's hash is not in it: it has a field of its own
// (apiKeyField).
func gateJSON(g room.Gate) string {
	g.APIKeyHash = ""
	out, _ := json.Marshal(g)
	return string(out)
}

// brandingJSON encodes b for the cfg hash. Marshal cannot fail on plain
// strings, a string slice and a bool.
func brandingJSON(b room.Branding) string {
	out, _ := json.Marshal(b)
	return string(out)
}

// withoutField returns the field/value pairs fields without field's.
func withoutField(fields []any, field string) []any {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == field {
			return slices.Delete(fields, i, i+2)
		}
	}
	return fields
}

// SaveRoom creates or replaces the settings of room. The admission script
// reads them on every tick, so a change takes effect on all instances at
// the next tick. It returns an error when s is invalid.
func (e *Engine) SaveRoom(ctx context.Context, name string, s room.Settings) error {
	return e.saveRoom(ctx, name, s, false)
}

// SaveRoomKeepingRate is SaveRoom but for the rate, which stays as it is
// in Redis: in an adaptive room the controller may have moved it since s
// was read, and a save that does not change the rate must not write the
// old one back.
func (e *Engine) SaveRoomKeepingRate(ctx context.Context, name string, s room.Settings) error {
	return e.saveRoom(ctx, name, s, true)
}

func (e *Engine) saveRoom(ctx context.Context, name string, s room.Settings, keepRate bool) error {
	if !room.ValidName(name) {
		return fmt.Errorf("queue: save room: invalid name %q", name)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("queue: save room %s: %w", name, err)
	}
	rk := roomKeys(e.ns, name)
	cfg := rk.key("cfg")
	// LINES: the settings are watched, and so are the keys of a line
	// renamed or removed, so that it changes only while nobody is in it
	// (linesInUse). Another save, or a join into that line, in between
	// makes the save start over.
	var err error
	for range 5 {
		err = e.rdb.Watch(ctx, func(tx *redis.Tx) error {
			return e.writeRoom(ctx, tx, rk, s, keepRate)
		}, cfg)
		if !errors.Is(err, redis.TxFailedErr) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("queue: save room %s: %w", name, err)
	}
	return e.afterSave(ctx, name, s)
}

// linesInUseKeys are the keys of a line that hold people (its pre-queue
// entries are counted in pqn).
var linesInUseKeys = []string{"queue", "back", "away"}

// linesInUse returns an error wrapping room.ErrLineInUse when saving
// lines over the stored ones (old, the cfg's field) would rename or
// remove a line that has people in it, its pre-queue entries counted.
// The first line may lose its name when the room drops its lines (its
// people stay, in the room's one line), and a room gaining lines puts
// the people of its one line in the first.
func linesInUse(ctx context.Context, tx *redis.Tx, rk keys, old string, lines []room.Line) error {
	before, err := parseLinesField(old)
	if err != nil {
		return err
	}
	for i := range before {
		if i < len(lines) && lines[i].Name == before[i].Name || i == 0 && len(lines) == 0 {
			continue
		}
		held := []string{rk.key("pqn"), rk.key("prequeue")}
		for _, k := range linesInUseKeys {
			held = append(held, rk.key(lineKey(i, k)))
		}
		if err := tx.Watch(ctx, held...).Err(); err != nil {
			return err
		}
		n, err := prequeuedIn(ctx, tx, rk, i)
		if err != nil {
			return err
		}
		for _, k := range linesInUseKeys {
			c, err := tx.ZCard(ctx, rk.key(lineKey(i, k))).Result()
			if err != nil {
				return err
			}
			n += c
		}
		if n > 0 {
			return &room.FieldError{Field: "lines", Err: room.ErrLineInUse,
				Reason: fmt.Sprintf("line %q has %s in it: a line keeps its name and its place in the list until it is empty", before[i].Name, people(n))}
		}
	}
	return nil
}

// people says n people, or 1 person.
func people(n int64) string {
	if n == 1 {
		return "1 person"
	}
	return strconv.FormatInt(n, 10) + " people"
}

// prequeuedIn returns how many pre-queue entries line i has: its count
// in pqn, or for the first line the entries no other line counts.
func prequeuedIn(ctx context.Context, tx *redis.Tx, rk keys, i int) (int64, error) {
	counts, err := tx.HGetAll(ctx, rk.key("pqn")).Result()
	if err != nil {
		return 0, err
	}
	if i > 0 {
		n, _ := strconv.ParseInt(counts[strconv.Itoa(i)], 10, 64)
		return n, nil
	}
	n, err := tx.ZCard(ctx, rk.key("prequeue")).Result()
	if err != nil {
		return 0, err
	}
	for _, c := range counts {
		m, _ := strconv.ParseInt(c, 10, 64)
		n -= m
	}
	return n, nil
}

// writeRoom writes room rk's settings s in tx, after checking that its
// lines may change (linesInUse).
func (e *Engine) writeRoom(ctx context.Context, tx *redis.Tx, rk keys, s room.Settings, keepRate bool) error {
	cfg := rk.key("cfg")
	existed, err := tx.Exists(ctx, cfg).Result()
	if err != nil {
		return err
	}
	if existed == 1 {
		old, err := tx.HGet(ctx, cfg, "lines").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if err := linesInUse(ctx, tx, rk, old, s.Lines); err != nil {
			return err
		}
	}
	fields := settingsFields(s)
	if keepRate && existed == 1 {
		fields = withoutField(fields, "rate")
	}
	_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, cfg, fields...)
		// IDLE: a sleeping room wakes with its new settings (see wake in
		// lib.lua); the instances are told below.
		p.HDel(ctx, rk.key("rate"), "asleep", "wakeAt")
		if existed == 0 { // created now (a room saved before CreatedField existed keeps none)
			p.HSetNX(ctx, cfg, CreatedField, strconv.FormatInt(e.wallNow().UnixMilli(), 10))
		}
		if s.Gate.APIKeyHash != "" {
			// GATE: only where there is none yet (a new room, or one saved
			// before the field existed): the key is SetAPIKeyHash's.
			p.HSetNX(ctx, cfg, apiKeyField, s.Gate.APIKeyHash)
		}
		return nil
	})
	return err
}

// afterSave does what follows a room's save of s.
func (e *Engine) afterSave(ctx context.Context, name string, s room.Settings) error {
	// ABSENCE: the measured rate and hold time belong to the old settings;
	// the ETA follows the new ones from the next answer on.
	if err := e.rdb.HDel(ctx, roomKeys(e.ns, name).key("rate"), "ewma", "hold", "holdn", "holdms").Err(); err != nil {
		return fmt.Errorf("queue: save room %s: reset measured rate: %w", name, err)
	}
	if err := e.rdb.SAdd(ctx, roomsKey(e.ns), name).Err(); err != nil {
		return fmt.Errorf("queue: register room %s: %w", name, err)
	}
	if err := e.markAdaptive(ctx, name, s.Adaptive); err != nil {
		return err
	}
	// DRAW: a scheduled opening commits to its draw's seed at once.
	if s.OpensAt != nil {
		if _, err := e.ensureSeed(ctx, name); err != nil {
			return err
		}
	}
	e.tellWoken(ctx, name)
	return nil
}

// tellWoken tells every instance that room name is awake, so that their
// next tick runs it (see wake in lib.lua). A message lost is made up for
// by the issuers' SleepCheck.
func (e *Engine) tellWoken(ctx context.Context, name string) {
	e.rdb.Publish(ctx, roomKeys(e.ns, name).events, WakeMessage)
}

// Sleeping reports whether room name sleeps (see Admission's Asleep),
// and until when by the scripts' clock (zero: until something wakes it).
func (e *Engine) Sleeping(ctx context.Context, name string) (bool, time.Time, error) {
	v, err := e.rdb.HMGet(ctx, roomKeys(e.ns, name).key("rate"), "asleep", "wakeAt").Result()
	if err != nil {
		return false, time.Time{}, fmt.Errorf("queue: sleeping %s: %w", name, err)
	}
	if v[0] == nil {
		return false, time.Time{}, nil
	}
	var at time.Time
	if ms, _ := strconv.ParseInt(fmt.Sprint(v[1]), 10, 64); ms > 0 {
		at = time.UnixMilli(ms)
	}
	return true, at, nil
}

// CreateRoom creates room with s unless it already exists, and reports
// whether it did. Existing settings are never overwritten, so that a
// restart keeps an operator's changes.
func (e *Engine) CreateRoom(ctx context.Context, name string, s room.Settings) (bool, error) {
	if !room.ValidName(name) {
		return false, fmt.Errorf("queue: create room: invalid name %q", name)
	}
	if err := s.Validate(); err != nil {
		return false, fmt.Errorf("queue: create room %s: %w", name, err)
	}
	fields := append(settingsFields(s), CreatedField, strconv.FormatInt(e.wallNow().UnixMilli(), 10))
	if s.Gate.APIKeyHash != "" { // GATE: a restore brings the key back
		fields = append(fields, apiKeyField, s.Gate.APIKeyHash)
	}
	n, err := e.run(ctx, e.s.createRoom, name, fields...).Int64()
	if err != nil {
		return false, fmt.Errorf("queue: create room %s: %w", name, err)
	}
	if err := e.rdb.SAdd(ctx, roomsKey(e.ns), name).Err(); err != nil {
		return false, fmt.Errorf("queue: register room %s: %w", name, err)
	}
	if n == 1 {
		if err := e.markAdaptive(ctx, name, s.Adaptive); err != nil {
			return false, err
		}
		e.tellWoken(ctx, name) // a room of the same name may have slept before
	}
	// DRAW: a scheduled opening commits to its draw's seed at once.
	if s.OpensAt != nil {
		if _, err := e.ensureSeed(ctx, name); err != nil {
			return false, err
		}
	}
	return n == 1, nil
}

// Room returns room's settings. It returns room.ErrNotFound for an unknown
// room.
func (e *Engine) Room(ctx context.Context, name string) (room.Settings, error) {
	m, err := e.rdb.HGetAll(ctx, roomKeys(e.ns, name).key("cfg")).Result()
	if err != nil {
		return room.Settings{}, fmt.Errorf("queue: load room %s: %w", name, err)
	}
	if len(m) == 0 {
		return room.Settings{}, fmt.Errorf("queue: load room %s: %w", name, room.ErrNotFound)
	}
	return decodeSettings(name, m)
}

// RoomsSettings returns the settings of the rooms of names, read in one
// pipeline, by name. Unknown rooms, and rooms whose settings do not
// decode, are left out.
func (e *Engine) RoomsSettings(ctx context.Context, names []string) (map[string]room.Settings, error) {
	cmds := make([]*redis.MapStringStringCmd, len(names))
	_, err := e.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, name := range names {
			cmds[i] = p.HGetAll(ctx, roomKeys(e.ns, name).key("cfg"))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue: load %d rooms: %w", len(names), err)
	}
	out := make(map[string]room.Settings, len(names))
	for i, name := range names {
		if m := cmds[i].Val(); len(m) > 0 {
			if s, err := decodeSettings(name, m); err == nil {
				out[name] = s
			}
		}
	}
	return out, nil
}

// decodeSettings decodes room name's settings from its cfg hash m.
func decodeSettings(name string, m map[string]string) (room.Settings, error) {
	var s room.Settings
	var errs []error
	var err error
	s.Title = m["title"]
	s.Rate, err = strconv.ParseFloat(m["rate"], 64)
	errs = append(errs, err)
	s.MaxActive, err = strconv.Atoi(m["maxActive"])
	errs = append(errs, err)
	s.TokenTTLSeconds, err = strconv.Atoi(m["tokenTTLSeconds"])
	errs = append(errs, err)
	s.OrderRate, err = strconv.ParseFloat(m["orderRate"], 64)
	errs = append(errs, err)
	s.OrderBurst, err = strconv.Atoi(m["orderBurst"])
	errs = append(errs, err)
	s.Paused = m["paused"] == "1"
	s.AbandonAfterSeconds, err = strconv.Atoi(m["abandonAfterSeconds"])
	errs = append(errs, err)
	s.Mode = room.CanonicalMode(m["mode"])
	// DRAW: the schedule.
	s.PrequeueAt, s.OpensAt, s.ClosesAt = fromUnixMs(m["prequeueAt"]), fromUnixMs(m["opensAt"]), fromUnixMs(m["closesAt"])
	s.ServeLineAfterClose = m["serveLineAfterClose"] != "0"
	// ABSENCE: rooms saved before returnWithinSeconds existed take the default.
	s.ReturnWithinSeconds = room.DefaultReturnWithin
	if v, ok := m["returnWithinSeconds"]; ok {
		s.ReturnWithinSeconds, err = strconv.Atoi(v)
		errs = append(errs, err)
	}

	s.ShopURL = m["shopURL"]
	if v := m["maxPerBuyer"]; v != "" { // absent in rooms saved before it existed
		s.MaxPerBuyer, err = strconv.Atoi(v)
		errs = append(errs, err)
	}

	// CHALLENGE: off in rooms saved before it existed.
	s.Challenge = m["challenge"] // "" (or none): the server's default
	// "" (or none, in rooms saved before it existed): the server's default.
	if v := m["readySpreadMs"]; v != "" {
		n, err := strconv.Atoi(v)
		errs = append(errs, err)
		s.ReadySpreadMs = &n
	}
	if v := m["branding"]; v != "" { // absent in rooms saved before it existed
		errs = append(errs, json.Unmarshal([]byte(v), &s.Branding))
	}
	s.Gate = room.DefaultGate()
	if v := m["gate"]; v != "" { // absent in rooms saved before it existed
		errs = append(errs, json.Unmarshal([]byte(v), &s.Gate))
	}
	if v, ok := m[apiKeyField]; ok { // else a room saved before it existed: the gate's JSON had it
		s.Gate.APIKeyHash = v
	}

	// ADAPT: the defaults (off) in rooms saved before it existed.
	s.Adapt = room.DefaultAdapt()
	if _, ok := m["adaptive"]; ok {
		s.Adaptive = m["adaptive"] == "1"
		s.Adapt.MinRate, err = strconv.ParseFloat(m["minRate"], 64)
		errs = append(errs, err)
		s.Adapt.MaxRate, err = strconv.ParseFloat(m["maxRate"], 64)
		errs = append(errs, err)
		s.TargetP95Ms, err = strconv.Atoi(m["targetP95Ms"])
		errs = append(errs, err)
		s.MaxErrorRate, err = strconv.ParseFloat(m["maxErrorRate"], 64)
		errs = append(errs, err)
		s.HealthURL = m["healthURL"] // "" in rooms saved before it existed
	}

	// Open to anyone, without identities, in rooms saved before access
	// existed (their fields are absent).
	s.Access = room.Access{Access: m["access"], Identity: m["identity"], IdentityJWKSURL: m["identityJWKSURL"],
		IdentityKeys: m["identityKeys"], SignInURL: m["signInURL"]}
	s.Lines, err = parseLinesField(m["lines"]) // absent in rooms saved before it existed, and "" with none
	errs = append(errs, err)
	if v := m["staffNetworks"]; v != "" { // absent in rooms saved before it existed, and with none
		errs = append(errs, json.Unmarshal([]byte(v), &s.Bypass.StaffNetworks))
	}

	if err := errors.Join(errs...); err != nil {
		return room.Settings{}, fmt.Errorf("queue: decode room %s: %w", name, err)
	}
	return s, nil
}

// Rooms returns the names of all rooms, sorted.
func (e *Engine) Rooms(ctx context.Context) ([]string, error) {
	names, err := e.rdb.SMembers(ctx, roomsKey(e.ns)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("queue: list rooms: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// Deletion is what DeleteRoom removed.
type Deletion struct {
	// Existed reports that the room had settings.
	Existed bool
	// Keys is the number of the room's keys deleted, its settings included.
	Keys int64
}

// DeleteRoom removes room, its line, its passes and its counters in one
// script that declares every key (so it is safe on a Cluster, mid-reshard),
// then takes it out of the rooms set. Deleting an unknown room is not an
// error: Existed is false.
func (e *Engine) DeleteRoom(ctx context.Context, name string) (Deletion, error) {
	if !room.ValidName(name) {
		return Deletion{}, fmt.Errorf("queue: delete room: invalid name %q", name)
	}
	res, err := e.run(ctx, e.s.deleteRoom, name).Int64Slice()
	if err != nil {
		return Deletion{}, fmt.Errorf("queue: delete room %s: %w", name, err)
	}
	if len(res) != 2 {
		return Deletion{}, fmt.Errorf("queue: delete room %s: unexpected reply %v", name, res)
	}
	if err := e.rdb.SRem(ctx, roomsKey(e.ns), name).Err(); err != nil {
		return Deletion{}, fmt.Errorf("queue: unregister room %s: %w", name, err)
	}
	if err := e.markAdaptive(ctx, name, false); err != nil {
		return Deletion{}, err
	}
	return Deletion{Existed: res[0] == 1, Keys: res[1]}, nil
}

// Stats are a room's live counters. Every ticket ever issued is exactly one
// of pre-queued, waiting, passed over while away (Away, or Returning once
// back), admitted or left, and every visitor who left did so for one
// reason: Issued == Prequeued + Waiting + Away + Returning + Admitted + Left
// (but for the seconds of a draw), Left == Leaves + Abandoned.
// Every pass admitted is held, consumed (an order), forfeited (given up
// with a leave) or expired: Admitted + Bypassed == Active + Consumed +
// Forfeited + Expired, while no pass is redeemed into a session (see
// Sessions).
type Stats struct {
	Issued  int64 `json:"issued"`
	Head    int64 `json:"head"`
	Waiting int64 `json:"waiting"`
	Active  int64 `json:"active"`
	// Admitted counts passes issued to the line; Bypassed those let in
	// outside it (staff networks, test links), which the rate never
	// counts.
	Admitted int64 `json:"admitted"`
	Bypassed int64 `json:"bypassed"`
	// Left is Leaves + Abandoned: tickets that left the line.
	Left int64 `json:"left"`
	Departures
	Consumed  int64   `json:"consumed"`
	Forfeited int64   `json:"forfeited"`
	RateEWMA  float64 `json:"admitRateEWMA"`
	Tick      int64   `json:"tick"`
	SoldOut   bool    `json:"soldOut"`
	// Prequeued counts the pre-queue until the draw freezes it.
	Prequeued int64 `json:"prequeued"`

	// ABSENCE: Away are passed over at their turn and not back
	// yet; Returning came back and are admitted first at the next tick.
	// PassedOver and Returned count those events since the room was made.
	Away       int64 `json:"away"`
	Returning  int64 `json:"returning"`
	PassedOver int64 `json:"passedOver"`
	Returned   int64 `json:"returned"`

	// GATE: Sessions are the live sessions that redeemed passes
	// opened for an outside shop (each holds a slot: they are in Active).
	// A redeemed pass counts in SessionsOpened, not in Consumed, so
	// Admitted + Bypassed == (Active − Sessions) + Consumed + Forfeited +
	// Expired + SessionsOpened, and SessionsOpened == Sessions +
	// SessionsEnded + SessionsIdle (ended by the shop; past
	// sessionSeconds).
	Sessions       int64 `json:"sessions"`
	SessionsOpened int64 `json:"sessionsOpened"`
	SessionsEnded  int64 `json:"sessionsEnded"`
	SessionsIdle   int64 `json:"sessionsIdle"`

	// Credit is the admission credit the last tick carried over, and
	// CreditAt (Redis's clock) when that tick ran; zero before the first.
	// While the line stays backlogged and no tick runs later than the
	// credit cap allows, Admitted + Credit grows by exactly the rate times
	// the time between two ticks, on any number of instances.
	Credit   float64   `json:"-"`
	CreditAt time.Time `json:"-"`
}

// Unaccounted returns how many issued tickets are in no state and no
// departure: Issued − (Prequeued + Waiting + Away + Returning + Admitted + Leaves +
// Abandoned). It is 0 whenever the books balance.
func (s Stats) Unaccounted() int64 {
	return s.Issued - (s.Prequeued + s.Waiting + s.Away + s.Returning + s.Admitted + s.Leaves + s.Abandoned)
}

// Stats returns room's live counters in one round trip.
func (e *Engine) Stats(ctx context.Context, name string) (Stats, error) {
	res, err := e.run(ctx, e.s.stats, name).Slice()
	if err != nil {
		return Stats{}, fmt.Errorf("queue: stats %s: %w", name, err)
	}
	if len(res) != 25 {
		return Stats{}, fmt.Errorf("queue: stats %s: unexpected reply %v", name, res)
	}
	ewma, _ := strconv.ParseFloat(asString(res[10]), 64)
	credit, _ := strconv.ParseFloat(asString(res[22]), 64)
	var creditAt time.Time
	if us, err := strconv.ParseInt(asString(res[23]), 10, 64); err == nil {
		creditAt = time.UnixMicro(us)
	}
	d := Departures{Leaves: asInt(res[5]), Abandoned: asInt(res[6]), Expired: asInt(res[7])}
	return Stats{
		Issued: asInt(res[0]), Head: asInt(res[1]), Waiting: asInt(res[2]), Active: asInt(res[3]),
		Admitted: asInt(res[4]), Left: d.Leaves + d.Abandoned, Departures: d, Consumed: asInt(res[8]), Forfeited: asInt(res[9]),
		RateEWMA: ewma, Tick: asInt(res[11]), SoldOut: asInt(res[12]) == 1, Prequeued: asInt(res[13]),
		Away: asInt(res[14]), Returning: asInt(res[15]), PassedOver: asInt(res[16]), Returned: asInt(res[17]),
		Sessions: asInt(res[18]), SessionsOpened: asInt(res[19]), SessionsEnded: asInt(res[20]), SessionsIdle: asInt(res[21]),
		Credit: credit, CreditAt: creditAt, Bypassed: asInt(res[24]),
	}, nil
}
