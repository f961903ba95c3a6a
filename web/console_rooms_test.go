package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/admin"
	"waitingroom/server/audit"
	"waitingroom/server/identity/identitytest"
	"waitingroom/server/operator"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/server/visitor"
	"waitingroom/views"
	"waitingroom/web/console"
)

// roomsConsole is a console wired as web/app wires it: PostgreSQL for the
// sessions, the audit log, the products and the rooms' record.
type roomsConsole struct {
	*harness
	db   *store.DB
	sale *saleEvents
	c    *http.Client
	csrf string
}

func newRoomsConsole(t *testing.T) *roomsConsole {
	t.Helper()
	return newRoomsConsoleWith(t, nil)
}

// newRoomsConsoleWith is newRoomsConsole with mut applied to its options
// last.
func newRoomsConsoleWith(t *testing.T, mut func(*Options)) *roomsConsole {
	t.Helper()
	return newRoomsConsoleOn(t, nil, mut)
}

// newRoomsConsoleOn is newRoomsConsoleWith on clock (newHarnessOn).
func newRoomsConsoleOn(t *testing.T, clock *clockwork.FakeClock, mut func(*Options)) *roomsConsole {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sale := &saleEvents{}
	db := storetest.Migrated(t, store.Postgres)
	ops, err := operator.New(db, testOperators)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, clock, func(o *Options) {
		o.Operators, o.Audit = ops, audit.New(db)
		withOrderService(o, order.NewService(order.NewStore(db.DB, 0), o.Queue.(order.Gate), 0, quiet))
		o.Records = roomsync.New(o.Queue.(*queue.Engine), db, quiet)
		o.RecordedRooms = db
		o.Sale = sale
		if mut != nil {
			mut(o)
		}
	})
	c, csrf := signIn(t, h.srv, testAdminToken)
	return &roomsConsole{harness: h, db: db, sale: sale, c: c, csrf: csrf}
}

