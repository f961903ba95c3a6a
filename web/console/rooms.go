package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // the form's time zones, on hosts without a zoneinfo
	"waitingroom/server/admin"

	"waitingroom/server/egress"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/views"
)

// The console's rooms: the list with live figures, the form of a new room
// and of a room's settings, the actions that run a sale, and deletion.

// RecordedRooms is the database's record of the rooms, listed so that the
// console shows a room Redis lost before it is restored (store.DB).
type RecordedRooms interface {
	Rooms(ctx context.Context) ([]store.RoomRecord, error)
}

// consoleZones are the time zones the schedule's times may be typed in;
// the first is the default.
var consoleZones = []string{
	"Asia/Seoul", "UTC", "Asia/Tokyo", "Asia/Shanghai", "Asia/Hong_Kong", "Asia/Taipei", "Asia/Singapore",
	"Asia/Bangkok", "Asia/Kolkata", "Europe/London", "Europe/Paris", "Europe/Berlin",
	"America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "Australia/Sydney",
}

func roomsText(r *http.Request) views.RoomsText { return views.RoomsTextFor(Lang(r)) }

// consoleRoomList serves GET /admin/rooms: every room Redis holds or the
// database records, with its live figures.
func (s *Console) consoleRoomList(w http.ResponseWriter, r *http.Request, sess Session) {
	t := roomsText(r)
	var l views.RoomList
	titles := map[string]string{}
	// Each read has its own budget: a slow Redis leaves the database's
	// rooms listed, and one slow room leaves the others' figures.
	read := func() (context.Context, context.CancelFunc) { return context.WithTimeout(r.Context(), roomReadTimeout) }
	ctx, cancel := read()
	names, err := s.rooms.Rooms(ctx)
	cancel()
	if err != nil {
		s.log.Warn("console: list rooms", "err", err)
		l.Partial = true
	}
	if s.recorded != nil {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		recs, err := s.recorded.Rooms(ctx)
		cancel()
		if err != nil {
			s.log.Warn("console: list recorded rooms", "err", err)
			l.Partial = true
		}
		for _, rec := range recs {
			names = append(names, rec.Name)
			titles[rec.Name] = rec.Settings.Title
		}
	}
	slices.Sort(names)
	now := s.clk.Now()
	for _, name := range slices.Compact(names) {
		row := views.RoomRow{Name: name, Title: titles[name]}
		ctx, cancel := read()
		set, err := s.rooms.Room(ctx, name)
		var st queue.Stats
		if err == nil {
			st, err = s.rooms.Stats(ctx, name)
		}
		cancel()
		switch {
		case errors.Is(err, room.ErrNotFound):
		case err != nil:
			// Listed all the same: its figures show as unread.
			s.log.Warn("console: room figures", "room", name, "err", err)
			row.Unread = true
		default:
			row.Live, row.Title, row.Mode, row.Phase = true, set.Title, set.Mode, room.PhaseAt(set, now)
			row.Waiting, row.Prequeued, row.Active = st.Waiting, st.Prequeued, st.Active
			row.AdmitRate, row.SetRate, row.Paused, row.SoldOut = st.RateEWMA, set.Rate, set.Paused, st.SoldOut
		}
		l.Rows = append(l.Rows, row)
	}
	if d := r.URL.Query().Get("deleted"); room.ValidName(d) {
		l.Notice = views.Fill(t.Deleted, "room", d)
	}
	s.render(w, r, http.StatusOK, views.ConsoleRooms(s.consolePage(r, sess, t.RoomsTitle, "rooms"), l))
}

// roomReadTimeout bounds each of the rooms list's Redis reads: the list of
// names, and each room's settings and counters.
const roomReadTimeout = time.Second

// zoneOf returns the form's time zone named tz, or the default.
func zoneOf(tz string) (string, *time.Location) {
	if !slices.Contains(consoleZones, tz) {
		tz = consoleZones[0]
	}
	loc, err := time.LoadLocation(tz)
	if err != nil { // the embedded tzdata has every zone of the list
		return "UTC", time.UTC
	}
	return tz, loc
}

