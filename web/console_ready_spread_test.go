package web

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"waitingroom/server/audit"
	"waitingroom/server/room"
)

// TestConsoleReadySpread: the settings form's field sets readySpreadMs,
// shows it and the server's default in both languages, refuses what is
// over one tick or not a whole number at its field, keeps it when a form
// (an older page) lacks the field, and sets it back to the server's
// default when emptied; each change is in the audit log.
func TestConsoleReadySpread(t *testing.T) {
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