// get fetches a console page in lang.
func (rc *roomsConsole) get(t *testing.T, path, lang string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", rc.srv.URL+path, nil)
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	resp, err := rc.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a console form with the session's CSRF token.
func (rc *roomsConsole) post(t *testing.T, path string, f url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	g := url.Values{"csrf": {rc.csrf}}
	for k, v := range f {
		g[k] = v
	}
	return postForm(t, rc.c, rc.srv.URL+path, g, hdr)
}

// roomFormOf is the console form of set, as a browser posts it.
func roomFormOf(name string, set room.Settings) url.Values {
	v := console.RoomValues(name, set, "Asia/Seoul")
	f := url.Values{
		"name": {v.Name}, "title": {v.Title}, "tz": {v.TZ}, "prequeueAt": {v.PrequeueAt}, "opensAt": {v.OpensAt}, "closesAt": {v.ClosesAt},
		"mode": {v.Mode}, "challenge": {v.Challenge}, "rate": {v.Rate}, "maxActive": {v.MaxActive}, "tokenTTLSeconds": {v.TokenTTLSeconds},
		"orderRate": {v.OrderRate}, "orderBurst": {v.OrderBurst}, "maxPerBuyer": {v.MaxPerBuyer}, "shopURL": {v.ShopURL},
		"abandonAfterSeconds": {v.AbandonAfterSeconds}, "returnWithinSeconds": {v.ReturnWithin},
		"targetURL": {v.TargetURL}, "sessionSeconds": {v.SessionSeconds}, "sessionMode": {v.SessionMode}, "protect": {v.Protect},
		"rateShown": {v.RateShown}, "adaptiveShown": {v.AdaptiveShown}, "minRate": {v.MinRate}, "maxRate": {v.MaxRate},
		"targetP95Ms": {v.TargetP95Ms}, "maxErrorRate": {v.MaxErrRate}, "healthURL": {v.HealthURL},
		"readySpreadMs": {v.ReadySpreadMs}, "access": {v.Access}, "identity": {v.Identity},
		"identityJWKSURL": {v.IdentityJWKSURL}, "identityKeys": {v.IdentityKeys}, "signInURL": {v.SignInURL},
	}
	if v.Adaptive {
		f.Set("adaptive", "1")
	}
	if v.ServeLineAfterClose {
		f.Set("serveLineAfterClose", "1")
	}
	if v.FailOpen {
		f.Set("failOpen", "1")
	}
	for i, l := range v.LineRows() {
		f.Set(views.LineField(i, "Name"), l.Name)
		f.Set(views.LineField(i, "Share"), l.Share)
		f.Set(views.LineField(i, "Access"), cmp.Or(l.Access, room.LineOpen))
	}
	return f
}

func with(f url.Values, kv ...string) url.Values {
	g := url.Values{}
	for k, v := range f {
		g[k] = append([]string(nil), v...)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		g.Set(kv[i], kv[i+1])
	}
	return g
}

// TestConsoleRoomForms: the new-room and settings forms save every setting
// (the schedule typed in a time zone), and refuse what does not parse or
// validate with the operator's values kept and a message at the field,
// saving nothing.
func TestConsoleRoomForms(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	name := servicetest.RoomName(t, rc.rdb)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	full := with(roomFormOf("", room.Defaults("")), "name", name, "title", "Winter drop ❄", "tz", "Asia/Seoul",
		"prequeueAt", "2030-12-01T09:30", "opensAt", "2030-12-01T10:00", "closesAt", "2030-12-01T12:00",
		"mode", "random", "rate", "12.5", "maxActive", "300", "tokenTTLSeconds", "240", "orderRate", "20", "orderBurst", "40",
		"maxPerBuyer", "2", "shopURL", "https://shop.example/drop", "abandonAfterSeconds", "90", "returnWithinSeconds", "600",
		"challenge", "always")
	at := func(s string) *time.Time {
		v, _ := time.ParseInLocation(console.DatetimeLocal, s, seoul)
		v = v.UTC()
		return &v
	}
	want := room.Settings{Title: "Winter drop ❄", Rate: 12.5, MaxActive: 300, TokenTTLSeconds: 240, OrderRate: 20, OrderBurst: 40,
		AbandonAfterSeconds: 90, Mode: "random", ReturnWithinSeconds: 600, ShopURL: "https://shop.example/drop", MaxPerBuyer: 2,
		Challenge: room.ChallengeAlways,
		Schedule:  room.Schedule{PrequeueAt: at("2030-12-01T09:30"), OpensAt: at("2030-12-01T10:00"), ClosesAt: at("2030-12-01T12:00"), ServeLineAfterClose: true},
		Gate:      room.DefaultGate(), Adapt: room.DefaultAdapt()}

	// Refused creations: nothing is created, the values stay, the field says why.
	for _, tc := range []struct {
		name, lang string
		form       url.Values
		status     int
		field, msg string
	}{
		{"bad name", "en", with(full, "name", "Bad_Name"), 422, "name", "Names are 1 to 64 of a-z"},
		{"bad name, Korean", "ko", with(full, "name", "Bad_Name"), 422, "name", "영문 소문자"},
		{"empty name", "en", with(full, "name", ""), 422, "name", "Names are 1 to 64 of a-z"},
		{"the console's own name", "en", with(full, "name", "new"), 422, "name", "pick another"},
		{"rate not a number", "en", with(full, "rate", "fast"), 422, "rate", "Enter a number."},
		{"rate too high", "en", with(full, "rate", "20000"), 422, "rate", "between 0.01 and 10000"},
		{"rate too high, Korean", "ko", with(full, "rate", "20000"), 422, "rate", "0.01에서 10000 사이"},
		{"ttl fractional", "en", with(full, "tokenTTLSeconds", "1.5"), 422, "tokenTTLSeconds", "whole number"},
		{"burst zero", "en", with(full, "orderBurst", "0"), 422, "orderBurst", "between 1 and 1000000"},
		{"time not a time", "en", with(full, "opensAt", "tomorrow"), 422, "opensAt", "date and time"},
		{"closes before opening", "en", with(full, "closesAt", "2030-12-01T09:00"), 422, "closesAt", "close after it opens"},
		{"pre-queue without opening", "en", with(full, "opensAt", "", "closesAt", ""), 422, "prequeueAt", "needs an opening time"},
		{"year out of range", "en", with(full, "prequeueAt", "", "opensAt", "1999-01-01T10:00", "closesAt", ""), 422, "schedule", "2000 and 9999"},
		{"unknown zone", "en", with(full, "tz", "Mars/Olympus"), 422, "tz", "time zone"},
		{"unknown mode", "en", with(full, "mode", "lottery"), 422, "mode", "Pick a mode"},
		{"unknown challenge", "ko", with(full, "challenge", "sometimes"), 422, "challenge", "봇 방지 설정을 고르세요"},
		{"shop URL", "en", with(full, "shopURL", "javascript:alert(1)"), 422, "shopURL", "http(s) address"},
		{"return before away", "en", with(full, "abandonAfterSeconds", "900", "returnWithinSeconds", "600"), 422, "returnWithinSeconds", "at least the away time"},
		{"title with bidi override", "en", with(full, "title", "abc\u202egpj"), 422, "title", "plain text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rc.post(t, "/admin/rooms/new", tc.form, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %.400s", resp.StatusCode, tc.status, body)
			}
			if !strings.Contains(body, `id="err-`+tc.field+`"`) || !strings.Contains(body, tc.msg) {
				t.Fatalf("no message %q at field %s: %s", tc.msg, tc.field, body)
			}
			typed := tc.form.Get(tc.field)
			if tc.field == "schedule" {
				typed = tc.form.Get("opensAt")
			}
			if !strings.Contains(body, `value="`+html.EscapeString(typed)+`"`) && tc.field != "tz" && tc.field != "mode" && tc.field != "challenge" || tc.field != "title" && !strings.Contains(body, `value="Winter drop ❄"`) {
				t.Fatalf("the typed values are not kept: %s", body)
			}
			if _, err := rc.eng.Room(ctx, tc.form.Get("name")); !errors.Is(err, room.ErrNotFound) && room.ValidName(tc.form.Get("name")) {
				t.Fatalf("a refused form created the room: %v", err)
			}
		})
	}

	resp, body := rc.post(t, "/admin/rooms/new", full, nil)
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/admin/rooms/"+name+"/settings?saved=created") {
		t.Fatalf("create: %d %s %.300s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if got, err := rc.eng.Room(ctx, name); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("created %+v %v\nwant    %+v", got, err, want)
	}
	if recs, _ := rc.db.Rooms(ctx); !hasRecord(recs, name) {
		t.Fatal("the new room is not recorded in the database")
	}
	if got := rc.sale.take(); !slices.Contains(got, name+" created") || slices.Contains(got, name+" opened") {
		t.Fatalf("a room that opens in 2030 was told %v, want created", got)
	}
	if resp, body := rc.post(t, "/admin/rooms/new", full, nil); resp.StatusCode != 409 || !strings.Contains(body, "already exists") {
		t.Fatalf("create twice: %d %.300s", resp.StatusCode, body)
	}

	// The settings page shows what was saved, in the zone asked for.
	status, page := rc.get(t, "/admin/rooms/"+name+"/settings?saved=created&tz=Asia/Seoul", "en")
	for _, s := range []string{"Room created.", `value="2030-12-01T10:00"`, `value="12.5"`, `<option value="random" selected`, `<option value="Asia/Seoul" selected`} {
		if status != 200 || !strings.Contains(page, s) {
			t.Fatalf("settings page lacks %q: %d %s", s, status, page)
		}
	}
	if _, page := rc.get(t, "/admin/rooms/"+name+"/settings?tz=UTC", "en"); !strings.Contains(page, `value="2030-12-01T01:00"`) {
		t.Fatalf("opensAt not shown in UTC: %s", page)
	}

	// Settings: a refusal saves nothing; a change is saved, with a notice.
	settings := "/admin/rooms/" + name + "/settings"
	if resp, body := rc.post(t, settings, with(full, "rate", "0", "title", "Changed"), nil); resp.StatusCode != 422 ||
		!strings.Contains(body, `id="err-rate"`) || !strings.Contains(body, `value="Changed"`) {
		t.Fatalf("invalid settings: %d %.300s", resp.StatusCode, body)
	}
	if got, _ := rc.eng.Room(ctx, name); !reflect.DeepEqual(got, want) {
		t.Fatalf("a refused form changed the settings: %+v", got)
	}
	resp, _ = rc.post(t, settings, with(full, "name", "ignored-name", "rate", "80", "title", "Changed", "closesAt", "", "tz", "UTC",
		"prequeueAt", "2030-12-01T00:30", "opensAt", "2030-12-01T01:00"), nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != settings+"?saved=1&tz=UTC" {
		t.Fatalf("save: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	want.Rate, want.Title, want.ClosesAt = 80, "Changed", nil
	if got, _ := rc.eng.Room(ctx, name); !reflect.DeepEqual(got, want) {
		t.Fatalf("saved %+v\nwant  %+v", got, want)
	}
	if _, page := rc.get(t, settings+"?saved=1&tz=UTC", "ko"); !strings.Contains(page, "저장했습니다.") {
		t.Fatalf("no Saved notice in Korean: %s", page)
	}
	if _, err := rc.eng.Room(ctx, "ignored-name"); !errors.Is(err, room.ErrNotFound) {
		t.Fatal("the settings form created a room from its name field")
	}
	for _, p := range []string{"/admin/rooms/no-such-room-x/settings", "/admin/rooms/Bad_Room/settings"} {
		if status, _ := rc.get(t, p, "en"); status != 404 {
			t.Errorf("GET %s: %d, want 404", p, status)
		}
		if resp, _ := rc.post(t, p, full, nil); resp.StatusCode != 404 {
			t.Errorf("POST %s: %d, want 404", p, resp.StatusCode)
		}
	}
	if _, err := rc.eng.Room(ctx, "no-such-room-x"); !errors.Is(err, room.ErrNotFound) {
		t.Fatal("the settings form of an unknown room created it")
	}
}

// TestConsoleRoomAccess: the settings form limits who may join: code
// holders, the shop's members with its keys and sign-in page; a wrong
// key, key set URL or missing sign-in page is refused at its field in the
// operator's language, saving nothing.
func TestConsoleRoomAccess(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	name := servicetest.RoomName(t, rc.rdb)
	if err := rc.eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	pem := identitytest.NewKey(t, "ec", "").PEM(t)
	settings := "/admin/rooms/" + name + "/settings"
	form := roomFormOf(name, room.Defaults(name))
	for _, tc := range []struct {
		name, lang string
		form       url.Values
		field, msg string
	}{
		{"required without keys", "en", with(form, "identity", "required", "signInURL", "https://shop.example/in"), "identityJWKSURL", "keys are needed"},
		{"a private key, Korean", "ko", with(form, "identity", "optional", "identityKeys", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"), "identityKeys", "공개 키"},
		{"a metadata key set URL", "en", with(form, "identity", "optional", "identityJWKSURL", "http://169.254.169.254/keys"), "identityJWKSURL", "metadata"},
		{"required without a sign-in page", "en", with(form, "identity", "required", "identityKeys", pem), "signInURL", "needed when sign-in is required"},
		{"keys at their bound, each byte form-encoded", "en", with(form, "identity", "optional", "identityKeys", strings.Repeat("+/\n", room.MaxIdentityKeysLen/3)), "identityKeys", "at most 64 KiB"},
		{"an unknown access", "en", with(form, "access", "vip"), "access", "Choose who may join"},
		{"everyone as staff", "en", with(form, "staffNetworks", "198.51.100.0/24\n0.0.0.0/0"), "staffNetworks", "none wider than /16"},
		{"staff by name, Korean", "ko", with(form, "staffNetworks", "office"), "staffNetworks", "네트워크는 한 줄에 하나씩"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rc.post(t, settings, tc.form, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != 422 || !strings.Contains(body, `id="err-`+tc.field+`"`) || !strings.Contains(body, tc.msg) {
				t.Fatalf("%d, want 422 with %q at %s: %.600s", resp.StatusCode, tc.msg, tc.field, body)
			}
			if got, _ := rc.eng.Room(ctx, name); got.Access != (room.Access{}) || len(got.StaffNetworks) != 0 {
				t.Fatalf("a refused form saved %+v %v", got.Access, got.StaffNetworks)
			}
		})
	}
	resp, body := rc.post(t, settings, with(form, "access", "code", "identity", "required", "identityKeys", pem,
		"signInURL", "https://shop.example/in", "staffNetworks", " 198.51.100.0/24 \n\n2001:db8:5::/48\n"), nil)
	if resp.StatusCode != 303 {
		t.Fatalf("save: %d %.400s", resp.StatusCode, body)
	}
	want := room.Access{Access: room.AccessCode, Identity: room.IdentityRequired, IdentityKeys: strings.TrimSpace(pem), SignInURL: "https://shop.example/in"}
	if got, err := rc.eng.Room(ctx, name); err != nil || got.Access != want || strings.Join(got.StaffNetworks, ",") != "198.51.100.0/24,2001:db8:5::/48" {
		t.Fatalf("saved %+v %v %v, want %+v and the two staff networks", got.Access, got.StaffNetworks, err, want)
	}
	if _, page := rc.get(t, settings, "en"); !strings.Contains(page, `<option value="code" selected`) || !strings.Contains(page, `<option value="required" selected`) {
		t.Fatalf("the settings page does not show the access saved: %s", page)
	}
}

// TestConsoleRoomLines: the room form saves up to four named lines, each
// with its share and who may join it, ignoring empty rows; it refuses, at
// the field and in the operator's language, saving nothing, a row without
// a share, shares that do not add up to 1 (saying what they add up to),
// room-level codes with lines and a line of members without the shop's
// sign-in; a form without the rows keeps the lines, and empty rows clear
// them.
func TestConsoleRoomLines(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	name := servicetest.RoomName(t, rc.rdb)
	two := []room.Line{{Name: "presale", Share: 0.7, Access: room.LineCode}, {Name: "general", Share: 0.3, Access: room.LineOpen}}
	lines := func(f url.Values, kv ...string) url.Values {
		g := with(f, kv...)
		for i := range room.MaxLines { // the rows a browser posts, empty but for kv's
			for _, part := range []string{"Name", "Share", "Access"} {
				if !g.Has(views.LineField(i, part)) {
					g.Set(views.LineField(i, part), map[string]string{"Access": "open"}[part])
				}
			}
		}
		return g
	}
	form := lines(roomFormOf("", room.Defaults("")), "name", name,
		"line1Name", "presale", "line1Share", "0.7", "line1Access", "code", "line3Name", "general", "line3Share", " 0.3 ", "line3Access", "open")
	resp, body := rc.post(t, "/admin/rooms/new", form, nil)
	if resp.StatusCode != 303 {
		t.Fatalf("create: %d %.400s", resp.StatusCode, body)
	}
	if got, err := rc.eng.Room(ctx, name); err != nil || !reflect.DeepEqual(got.Lines, two) {
		t.Fatalf("created lines %+v (%v), want %+v", got.Lines, err, two)
	}
	settings := "/admin/rooms/" + name + "/settings"
	status, page := rc.get(t, settings, "en")
	for _, s := range []string{`name="line1Name" value="presale"`, `name="line1Share" type="number" inputmode="decimal" step="0.01" min="0" max="1" value="0.7"`,
		`name="line2Name" value="general"`, `value="0.3"`, `<option value="code" selected`, "Line 2: who may join", `name="line4Name" value=""`} {
		if status != 200 || !strings.Contains(page, s) {
			t.Fatalf("the settings page lacks %q: %d %s", s, status, page)
		}
	}

	saved := roomFormOf(name, func() room.Settings { s, _ := rc.eng.Room(ctx, name); return s }())
	for _, tc := range []struct {
		name, lang string
		form       url.Values
		field, msg string
	}{
		{"shares short of 1", "en", with(saved, "line1Share", "0.6"), "lines", "The lines&#39; shares must add up to 1; they add up to 0.9."},
		{"shares over 1, Korean", "ko", with(saved, "line2Share", "0.4"), "lines", "지금 합은 1.1입니다"},
		{"a name without a share", "en", with(saved, "line3Name", "vip"), "line3Share", "a number above 0 and at most 1"},
		{"a share that is no number", "en", with(saved, "line2Share", "half"), "line2Share", "a number above 0 and at most 1"},
		{"a share without a name", "en", with(saved, "line2Name", ""), "lines", "each with a different name"},
		{"a name twice", "en", with(saved, "line2Name", "presale"), "lines", "each with a different name"},
		{"a share of 0", "en", with(saved, "line1Share", "0", "line2Share", "1"), "lines", "a share above 0"},
		{"room-level codes", "en", with(saved, "access", "code"), "access", "each line says who may join it"},
		{"members without the shop's sign-in", "en", with(saved, "line1Access", "identity"), "lines", "needs the shop&#39;s sign-in"},
		{"members without the shop's sign-in, Korean", "ko", with(saved, "line1Access", "identity"), "lines", "쇼핑몰 로그인"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rc.post(t, settings, tc.form, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != 422 || !strings.Contains(body, `id="err-`+tc.field+`"`) || !strings.Contains(body, tc.msg) {
				t.Fatalf("%d, want 422 with %q at %s: %s", resp.StatusCode, tc.msg, tc.field, body)
			}
			for i := range room.MaxLines { // the rows as typed
				if typed := tc.form.Get(views.LineField(i, "Name")); !strings.Contains(body, `name="`+views.LineField(i, "Name")+`" value="`+typed+`"`) {
					t.Fatalf("row %d's name %q is not kept: %s", i+1, typed, body)
				}
			}
			if got, _ := rc.eng.Room(ctx, name); !reflect.DeepEqual(got.Lines, two) || got.Access.Access != "" || got.PrequeueAt != nil {
				t.Fatalf("a refused form saved lines %+v, access %q, prequeueAt %v", got.Lines, got.Access.Access, got.PrequeueAt)
			}
		})
	}

	// A page without the rows keeps the lines; its empty rows clear them.
	old := url.Values{}
	for k, v := range saved {
		if !strings.HasPrefix(k, "line") {
			old[k] = v
		}
	}
	if resp, body := rc.post(t, settings, with(old, "title", "Kept"), nil); resp.StatusCode != 303 {
		t.Fatalf("save without rows: %d %.400s", resp.StatusCode, body)
	}
	if got, _ := rc.eng.Room(ctx, name); got.Title != "Kept" || !reflect.DeepEqual(got.Lines, two) {
		t.Fatalf("a form without the rows saved %q with lines %+v, want them kept", got.Title, got.Lines)
	}
	if resp, body := rc.post(t, settings, lines(old), nil); resp.StatusCode != 303 {
		t.Fatalf("clear: %d %.400s", resp.StatusCode, body)
	}
	if got, _ := rc.eng.Room(ctx, name); got.Lines != nil {
		t.Fatalf("empty rows left lines %+v", got.Lines)
	}
}

func hasRecord(recs []store.RoomRecord, name string) bool {
	for _, r := range recs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// TestConsoleRoomList: every room, live or only recorded, with its
// figures and links, in a captioned region that scrolls on a phone.
func TestConsoleRoomList(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	set := room.Defaults(rc.room)
	set.Title, set.Paused, set.Rate = "Sneaker <drop>", true, 1000
	if err := rc.eng.SaveRoom(ctx, rc.room, set); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		id, _ := visitor.NewID()
		if _, err := rc.eng.Enter(ctx, rc.room, id); err != nil {
			t.Fatal(err)
		}
	}
	rc.eng.SetSoldOut(ctx, rc.room, true)
	recorded := servicetest.RoomName(t, rc.rdb)
	if err := rc.db.SaveRoom(ctx, recorded, room.Defaults(recorded)); err != nil {
		t.Fatal(err)
	}
	status, page := rc.get(t, "/admin/rooms?deleted=gone-room", "en")
	row := func(name string) string {
		i := strings.Index(page, `<tr data-room="`+name+`"`)
		if i < 0 {
			t.Fatalf("no row for %s: %s", name, page)
		}
		j := strings.Index(page[i:], "</tr>")
		return page[i : i+j]
	}
	live := row(rc.room)
	for _, s := range []string{
		`Sneaker &lt;drop&gt;`, `data-k="waiting">3<`, `data-k="prequeued">0<`, `data-k="active">0<`, "Paused", "Sold out", "Open",
		`href="/admin/rooms/` + rc.room + `"`, `href="/admin/rooms/` + rc.room + `/settings"`, `href="/admin/rooms/` + rc.room + `/products"`,
	} {
		if !strings.Contains(live, s) {
			t.Errorf("the live room's row lacks %q: %s", s, live)
		}
	}
	if r := row(recorded); !strings.Contains(r, "not in Redis") {
		t.Errorf("the recorded room's row: %s", r)
	}
	for _, s := range []string{`class="scroll" role="region" aria-labelledby="wr-rooms-caption" tabindex="0"`, `<caption id="wr-rooms-caption" class="sr-only">`,
		`href="/admin/rooms/new"`, "Room gone-room deleted."} {
		if status != 200 || !strings.Contains(page, s) {
			t.Errorf("the list lacks %q", s)
		}
	}
	if _, page := rc.get(t, "/admin/rooms?deleted=%3Cb%3E", "ko"); strings.Contains(page, "<b>") || !strings.Contains(page, "대기실") {
		t.Errorf("a bad deleted= name is echoed, or the page is not in Korean")
	}
}

// TestConsoleRoomActions: pause stops admissions and resume restarts
// them; drain refuses new joins while the line is still served; close
// stops both; reopen clears sold out and undoes close and drain. Each is
// in the sale log and the audit log; delete wants the room's name typed.
// The console and the engine share a fake clock: each admission is a
// tick after a move of it.
func TestConsoleRoomActions(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsoleOn(t, clockwork.NewFakeClockAt(time.Now()), nil)
	ctx := context.Background()
	name := rc.room
	base := "/admin/rooms/" + name
	join := func() error {
		id, _ := visitor.NewID()
		_, err := rc.eng.Enter(ctx, name, id)
		return err
	}
	admitted := func() int64 {
		t.Helper()
		rc.clock.Advance(5 * time.Millisecond)
		rc.eng.Admit(ctx, name, time.Second, []string{freshToken(t)})
		st, err := rc.eng.Stats(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return st.Admitted
	}
	act := func(action string) {
		t.Helper()
		resp, body := rc.post(t, base+"/action", url.Values{"action": {action}, "confirm": {"1"}}, nil)
		if resp.StatusCode != 303 || resp.Header.Get("Location") != base+"/settings?done="+action {
			t.Fatalf("%s: %d %s %.300s", action, resp.StatusCode, resp.Header.Get("Location"), body)
		}
	}
	rc.sale.take()

	steps := []struct {
		action string
		events []string
		check  func(t *testing.T)
	}{
		{"pause", []string{name + " paused"}, func(t *testing.T) {
			join()
			before := admitted()
			if join(); admitted() != before {
				t.Fatal("a paused room admitted")
			}
			if s, _ := rc.eng.Room(ctx, name); !s.Paused {
				t.Fatal("not paused")
			}
		}},
		{"resume", []string{name + " resumed"}, func(t *testing.T) {
			st, _ := rc.eng.Stats(ctx, name)
			if admitted() <= st.Admitted {
				t.Fatal("a resumed room does not admit")
			}
		}},
		{"drain", []string{name + " draining"}, func(t *testing.T) {
			if err := join(); !errors.Is(err, queue.ErrSaleEnded) {
				t.Fatalf("a join after drain: %v, want ErrSaleEnded", err)
			}
			st, _ := rc.eng.Stats(ctx, name)
			if st.Waiting == 0 {
				t.Fatal("nobody left in line to serve")
			}
			if admitted() <= st.Admitted {
				t.Fatal("the line is not served after drain")
			}
			s, _ := rc.eng.Room(ctx, name)
			if s.ClosesAt == nil || rc.clock.Since(*s.ClosesAt) > time.Minute || !s.ServeLineAfterClose {
				t.Fatalf("drain settings: %+v", s.Schedule)
			}
			// The settings form shows minutes; saved untouched, the
			// drain's closing (to the millisecond) stays as it was.
			if resp, body := rc.post(t, base+"/settings", with(roomFormOf(name, s), "title", "Renamed"), nil); resp.StatusCode != 303 {
				t.Fatalf("save after drain: %d %.300s", resp.StatusCode, body)
			}
			if got, _ := rc.eng.Room(ctx, name); got.Title != "Renamed" || !got.ClosesAt.Equal(*s.ClosesAt) {
				t.Fatalf("saving the form moved the closing: %v → %v", s.ClosesAt, got.ClosesAt)
			}
		}},
		{"reopen", []string{name + " reopened"}, func(t *testing.T) {
			if err := join(); err != nil {
				t.Fatalf("a join after reopen: %v", err)
			}
			if s, _ := rc.eng.Room(ctx, name); s.ClosesAt != nil {
				t.Fatalf("reopen kept the past closing: %v", s.ClosesAt)
			}
		}},
		{"close", []string{name + " closed"}, func(t *testing.T) {
			if err := join(); !errors.Is(err, queue.ErrSaleEnded) {
				t.Fatalf("a join into a closed room: %v", err)
			}
			if before := admitted(); admitted() != before {
				t.Fatal("a closed room admitted")
			}
		}},
		{"reopen", []string{name + " reopened"}, func(t *testing.T) {
			if s, _ := rc.eng.Room(ctx, name); s.Mode != room.ModeFIFO {
				t.Fatalf("reopen left mode %q", s.Mode)
			}
			if st, _ := rc.eng.Stats(ctx, name); st.SoldOut {
				t.Fatal("still sold out")
			}
			if err := join(); err != nil {
				t.Fatalf("a join after reopen: %v", err)
			}
		}},
	}
	for i, st := range steps {
		if st.action == "reopen" && i == len(steps)-1 {
			rc.eng.SetSoldOut(ctx, name, true) // and sold out, as after the last order
		}
		act(st.action)
		if got := rc.sale.take(); !reflect.DeepEqual(got, st.events) {
			t.Fatalf("%s: sale events %q, want %q", st.action, got, st.events)
		}
		t.Run(st.action, st.check)
	}
	entries := auditOf(t, rc.harness, name)
	var actions []string
	for _, e := range entries {
		if e.Actor != "admin" {
			t.Errorf("entry %+v: actor %q, want admin", e, e.Actor)
		}
		if strings.HasPrefix(e.Action, "room.") {
			actions = append(actions, e.Action)
		}
	}
	wantActions := []string{"room.pause", "room.resume", "room.drain", "room.update", "room.reopen", "room.close", "room.reopen"}
	if !reflect.DeepEqual(actions, wantActions) {
		t.Fatalf("audited %q, want %q", actions, wantActions)
	}

	// Drain before the opening: refused, nothing changes.
	set, _ := rc.eng.Room(ctx, name)
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	set.OpensAt = &later
	rc.eng.SaveRoom(ctx, name, set)
	resp, body := rc.post(t, base+"/action", url.Values{"action": {"drain"}, "confirm": {"1"}}, nil)
	if resp.StatusCode != 409 || !strings.Contains(body, "has not opened yet") {
		t.Fatalf("drain before opening: %d %.300s", resp.StatusCode, body)
	}
	if got, _ := rc.eng.Room(ctx, name); !reflect.DeepEqual(got, set) {
		t.Fatalf("a refused drain changed %+v", got)
	}
	if resp, _ := rc.post(t, base+"/action", url.Values{"action": {"explode"}}, nil); resp.StatusCode != 400 {
		t.Fatalf("unknown action: %d", resp.StatusCode)
	}

	// Delete: the name must be typed.
	for _, typed := range []string{"", "wrong", strings.ToUpper(name)} {
		resp, body := rc.post(t, base+"/delete", url.Values{"confirm": {typed}}, nil)
		if resp.StatusCode != 422 || !strings.Contains(body, `id="err-confirm"`) {
			t.Fatalf("delete confirmed by %q: %d %.300s", typed, resp.StatusCode, body)
		}
		if _, err := rc.eng.Room(ctx, name); err != nil {
			t.Fatalf("the room went without its name typed: %v", err)
		}
	}
	resp, _ = rc.post(t, base+"/delete", url.Values{"confirm": {name}}, nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/rooms?deleted="+name {
		t.Fatalf("delete: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := rc.eng.Room(ctx, name); !errors.Is(err, room.ErrNotFound) {
		t.Fatal("the room is still there")
	}
	if got := rc.sale.take(); len(got) != 1 || got[0] != name+" deleted" {
		t.Fatalf("delete events %q", got)
	}
	if resp, _ := rc.post(t, base+"/delete", url.Values{"confirm": {name}}, nil); resp.StatusCode != 404 {
		t.Fatalf("delete again: %d", resp.StatusCode)
	}
}

// auditOf returns room name's audit entries, oldest first.
func auditOf(t *testing.T, h *harness, name string) []audit.Entry {
	t.Helper()
	es, err := h.web.auditLog.List(context.Background(), audit.Filter{Room: name})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(es)
	return es
}

// barrierRooms holds every Room read until n have been made, so that
// concurrent writers all see the room missing before any of them writes.
type barrierRooms struct {
	*queue.Engine
	reads sync.WaitGroup
}

func (b *barrierRooms) Room(ctx context.Context, name string) (room.Settings, error) {
	s, err := b.Engine.Room(ctx, name)
	b.reads.Done()
	b.reads.Wait()
	return s, err
}

// TestNewRoomIsCreatedOnce: operators creating the same room at once get
// one room; the others are told it exists, and nothing is overwritten.
func TestNewRoomIsCreatedOnce(t *testing.T) {
	t.Parallel()
	const n = 8
	b := &barrierRooms{}
	b.reads.Add(n)
	h := newHarness(t, func(o *Options) {
		b.Engine = o.Rooms.(*queue.Engine)
		o.Rooms = b
	})
	name := servicetest.RoomName(t, h.rdb)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			title := "by operator " + strconv.Itoa(i)
			_, err := h.web.roomWrites.Save(context.Background(), "op"+strconv.Itoa(i), name, admin.Write{Patch: room.Patch{Title: &title}, Exist: admin.MustBeNew})
			errs <- err
		}()
	}
	made := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			made++
		case !errors.Is(err, admin.ErrExists):
			t.Fatal(err)
		}
	}
	if made != 1 {
		t.Fatalf("%d of %d creations succeeded, want 1", made, n)
	}
}

// TestConsoleSaveAnswersSaved: a console save whose write went through
// redirects with its notice, even when every read after the save fails.
func TestConsoleSaveAnswersSaved(t *testing.T) {
	t.Parallel()
	var rooms *readsFailAfterSave
	rc := newRoomsConsoleWith(t, func(o *Options) { rooms = failReadsAfterSave(o) })
	ctx := context.Background()
	base := "/admin/rooms/" + rc.room
	set, err := rc.eng.Room(ctx, rc.room)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		form       url.Values
		location   string
		saved      func(room.Settings) bool
	}{
		{"settings", base + "/settings", with(roomFormOf(rc.room, set), "rate", "33"), base + "/settings?saved=1&tz=Asia%2FSeoul",
			func(s room.Settings) bool { return s.Rate == 33 }},
		{"pause", base + "/action", url.Values{"action": {"pause"}}, base + "/settings?done=pause",
			func(s room.Settings) bool { return s.Paused }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rooms.saved.Store(false)
			resp, body := rc.post(t, tc.path, tc.form, nil)
			if resp.StatusCode != 303 || resp.Header.Get("Location") != tc.location {
				t.Fatalf("%d %s %s, want 303 to %s", resp.StatusCode, resp.Header.Get("Location"), body, tc.location)
			}
			if !rooms.saved.Load() {
				t.Fatal("the write saved nothing")
			}
			if got, err := rc.eng.Room(ctx, rc.room); err != nil || !tc.saved(got) {
				t.Fatalf("saved settings %+v, %v", got, err)
			}
		})
	}
}