// RoomValues writes set as the form shows it, its times in zone tz.
func RoomValues(name string, set room.Settings, tz string) views.RoomValues {
	tz, loc := zoneOf(tz)
	secs, mode := set.Gate.Session()
	at := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		if t.Second() != 0 {
			// A time set to the second (from the API, or typed so) is
			// shown so, not up to 59 s earlier than it is.
			return t.In(loc).Format(DatetimeLocal + ":05")
		}
		return t.In(loc).Format(DatetimeLocal)
	}
	return views.RoomValues{
		Name: name, Title: set.Title, TZ: tz,
		PrequeueAt: at(set.PrequeueAt), OpensAt: at(set.OpensAt), ClosesAt: at(set.ClosesAt),
		ServeLineAfterClose: set.ServeLineAfterClose, Mode: set.Mode, Challenge: room.CanonicalChallenge(set.Challenge),
		Rate: fmtFloat(set.Rate), MaxActive: strconv.Itoa(set.MaxActive), TokenTTLSeconds: strconv.Itoa(set.TokenTTLSeconds),
		OrderRate: fmtFloat(set.OrderRate), OrderBurst: strconv.Itoa(set.OrderBurst), MaxPerBuyer: strconv.Itoa(set.MaxPerBuyer),
		ShopURL: set.ShopURL, AbandonAfterSeconds: strconv.Itoa(set.AbandonAfterSeconds), ReturnWithin: strconv.Itoa(set.ReturnWithinSeconds),
		TargetURL: set.Gate.TargetURL, SessionSeconds: strconv.Itoa(secs), SessionMode: mode, FailOpen: set.Gate.FailOpen,
		Protect: strings.Join(set.Gate.Protect, "\n"), RateShown: fmtFloat(set.Rate),
		Adaptive: set.Adaptive, AdaptiveShown: flagValue(set.Adaptive), MinRate: fmtFloat(set.Adapt.MinRate),
		MaxRate: fmtFloat(set.Adapt.MaxRate), TargetP95Ms: strconv.Itoa(set.TargetP95Ms), MaxErrRate: fmtFloat(set.MaxErrorRate),
		HealthURL: set.HealthURL, ReadySpreadMs: optionalInt(set.ReadySpreadMs),
		Access: set.Access.Access, Identity: set.Identity, IdentityJWKSURL: set.IdentityJWKSURL,
		IdentityKeys: set.IdentityKeys, SignInURL: set.SignInURL, StaffNetworks: strings.Join(set.StaffNetworks, "\n"),
		Lines: lineValues(set.Lines),
	}
}

// lineValues are lines as the form's rows show them.
func lineValues(lines []room.Line) []views.LineValues {
	var out []views.LineValues
	for _, l := range room.NormalizeLines(lines) {
		out = append(out, views.LineValues{Name: l.Name, Share: fmtFloat(l.Share), Access: l.Access})
	}
	return out
}

// parseLines reads the form's rows of lines into p, their values as typed
// into v, and the error of a row with a name but no share that parses
// into errs, in lang. An empty row (no name, no share) is no line; a form
// without the rows keeps the setting.
func parseLines(f url.Values, get func(string) string, p *room.Patch, v *views.RoomValues, errs map[string]string, lang string) {
	if !f.Has(views.LineField(0, "Name")) {
		return
	}
	lines := []room.Line{}
	for i := range room.MaxLines {
		lv := views.LineValues{Name: get(views.LineField(i, "Name")), Share: get(views.LineField(i, "Share")), Access: get(views.LineField(i, "Access"))}
		v.Lines = append(v.Lines, lv)
		if lv.Name == "" && lv.Share == "" {
			continue
		}
		share, err := strconv.ParseFloat(lv.Share, 64)
		if err != nil {
			errs[views.LineField(i, "Share")] = views.AccessFormTextFor(lang).ErrLineShare
			continue
		}
		lines = append(lines, room.Line{Name: lv.Name, Share: share, Access: lv.Access})
	}
	p.Lines = room.LinesPatch{Set: true, Lines: lines}
}

// optionalInt is n as a form shows it: "" for nil.
func optionalInt(n *int) string {
	if n == nil {
		return ""
	}
	return strconv.Itoa(*n)
}

