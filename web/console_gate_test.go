package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"regexp"
	"strings"
	"testing"
	"waitingroom/server/admin"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/views"
)

func TestConsoleGateSettings(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	name := servicetest.RoomName(t, rc.rdb)
	if err := rc.eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	settings := "/admin/rooms/" + name + "/settings"
	for _, lang := range []string{"ko", "en"} {
		g := views.GateFormTextFor(lang)
		status, body := rc.get(t, settings, lang)
		if status != 200 || !strings.Contains(body, html.EscapeString(g.Legend)) || !strings.Contains(body, `id="f-targetURL"`) ||
			!strings.Contains(body, html.EscapeString(g.NoKey)) || !strings.Contains(body, g.NewKey) {
			t.Fatalf("%s settings page without the gate: %d %.300s", lang, status, body)
		}
	}

	// Every invalid gate field says why, at once; the typed values stay.
	base := roomFormOf(name, room.Defaults(name))
	bad := with(base, "targetURL", "ftp://shop.example", "sessionSeconds", "5", "sessionMode", "forever", "protect", "checkout\n/ok")
	resp, body := rc.post(t, settings, bad, map[string]string{"Accept-Language": "en"})
	en := views.GateFormTextFor("en")
	if resp.StatusCode != 422 {
		t.Fatalf("invalid gate: %d %.500s", resp.StatusCode, body)
	}
	for _, field := range []string{"targetURL", "sessionSeconds", "sessionMode", "protect"} {
		if !strings.Contains(body, `id="err-`+field+`"`) || !strings.Contains(body, html.EscapeString(en.Err[field])) {
			t.Errorf("no error at %s: %.3000s", field, body)
		}
	}
	if !strings.Contains(body, `value="ftp://shop.example"`) || !strings.Contains(body, ">checkout\n/ok</textarea>") {
		t.Fatalf("the typed values are not kept")
	}
	if got, _ := rc.eng.Room(ctx, name); got.Gate.TargetURL != "" {
		t.Fatalf("a refused form saved: %+v", got.Gate)
	}

	good := with(base, "targetURL", "https://shop.example/checkout", "sessionSeconds", "120", "sessionMode", "fixed",
		"failOpen", "1", "protect", " /checkout \n\n/cart\n")
	if resp, body := rc.post(t, settings, good, nil); resp.StatusCode != 303 {
		t.Fatalf("save: %d %.500s", resp.StatusCode, body)
	}
	want := room.Gate{TargetURL: "https://shop.example/checkout", SessionSeconds: 120, SessionMode: "fixed", FailOpen: true,
		Protect: []string{"/checkout", "/cart"}}
	if got, err := rc.eng.Room(ctx, name); err != nil || got.Gate.TargetURL != want.TargetURL || got.Gate.SessionSeconds != 120 ||
		got.Gate.SessionMode != "fixed" || !got.Gate.FailOpen || strings.Join(got.Gate.Protect, ",") != "/checkout,/cart" {
		t.Fatalf("saved %+v %v, want %+v", got.Gate, err, want)
	}

	// The dashboard shows the sessions of a gated room.
	if status, body := rc.get(t, "/admin/rooms/"+name, "en"); status != 200 || !strings.Contains(body, `id="dash-sessions"`) ||
		!strings.Contains(body, "opened 0 · ended 0 · idle 0") {
		t.Fatalf("dashboard without the gate's sessions: %d %.2000s", status, body)
	}

	// A new API key is shown once; the room keeps its hash only.
	resp, body = rc.post(t, "/admin/rooms/"+name+"/apikey", nil, map[string]string{"Accept-Language": "ko"})
	key := regexp.MustCompile(`value="(wrk_[A-Za-z0-9_-]{43})"`).FindStringSubmatch(body)
	if resp.StatusCode != 201 || key == nil || !strings.Contains(body, views.GateFormTextFor("ko").KeyShownOnce) ||
		resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("new key: %d %.3000s", resp.StatusCode, body)
	}
	sum := sha256.Sum256([]byte(key[1]))
	got, _ := rc.eng.Room(ctx, name)
	if got.Gate.APIKeyHash != hex.EncodeToString(sum[:]) || got.Gate.TargetURL != want.TargetURL {
		t.Fatalf("the room's gate after a new key: %+v", got.Gate)
	}
	if _, body := rc.get(t, settings, "en"); strings.Contains(body, key[1]) || !strings.Contains(body, html.EscapeString(en.KeySet)) {
		t.Fatalf("the key is shown again, or not said to be set")
	}
	var found bool
	for _, e := range auditOf(t, rc.harness, name) {
		if strings.Contains(e.Old+e.New, got.Gate.APIKeyHash) || strings.Contains(e.Old+e.New, key[1]) {
			t.Fatalf("the audit log holds the key or its hash: %+v", e)
		}
		if e.Action == admin.ActionAPIKey && strings.Contains(e.New, `"apiKeyHash":"sha256:`+got.Gate.APIKeyHash[:8]+`"`) && e.Actor != "" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no %s audit entry: %+v", admin.ActionAPIKey, auditOf(t, rc.harness, name))
	}
	// Without the form's CSRF token, no key.
	resp, _ = postForm(t, rc.c, rc.srv.URL+"/admin/rooms/"+name+"/apikey", nil, nil)
	if after, _ := rc.eng.Room(ctx, name); resp.StatusCode == 201 || after.Gate.APIKeyHash != got.Gate.APIKeyHash {
		t.Fatalf("a key without the CSRF token: %d", resp.StatusCode)
	}
}