// failingLive is a Redis whose live reads fail: the list of names always,
// Stats for the rooms in statsDown.
type failingLive struct {
	*queue.Engine
	statsDown map[string]bool
}

func (f *failingLive) Rooms(context.Context) ([]string, error) {
	return nil, errors.New("redis: i/o timeout")
}

func (f *failingLive) Stats(ctx context.Context, name string) (queue.Stats, error) {
	if f.statsDown[name] {
		return queue.Stats{}, context.DeadlineExceeded
	}
	return f.Engine.Stats(ctx, name)
}

// TestConsoleRoomListWithoutLiveCounters: when Redis cannot list the
// rooms and some rooms' counters cannot be read, every room the database
// records is still listed; the unread ones show "—", never 0.
func TestConsoleRoomListWithoutLiveCounters(t *testing.T) {
	t.Parallel()
	f := &failingLive{statsDown: map[string]bool{}}
	rc := newRoomsConsoleWith(t, func(o *Options) {
		f.Engine = o.Rooms.(*queue.Engine)
		o.Rooms = f
	})
	ctx := context.Background()
	var names []string
	for i := range 4 {
		name := servicetest.RoomName(t, rc.rdb)
		if err := rc.eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
			t.Fatal(err)
		}
		if err := rc.db.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
			t.Fatal(err)
		}
		f.statsDown[name] = i%2 == 0
		names = append(names, name)
	}
	_, page := rc.get(t, "/admin/rooms", "en")
	for _, name := range names {
		i := strings.Index(page, `<tr data-room="`+name+`"`)
		if i < 0 {
			t.Fatalf("room %s is not listed", name)
		}
		r := page[i : i+strings.Index(page[i:], "</tr>")]
		switch {
		case f.statsDown[name] && (!strings.Contains(r, `data-k="unread">— the live figures cannot be read right now`) || strings.Contains(r, `data-k="waiting"`)):
			t.Errorf("unread room %s: %s", name, r)
		case !f.statsDown[name] && !strings.Contains(r, `data-k="waiting">0<`):
			t.Errorf("readable room %s lacks its figures: %s", name, r)
		}
	}
	if !strings.Contains(page, `role="alert"`) {
		t.Error("the list does not say that Redis could not list the rooms")
	}
}