// flagValue is a checkbox's state as a hidden field keeps it.
func flagValue(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// maxFieldLen bounds a room form's text fields as kept for the form (the
// body is bounded too): the settings' own limits are smaller.
const maxFieldLen = 4096

// adaptField reports adaptive admission's number fields: a form without
// them (a page from before they existed) keeps the settings.
func adaptField(name string) bool {
	switch name {
	case "minRate", "maxRate", "targetP95Ms", "maxErrorRate":
		return true
	}
	return false
}

// parseRoomForm reads a room form into a patch of every setting but
// Paused, the values as typed, and the errors of the fields that do not
// parse. Whether the values are valid settings is room.Validate's.
func parseRoomForm(f url.Values, t views.RoomsText) (room.Patch, views.RoomValues, map[string]string) {
	get := func(k string) string {
		v := strings.TrimSpace(f.Get(k))
		if len(v) > maxFieldLen {
			v = v[:maxFieldLen]
		}
		return v
	}
	errs := map[string]string{}
	v := views.RoomValues{
		Name: get("name"), Title: f.Get("title"), TZ: get("tz"),
		PrequeueAt: get("prequeueAt"), OpensAt: get("opensAt"), ClosesAt: get("closesAt"),
		ServeLineAfterClose: f.Get("serveLineAfterClose") == "1", Mode: get("mode"), Challenge: get("challenge"),
		Rate: get("rate"), MaxActive: get("maxActive"), TokenTTLSeconds: get("tokenTTLSeconds"),
		OrderRate: get("orderRate"), OrderBurst: get("orderBurst"), MaxPerBuyer: get("maxPerBuyer"),
		ShopURL: get("shopURL"), AbandonAfterSeconds: get("abandonAfterSeconds"), ReturnWithin: get("returnWithinSeconds"),
		TargetURL: get("targetURL"), SessionSeconds: get("sessionSeconds"), SessionMode: get("sessionMode"),
		FailOpen: f.Get("failOpen") == "1", Protect: get("protect"), RateShown: get("rateShown"),
		Adaptive: f.Get("adaptive") == "1", AdaptiveShown: get("adaptiveShown"), MinRate: get("minRate"),
		MaxRate: get("maxRate"), TargetP95Ms: get("targetP95Ms"), MaxErrRate: get("maxErrorRate"),
		HealthURL: get("healthURL"), ReadySpreadMs: get("readySpreadMs"),
		Access: get("access"), Identity: get("identity"), IdentityJWKSURL: get("identityJWKSURL"),
		IdentityKeys: strings.TrimSpace(f.Get("identityKeys")), SignInURL: get("signInURL"),
		StaffNetworks: get("staffNetworks"),
	}
	if len(v.Title) > maxFieldLen {
		v.Title = v.Title[:maxFieldLen]
	}
	if len(v.IdentityKeys) > room.MaxIdentityKeysLen+1 {
		v.IdentityKeys = v.IdentityKeys[:room.MaxIdentityKeysLen+1] // refused as too long, not cut to fit
	}
	var p room.Patch
	p.Title, p.Mode, p.ShopURL = &v.Title, &v.Mode, &v.ShopURL
	if v.Challenge != "" { // a form without the field keeps the setting (or, creating, the default)
		p.Challenge = &v.Challenge
	}
	p.ServeLineAfterClose = &v.ServeLineAfterClose
	// ADAPT: the box as shown is no change (a form without the hidden
	// field, an old page, sends it as ticked or not), so that a rate typed
	// in with the box left as it was turns adaptive off (room.Patch.Apply).
	if v.AdaptiveShown != flagValue(v.Adaptive) {
		p.AdaptPatch.Adaptive = &v.Adaptive
	}
	if f.Has("healthURL") { // a form without the field keeps the setting; empty clears it
		p.AdaptPatch.HealthURL = &v.HealthURL
	}
	if f.Has("staffNetworks") { // a form without the field keeps the setting
		var staff []string // none is nil, as the JSON API's empty list
		for _, line := range strings.Split(v.StaffNetworks, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				staff = append(staff, line)
			}
		}
		p.BypassPatch.StaffNetworks = &staff
	}
	// Who may join: a form without the fields keeps the settings.
	for _, af := range []struct {
		field string
		value *string
		dst   **string
	}{{"access", &v.Access, &p.AccessPatch.Access}, {"identity", &v.Identity, &p.AccessPatch.Identity},
		{"identityJWKSURL", &v.IdentityJWKSURL, &p.AccessPatch.IdentityJWKSURL},
		{"identityKeys", &v.IdentityKeys, &p.AccessPatch.IdentityKeys}, {"signInURL", &v.SignInURL, &p.AccessPatch.SignInURL}} {
		if f.Has(af.field) {
			*af.dst = af.value
		}
	}
	parseLines(f, get, &p, &v, errs, t.Lang)
	// A form without the field keeps the setting; empty follows the
	// server's default.
	if f.Has("readySpreadMs") {
		p.ReadySpreadMs.Set = true
		if v.ReadySpreadMs != "" {
			if n, err := strconv.Atoi(v.ReadySpreadMs); err != nil {
				errs["readySpreadMs"] = t.ErrNotWhole
			} else {
				p.ReadySpreadMs.Ms = &n
			}
		}
	}
	var protect []string // none is nil, as the JSON API's empty list
	for _, line := range strings.Split(v.Protect, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			protect = append(protect, line)
		}
	}
	p.GatePatch = room.GatePatch{TargetURL: &v.TargetURL, SessionMode: &v.SessionMode, FailOpen: &v.FailOpen, Protect: &protect}
	if !slices.Contains(consoleZones, v.TZ) {
		errs["tz"] = t.ErrBadZone
	}
	_, loc := zoneOf(v.TZ)
	for _, tf := range []struct {
		field, value string
		dst          *room.OptionalTime
	}{{"prequeueAt", v.PrequeueAt, &p.PrequeueAt}, {"opensAt", v.OpensAt, &p.OpensAt}, {"closesAt", v.ClosesAt, &p.ClosesAt}} {
		tf.dst.Set = true
		if tf.value == "" {
			continue
		}
		at, err := time.ParseInLocation(DatetimeLocal, tf.value, loc)
		if err != nil {
			at, err = time.ParseInLocation(datetimeLocalSeconds, tf.value, loc)
		}
		if err != nil {
			errs[tf.field] = t.ErrNotTime
			continue
		}
		tf.dst.Time = &at
	}
	for _, ff := range []struct {
		field, value string
		dst          **float64
	}{{"rate", v.Rate, &p.Rate}, {"orderRate", v.OrderRate, &p.OrderRate},
		{"minRate", v.MinRate, &p.AdaptPatch.MinRate}, {"maxRate", v.MaxRate, &p.AdaptPatch.MaxRate}, {"maxErrorRate", v.MaxErrRate, &p.AdaptPatch.MaxErrorRate}} {
		if ff.value == "" && adaptField(ff.field) {
			continue // a form without the field keeps the setting
		}
		x, err := strconv.ParseFloat(ff.value, 64)
		if err != nil {
			errs[ff.field] = t.ErrNotNumber
			continue
		}
		*ff.dst = &x
	}
	for _, nf := range []struct {
		field, value string
		dst          **int
	}{
		{"maxActive", v.MaxActive, &p.MaxActive}, {"tokenTTLSeconds", v.TokenTTLSeconds, &p.TokenTTLSeconds},
		{"orderBurst", v.OrderBurst, &p.OrderBurst}, {"maxPerBuyer", v.MaxPerBuyer, &p.MaxPerBuyer},
		{"abandonAfterSeconds", v.AbandonAfterSeconds, &p.AbandonAfterSeconds}, {"returnWithinSeconds", v.ReturnWithin, &p.ReturnWithinSeconds},
		{"sessionSeconds", v.SessionSeconds, &p.GatePatch.SessionSeconds}, {"targetP95Ms", v.TargetP95Ms, &p.AdaptPatch.TargetP95Ms},
	} {
		if nf.value == "" && nf.field == "sessionSeconds" {
			nf.value = "0" // the default length
		}
		if nf.value == "" && adaptField(nf.field) {
			continue
		}
		n, err := strconv.Atoi(nf.value)
		if err != nil {
			errs[nf.field] = t.ErrNotWhole
			continue
		}
		*nf.dst = &n
	}
	return p, v, errs
}

