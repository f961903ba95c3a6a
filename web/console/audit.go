package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"waitingroom/server/audit"
	"waitingroom/server/room"
	"waitingroom/views"
)

// AuditPageSize is how many entries one page of the audit log shows.
const AuditPageSize = 50

// AuditShort is how many characters of a value the audit log shows before
// cutting it (the whole value is a click away).
const AuditShort = 80

// auditPage shows the audit log, newest first, a page at a time: of one
// room (?room=) or all, older than an entry (?before=).
func (s *Console) auditPage(w http.ResponseWriter, r *http.Request, sess Session) {
	t := ordersText(r)
	if s.auditLog == nil {
		s.Error(w, r, http.StatusServiceUnavailable, t.ErrNoAudit)
		return
	}
	ctx := r.Context()
	page := s.consolePage(r, sess, t.AuditTitle, "audit")
	q := r.URL.Query()
	loc, zone, zoneOK := consoleZone(r)
	v := views.AuditView{TZ: zone, Zone: zoneLabel(zone, loc)}
	if co := s.orderAdmin; co != nil {
		rooms, err := s.consoleRooms(ctx, co)
		if err != nil {
			s.log.Warn("console: audit rooms", "err", err)
		}
		v.Rooms = rooms
	}
	name := q.Get("room")
	var before int64
	switch {
	case !zoneOK:
		v.Error = t.ErrBadZone
	case name != "" && !room.ValidName(name):
		v.Error = t.ErrBadRoom
	case q.Get("before") != "":
		id, err := strconv.ParseInt(q.Get("before"), 10, 64)
		if err != nil || id <= 0 {
			v.Error = t.ErrBadPage
		}
		before = id
	}
	if v.Error != "" {
		s.render(w, r, http.StatusBadRequest, views.ConsoleAudit(page, v))
		return
	}
	v.Room, v.Rooms = name, roomChoices(v.Rooms, name)
	entries, err := s.auditLog.List(ctx, audit.Filter{Room: name, Before: before, Limit: AuditPageSize + 1})
	if err != nil {
		s.log.Error("console: audit log", "err", err)
		s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
		return
	}
	link := func(before int64) string {
		u := url.Values{}
		if name != "" {
			u.Set("room", name)
		}
		if zone != defaultZone {
			u.Set("tz", zone)
		}
		if before > 0 {
			u.Set("before", strconv.FormatInt(before, 10))
		}
		return "/admin/audit" + pathQuery(u)
	}
	if len(entries) > AuditPageSize {
		entries = entries[:AuditPageSize]
		v.OlderURL = link(entries[len(entries)-1].ID)
	}
	if before > 0 {
		v.NewestURL = link(0)
	}
	lang := Lang(r)
	for _, e := range entries {
		v.Lines = append(v.Lines, views.AuditLine{Actor: e.Actor, Room: e.Room, Action: e.Action, Target: e.Target,
			At: views.ConsoleTime(e.At, loc, lang), AtISO: e.At.UTC().Format(time.RFC3339), Changes: auditChanges(e.Old, e.New, lang)})
	}
	s.render(w, r, http.StatusOK, views.ConsoleAudit(page, v))
}

// auditChanges is what an entry changed: field by field when its values
// are JSON objects (room settings, a product), else the whole value. A
// product's price, stored in the currency's minor unit, is written in
// its currency as people of lang read it ("$19.99", not 1999).
func auditChanges(old, new, lang string) []views.AuditChange {
	if old == "" && new == "" {
		return nil
	}
	if objectOrEmpty(old) && objectOrEmpty(new) {
		oldCur, newCur := currencyOf(old), currencyOf(new)
		if oldCur == "" {
			oldCur = newCur
		}
		if newCur == "" {
			newCur = oldCur
		}
		var changes []views.AuditChange
		for _, c := range audit.Changes(rawOrNil(old), rawOrNil(new)) {
			o, n := readableJSON(c.Old), readableJSON(c.New)
			if c.Field == "price" && (oldCur != "" || newCur != "") {
				o, n = auditPrice(c.Old, oldCur, lang, o), auditPrice(c.New, newCur, lang, n)
			}
			changes = append(changes, views.AuditChange{Field: c.Field, Old: auditValue(o), New: auditValue(n)})
		}
		if len(changes) > 0 {
			return changes
		}
	}
	return []views.AuditChange{{Old: auditValue(old), New: auditValue(new)}}
}

// currencyOf is the "currency" of the JSON object v: a product's; "" when
// it has none.
func currencyOf(v string) string {
	var x struct {
		Currency string `json:"currency"`
	}
	if v == "" || json.Unmarshal([]byte(v), &x) != nil || len(x.Currency) != 3 {
		return ""
	}
	return x.Currency
}

// auditPrice writes the JSON price v (minor units) in currency code, or
// shown when v is not a whole number.
func auditPrice(v, code, lang, shown string) string {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || code == "" {
		return shown
	}
	return views.FormatPrice(n, code, lang)
}

// readableJSON writes a field's JSON value as people read it: a string
// without its quotes or escapes, anything else as JSON without HTML
// escapes (the page escapes it).
func readableJSON(v string) string {
	var x any
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber() // 12345678901234567, not 1.2345678901234568e+16
	if v == "" || dec.Decode(&x) != nil {
		return v
	}
	if s, ok := x.(string); ok {
		return s
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(x) != nil {
		return v
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// objectOrEmpty reports whether s is "" or a JSON object.
func objectOrEmpty(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}

// rawOrNil is s as a JSON object to compare, nil for "".
func rawOrNil(s string) any {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return json.RawMessage(s)
}

// auditValue cuts v to AuditShort characters for the row; the whole
// value stays for its <details>.
func auditValue(v string) views.AuditValue {
	if utf8.RuneCountInString(v) <= AuditShort {
		return views.AuditValue{Short: v, Full: v}
	}
	n, i := 0, 0
	for i = range v {
		if n == AuditShort {
			break
		}
		n++
	}
	return views.AuditValue{Short: v[:i], Full: v, Cut: true}
}