// TestConsoleReadySpread: the settings form's field sets readySpreadMs,
// shows it and the server's default in both languages, refuses what is
// over one tick or not a whole number at its field, keeps it when a form
// (an older page) lacks the field, and sets it back to the server's
// default when emptied; each change is in the audit log.
func TestConsoleReadySpread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := newRoomsConsoleWith(t, spreadOptions)
	t.Cleanup(rc.web.hub.Close)
	path := "/admin/rooms/" + rc.room + "/settings"
	current := func() *int { return rc.settings(t).ReadySpreadMs }
	shown := func() url.Values { return roomFormOf(rc.room, rc.settings(t)) }

	for _, tt := range []struct{ lang, label, hint, empty string }{
		{"en", "Spread of each tick&#39;s turns", "so they do not reach the order page in the same millisecond; 0 sends them at once. Empty follows the server&#39;s default (800 ms). At most one tick (1000 ms).", `placeholder="server default 800"`},
		{"ko", "입장 알림 분산 시간", "비워 두면 서버 기본값(800ms)을 따릅니다. 최대 한 틱(1000ms).", `placeholder="서버 기본값 800"`},
	} {
		_, page := rc.get(t, path, tt.lang)
		for _, want := range []string{tt.label, tt.hint, tt.empty, `name="readySpreadMs" type="number"`, `max="1000" value=""`, `aria-describedby="hint-readySpreadMs"`} {
			if !strings.Contains(page, want) {
				t.Fatalf("%s: the settings page lacks %q", tt.lang, want)
			}
		}
	}

	ms := func(n int) *int { return &n }
	without := with(shown(), "readySpreadMs", "300")
	without.Del("readySpreadMs")
	for _, tt := range []struct {
		name, lang string
		form       url.Values
		status     int
		msg        string
		want       *int
	}{
		{"set", "en", with(shown(), "readySpreadMs", "300"), 303, "", ms(300)},
		{"over one tick", "en", with(shown(), "readySpreadMs", "1500"), 422, "between 1 and 1000 ms (one tick)", ms(300)},
		{"over one tick, Korean", "ko", with(shown(), "readySpreadMs", "1500"), 422, "1ms에서 1000ms(한 틱) 사이", ms(300)},
		{"negative", "en", with(shown(), "readySpreadMs", "-5"), 422, "Must be empty (the server&#39;s default), 0 (no spread)", ms(300)},
		{"not a whole number", "en", with(shown(), "readySpreadMs", "2.5"), 422, "Enter a whole number.", ms(300)},
		{"a form without the field", "en", without, 303, "", ms(300)},
		{"no spread", "en", with(shown(), "readySpreadMs", "0"), 303, "", ms(0)},
		{"emptied: the server's default", "en", with(shown(), "readySpreadMs", ""), 303, "", nil},
	} {
		resp, body := rc.post(t, path, tt.form, map[string]string{"Accept-Language": tt.lang})
		if resp.StatusCode != tt.status || tt.status == 422 && (!strings.Contains(body, `id="err-readySpreadMs"`) || !strings.Contains(body, tt.msg)) {
			t.Fatalf("%s: %d, want %d (with %q at the field): %.600s", tt.name, resp.StatusCode, tt.status, tt.msg, body)
		}
		if tt.status == 422 && !strings.Contains(body, `value="`+tt.form.Get("readySpreadMs")+`"`) {
			t.Fatalf("%s: the typed value is not kept", tt.name)
		}
		if got := current(); !room.SameReadySpread(got, tt.want) {
			t.Fatalf("%s: readySpreadMs %s, want %s", tt.name, spreadString(got), spreadString(tt.want))
		}
		if tt.want != nil {
			if _, page := rc.get(t, path, "en"); !strings.Contains(page, `max="1000" value="`+strconv.Itoa(*tt.want)+`"`) {
				t.Fatalf("%s: the form does not show %d", tt.name, *tt.want)
			}
		}
	}

	// The audit log has each change, old and new, like any other field.
	entries, err := audit.New(rc.db).List(ctx, audit.Filter{Room: rc.room})
	if err != nil {
		t.Fatal(err)
	}
	var changes []string
	for _, e := range entries {
		var old, nw map[string]json.RawMessage
		if json.Unmarshal([]byte(e.Old), &old) != nil || json.Unmarshal([]byte(e.New), &nw) != nil {
			continue
		}
		if v, ok := nw["readySpreadMs"]; ok {
			changes = append(changes, e.Action+" "+string(old["readySpreadMs"])+" -> "+string(v))
		}
	}
	want := []string{"room.update 0 -> null", "room.update 300 -> 0", "room.update null -> 300"} // newest first
	if strings.Join(changes, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit log:\n%s\nwant\n%s", strings.Join(changes, "\n"), strings.Join(want, "\n"))
	}
}