// settingsFieldError names the form field that room.Settings.Validate's
// error is about (it names the first invalid field), with its message.
func settingsFieldError(err error, t views.RoomsText) (field, msg string) {
	var fe *room.FieldError
	if !errors.As(err, &fe) {
		return "", err.Error()
	}
	if refused := (*egress.RefusedError)(nil); fe.Field == "healthURL" && errors.As(fe.Err, &refused) {
		return fe.Field, strings.ReplaceAll(t.ErrHealthHost, "{host}", refused.Host)
	}
	if errors.Is(fe, room.ErrLineInUse) {
		return fe.Field, views.AccessFormTextFor(t.Lang).ErrLineInUse
	}
	if shares := (*room.SharesError)(nil); errors.As(fe.Err, &shares) {
		return fe.Field, views.Fill(views.AccessFormTextFor(t.Lang).ErrShares, "sum", room.FormatShare(shares.Sum))
	}
	for _, words := range []map[string]string{t.ErrScheduleOrder, t.ErrSettings, views.GateFormTextFor(t.Lang).Err, views.AccessFormTextFor(t.Lang).Err} {
		if msg, ok := words[fe.Field]; ok {
			return fe.Field, msg
		}
	}
	return "", fe.Error()
}

// roomForm is the settings form of room name: its saved settings, live
// state and the notice of the last change.
func (s *Console) roomForm(ctx context.Context, sess Session, name, tz string) (views.RoomForm, room.Settings, error) {
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		return views.RoomForm{}, room.Settings{}, err
	}
	st, err := s.rooms.Stats(ctx, name)
	if err != nil {
		return views.RoomForm{}, room.Settings{}, err
	}
	set.Challenge = s.effectiveChallenge(set.Challenge)
	return views.RoomForm{Room: name, V: RoomValues(name, set, tz), Zones: consoleZones, CSRF: sess.CSRF,
		Paused: set.Paused, SoldOut: st.SoldOut, Phase: room.PhaseAt(set, s.clk.Now()), Mode: set.Mode, Errors: map[string]string{},
		APIKeySet: set.Gate.APIKeyHash != ""}, set, nil
}

// keepShownTimes keeps the saved schedule times that the form showed and
// the operator left as they were: the form shows minutes (and seconds
// when there are any), and a time of the drain action (to the
// millisecond) must not move when the title is edited.
func keepShownTimes(p *room.Patch, shown, typed views.RoomValues, cur room.Settings) {
	for _, f := range []struct {
		shown, typed string
		dst          *room.OptionalTime
		cur          *time.Time
	}{
		{shown.PrequeueAt, typed.PrequeueAt, &p.PrequeueAt, cur.PrequeueAt},
		{shown.OpensAt, typed.OpensAt, &p.OpensAt, cur.OpensAt},
		{shown.ClosesAt, typed.ClosesAt, &p.ClosesAt, cur.ClosesAt},
	} {
		if f.cur != nil && f.shown == f.typed {
			*f.dst = room.OptionalTime{Set: true, Time: f.cur}
		}
	}
}

// consoleRoomName returns the {room} of a console path, or answers 404.
func (s *Console) consoleRoomName(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.PathValue("room")
	if !room.ValidName(name) {
		s.Error(w, r, http.StatusNotFound, roomsText(r).ErrNoRoom)
		return "", false
	}
	return name, true
}

// consoleRoom returns the room of a console page's path and its settings,
// or answers the error page and reports false.
func (s *Console) consoleRoom(w http.ResponseWriter, r *http.Request) (string, room.Settings, bool) {
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return "", room.Settings{}, false
	}
	ctx := r.Context()
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return "", room.Settings{}, false
	}
	return name, set, true
}

// consoleFail answers a console error page for err of a room or product
// write or read.
func (s *Console) consoleFail(w http.ResponseWriter, r *http.Request, err error) {
	s.fail.ConsolePage(w, r, err)
}

func (s *Console) renderRoomForm(w http.ResponseWriter, r *http.Request, sess Session, status int, f views.RoomForm) {
	t := roomsText(r)
	f.ReadySpreadDefault = strconv.Itoa(s.spreadDefault)
	f.ReadySpreadMax = strconv.Itoa(s.spreadMax)
	title := t.NewRoomTitle
	if !f.New {
		title = views.Fill(t.SettingsTitle, "room", f.Room)
	}
	s.render(w, r, status, views.ConsoleRoomForm(s.consolePage(r, sess, title, "rooms"), f))
}

// consoleNewRoom serves GET /admin/rooms/new: the form with a new room's
// defaults.
func (s *Console) consoleNewRoom(w http.ResponseWriter, r *http.Request, sess Session) {
	f := views.RoomForm{New: true, V: RoomValues("", s.roomWrites.Defaults(""), r.URL.Query().Get("tz")), Zones: consoleZones, CSRF: sess.CSRF}
	s.renderRoomForm(w, r, sess, http.StatusOK, f)
}