// TestStopActionsAskForConfirmation: Drain and Close turn buyers away, so
// their forms carry a confirmation box; a post without it ticked is
// refused with a clear message and changes nothing.
func TestStopActionsAskForConfirmation(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	base := "/admin/rooms/" + rc.room
	_, page := rc.get(t, base+"/settings", "en")
	if n := strings.Count(page, `<input type="checkbox" name="confirm" value="1" required>`); n != 2 || !strings.Contains(page, "I understand buyers can no longer join") {
		t.Fatalf("%d confirmation boxes on the settings page, want 2 (drain, close): %s", n, page)
	}
	before, _ := rc.eng.Room(ctx, rc.room)
	for _, action := range []string{"drain", "close"} {
		for _, tc := range []struct {
			lang, confirm, want string
		}{
			{"en", "", "tick the confirmation box"},
			{"en", "yes", "tick the confirmation box"},
			{"ko", "", "확인란에 체크한 뒤"},
		} {
			f := url.Values{"action": {action}}
			if tc.confirm != "" {
				f.Set("confirm", tc.confirm)
			}
			resp, body := rc.post(t, base+"/action", f, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != 422 || !strings.Contains(body, tc.want) {
				t.Fatalf("%s without confirmation (%q, %s): %d %.300s", action, tc.confirm, tc.lang, resp.StatusCode, body)
			}
			if got, _ := rc.eng.Room(ctx, rc.room); !reflect.DeepEqual(got, before) {
				t.Fatalf("an unconfirmed %s changed the room: %+v", action, got)
			}
		}
	}
	// Pause needs no confirmation; close with it ticked closes.
	if resp, body := rc.post(t, base+"/action", url.Values{"action": {"pause"}}, nil); resp.StatusCode != 303 {
		t.Fatalf("pause: %d %.300s", resp.StatusCode, body)
	}
	if resp, body := rc.post(t, base+"/action", url.Values{"action": {"close"}, "confirm": {"1"}}, nil); resp.StatusCode != 303 {
		t.Fatalf("confirmed close: %d %.300s", resp.StatusCode, body)
	}
	if got, _ := rc.eng.Room(ctx, rc.room); got.Mode != "closed" {
		t.Fatalf("mode %q after a confirmed close", got.Mode)
	}
}