// refuseInvalidSettings shows the room form again with the field that
// err (from saveRoom) names, and reports whether err was such a refusal.
func (s *Console) refuseInvalidSettings(w http.ResponseWriter, r *http.Request, sess Session, f views.RoomForm, err error, t views.RoomsText) bool {
	var invalid *admin.InvalidError
	if !errors.As(err, &invalid) {
		return false
	}
	field, msg := settingsFieldError(invalid.Err, t)
	f.Errors[field] = views.Fill(msg, "max", strconv.Itoa(s.spreadMax))
	f.Error = t.FixErrors
	s.renderRoomForm(w, r, sess, http.StatusUnprocessableEntity, f)
	return true
}

// consoleCreateRoom serves POST /admin/rooms/new.
func (s *Console) consoleCreateRoom(w http.ResponseWriter, r *http.Request, sess Session) {
	ctx := r.Context()
	t := roomsText(r)
	p, v, errs := parseRoomForm(r.PostForm, t)
	f := views.RoomForm{New: true, V: v, Zones: consoleZones, CSRF: sess.CSRF, Errors: errs}
	switch {
	case !room.ValidName(v.Name):
		errs["name"] = t.ErrBadName
	case v.Name == "new":
		// /admin/rooms/new is this form: the room's dashboard would be
		// out of reach.
		errs["name"] = t.ErrReservedName
	}
	gateFieldErrors(p, room.Defaults(v.Name), errs, r)
	if len(errs) > 0 {
		f.Error = t.FixErrors
		s.renderRoomForm(w, r, sess, http.StatusUnprocessableEntity, f)
		return
	}
	_, err := s.roomWrites.Save(ctx, sess.Operator, v.Name, admin.Write{Patch: p, Exist: admin.MustBeNew})
	switch {
	case s.refuseInvalidSettings(w, r, sess, f, err, t):
		return
	case errors.Is(err, admin.ErrExists):
		errs["name"] = t.ErrRoomExists
		f.Error = t.FixErrors
		s.renderRoomForm(w, r, sess, http.StatusConflict, f)
		return
	case err != nil:
		s.consoleFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/rooms/"+v.Name+"/settings?saved=created&tz="+url.QueryEscape(v.TZ), http.StatusSeeOther)
}

// consoleRoomSettings serves GET /admin/rooms/{room}/settings.
func (s *Console) consoleRoomSettings(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := roomsText(r)
	q := r.URL.Query()
	f, _, err := s.roomForm(ctx, sess, name, q.Get("tz"))
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	switch q.Get("saved") {
	case "1":
		f.Notice = t.Saved
	case "created":
		f.Notice = t.Created
		// A deleted room's products stay under its name: say so.
		if ps, err := s.leftoverProducts(ctx, name); err != nil {
			s.log.Warn("room settings: listing its products failed", "room", name, "err", err)
		} else {
			f.Leftovers = leftoverRows(ps)
		}
	}
	if msg, ok := t.ActionDone[q.Get("done")]; ok {
		f.Notice = msg
	}
	s.renderRoomForm(w, r, sess, http.StatusOK, f)
}

// consoleSaveRoom serves POST /admin/rooms/{room}/settings.
func (s *Console) consoleSaveRoom(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := roomsText(r)
	p, v, errs := parseRoomForm(r.PostForm, t)
	// What the form does not show stays: the live state, for the actions.
	f, cur, err := s.roomForm(ctx, sess, name, v.TZ)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	if v.TZ == f.V.TZ {
		keepShownTimes(&p, f.V, v, cur)
	}
	// ADAPT: in an adaptive room the controller moves the rate; a rate
	// left as the form showed it is no manual change and keeps the
	// controller's. A rate typed in is the operator's, and turns adaptive
	// off (room.Patch.Apply).
	if cur.Adaptive && v.Rate == v.RateShown {
		p.Rate = nil
	}
	gateFieldErrors(p, cur, errs, r)
	v.Name, f.V, f.Errors = name, v, errs
	if len(errs) > 0 {
		f.Error = t.FixErrors
		s.renderRoomForm(w, r, sess, http.StatusUnprocessableEntity, f)
		return
	}
	_, err = s.roomWrites.Save(ctx, sess.Operator, name, admin.Write{Patch: p, Exist: admin.MustExist})
	switch {
	case s.refuseInvalidSettings(w, r, sess, f, err, t):
		return
	case err != nil:
		s.consoleFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/rooms/"+name+"/settings?saved=1&tz="+url.QueryEscape(v.TZ), http.StatusSeeOther)
}

// errDrainBeforeOpening refuses to drain a sale that has not opened: it
// has no line to serve.
var errDrainBeforeOpening = errors.New("drain before the opening")

// actionWrite is the write of a console action on a room whose settings
// are cur, at now.
//
//   - pause and resume set Paused.
//   - drain stops new joins now and keeps serving the line: closesAt
//     becomes now (unless the room closed earlier) with
//     serveLineAfterClose. The schedule wants opensAt before closesAt, so
//     a sale that has not opened cannot be drained (it has no line): it
//     is refused with errDrainBeforeOpening, and Close is the way.
//   - close sets mode closed: nobody joins, nobody is admitted.
//   - reopen undoes what stopped a sale, but a pause: it clears the
//     sold-out flag (after a restock), puts a closed room back in fifo,
//     and clears a closing time that has passed (a drained room takes
//     joins again).
func actionWrite(action string, cur room.Settings, now time.Time) (admin.Write, error) {
	yes, no := true, false
	w := admin.Write{Exist: admin.MustExist, Action: "room." + action}
	switch action {
	case "pause":
		w.Patch.Paused = &yes
	case "resume":
		w.Patch.Paused = &no
	case "drain":
		if cur.OpensAt != nil && now.Before(*cur.OpensAt) {
			return admin.Write{}, errDrainBeforeOpening
		}
		at := now.UTC().Truncate(time.Millisecond)
		if cur.ClosesAt != nil && cur.ClosesAt.Before(at) {
			at = *cur.ClosesAt
		}
		if cur.OpensAt != nil && !cur.OpensAt.Before(at) {
			at = cur.OpensAt.Add(time.Millisecond)
		}
		w.Patch.ClosesAt = room.OptionalTime{Set: true, Time: &at}
		w.Patch.ServeLineAfterClose = &yes
	case "close":
		mode := room.ModeClosed
		w.Patch.Mode = &mode
	case "reopen":
		w.SoldOut = &no
		if cur.Mode == room.ModeClosed {
			mode := room.ModeFIFO
			w.Patch.Mode = &mode
		}
		if cur.ClosesAt != nil && !now.Before(*cur.ClosesAt) {
			w.Patch.ClosesAt = room.OptionalTime{Set: true}
		}
	default:
		return admin.Write{}, errors.ErrUnsupported
	}
	return w, nil
}

// consoleRoomAction serves POST /admin/rooms/{room}/action.
func (s *Console) consoleRoomAction(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := roomsText(r)
	action := r.PostForm.Get("action")
	cur, err := s.rooms.Room(ctx, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	// Drain and close turn buyers away: one click is not enough, the
	// form's confirmation box must be ticked.
	if views.StopsJoins(action) && r.PostForm.Get("confirm") != "1" {
		f, _, err := s.roomForm(ctx, sess, name, "")
		if err != nil {
			s.consoleFail(w, r, err)
			return
		}
		f.Error = t.ErrConfirmStop
		s.renderRoomForm(w, r, sess, http.StatusUnprocessableEntity, f)
		return
	}
	wr, err := actionWrite(action, cur, s.clk.Now())
	switch {
	case errors.Is(err, errDrainBeforeOpening):
		f, _, err := s.roomForm(ctx, sess, name, "")
		if err != nil {
			s.consoleFail(w, r, err)
			return
		}
		f.Error = t.ErrDrainBefore
		s.renderRoomForm(w, r, sess, http.StatusConflict, f)
		return
	case err != nil:
		s.Error(w, r, http.StatusBadRequest, t.ErrBadAction)
		return
	}
	if _, err := s.roomWrites.Save(ctx, sess.Operator, name, wr); err != nil {
		s.consoleFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/rooms/"+name+"/settings?done="+action, http.StatusSeeOther)
}

// consoleDeleteRoom serves POST /admin/rooms/{room}/delete: the form's
// field confirm must be the room's name.
func (s *Console) consoleDeleteRoom(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := roomsText(r)
	if r.PostForm.Get("confirm") != name {
		f, _, err := s.roomForm(ctx, sess, name, "")
		if err != nil {
			s.consoleFail(w, r, err)
			return
		}
		f.Errors["confirm"] = t.ErrConfirm
		f.Error = t.ErrConfirm
		s.renderRoomForm(w, r, sess, http.StatusUnprocessableEntity, f)
		return
	}
	if _, err := s.roomWrites.Delete(ctx, sess.Operator, name); err != nil {
		s.consoleFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/rooms?deleted="+name, http.StatusSeeOther)
}
