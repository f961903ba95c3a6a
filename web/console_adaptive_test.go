package web

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// TestConsoleAdaptive: the settings form turns adaptive admission on and
// off; in an adaptive room, a rate left as the form showed it keeps the
// controller's (which moved since the page was shown), and a rate typed
// in turns adaptive off; invalid bounds are refused at their field.
func TestConsoleAdaptive(t *testing.T) {
	ctx := context.Background()
	rc := newRoomsConsole(t)
	path := "/admin/rooms/" + rc.room + "/settings"
	shown := func() url.Values {
		t.Helper()
		s, err := rc.eng.Room(ctx, rc.room)
		if err != nil {
			t.Fatal(err)
		}
		return roomFormOf(rc.room, s)
	}
	save := func(f url.Values, wantStatus int) string {
		t.Helper()
		resp, body := rc.post(t, path, f, nil)
		if resp.StatusCode != wantStatus {
			t.Fatalf("save: %d, want %d: %.400s", resp.StatusCode, wantStatus, body)
		}
		return body
	}
	state := func() (bool, float64) {
		t.Helper()
		s, err := rc.eng.Room(ctx, rc.room)
		if err != nil {
			t.Fatal(err)
		}
		return s.Adaptive, s.Rate
	}

	// On, between 10 and 300: the harness's rate (1000) moves inside.
	rc.sale.take()
	save(with(shown(), "adaptive", "1", "minRate", "10", "maxRate", "300", "targetP95Ms", "250", "maxErrorRate", "0.05"), 303)
	if on, rate := state(); !on || rate != 300 {
		t.Fatalf("adaptive %v rate %g, want on at 300", on, rate)
	}
	if got, want := rc.sale.take(), []string{rc.room + " rate changed", rc.room + " adaptive on"}; !slices.Equal(got, want) {
		t.Fatalf("sale events %q, want %q", got, want)
	}
	if _, body := rc.get(t, path, "en"); !strings.Contains(body, `name="adaptive" value="1" checked`) {
		t.Fatal("the form does not show adaptive admission on")
	}

	// The page is shown; then the controller moves the rate.
	page := shown()
	if ok, _, err := rc.eng.ApplyAdapt(ctx, rc.room, queue.AdaptDecision{From: 300, To: 210, Reason: "cut_latency"}); err != nil || !ok {
		t.Fatalf("apply: %v %v", ok, err)
	}
	save(with(page, "title", "Renamed"), 303)
	if on, rate := state(); !on || rate != 210 {
		t.Fatalf("after a title change: adaptive %v rate %g, want on at the controller's 210", on, rate)
	}

	// Refused bounds, at their field; nothing saved.
	body := save(with(shown(), "minRate", "400"), 422)
	if !strings.Contains(body, `id="err-minRate"`) {
		t.Fatalf("no message at minRate: %.600s", body)
	}

	// A rate typed in: the operator's, adaptive off.
	rc.sale.take()
	save(with(shown(), "rate", "40"), 303)
	if on, rate := state(); on || rate != 40 {
		t.Fatalf("after a typed rate: adaptive %v rate %g, want off at 40", on, rate)
	}
	if got, want := rc.sale.take(), []string{rc.room + " rate changed", rc.room + " adaptive off"}; !slices.Equal(got, want) {
		t.Fatalf("sale events %q, want %q", got, want)
	}
	s, _ := rc.eng.Room(ctx, rc.room)
	if s.Adapt != (room.Adapt{MinRate: 10, MaxRate: 300, TargetP95Ms: 250, MaxErrorRate: 0.05}) {
		t.Fatalf("adapt %+v: the bounds should stay", s.Adapt)
	}
}

// TestConsoleHealthURL: the adaptive fieldset's Health URL field sets the
// room's healthURL, shows it, refuses an invalid one at its field, keeps
// it when a form (an older page) lacks the field, and clears it when
// emptied.
func TestConsoleHealthURL(t *testing.T) {
	rc := newRoomsConsole(t)
	path := "/admin/rooms/" + rc.room + "/settings"
	current := func() string { return rc.settings(t).HealthURL }
	shown := func() url.Values { return roomFormOf(rc.room, rc.settings(t)) }
	const health = "https://shop.example/health?token=abc"
	without := shown()
	without.Del("healthURL")
	for _, tt := range []struct {
		name   string
		form   url.Values
		status int
		want   string
	}{
		{"set", with(shown(), "healthURL", health), 303, health},
		{"user and password", with(shown(), "healthURL", "https://u:p@shop.example/health"), 422, health},
		{"not http", with(shown(), "healthURL", "ftp://shop.example/health"), 422, health},
		{"the metadata address", with(shown(), "healthURL", "http://169.254.169.254/latest/meta-data/"), 422, health},
		{"a form without the field", without, 303, health},
		{"emptied", with(shown(), "healthURL", ""), 303, ""},
	} {
		resp, body := rc.post(t, path, tt.form, nil)
		if resp.StatusCode != tt.status || (tt.status == 422 && !strings.Contains(body, `id="err-healthURL"`)) {
			t.Fatalf("%s: %d, want %d (with the field's message): %.600s", tt.name, resp.StatusCode, tt.status, body)
		}
		if got := current(); got != tt.want {
			t.Fatalf("%s: healthURL %q, want %q", tt.name, got, tt.want)
		}
		if tt.want != "" {
			if _, page := rc.get(t, path, "en"); !strings.Contains(page, `name="healthURL" type="url" value="https://shop.example/health?token=abc"`) {
				t.Fatalf("%s: the form does not show the health URL", tt.name)
			}
		}
	}
	// An internal address the server never fetches is refused by name,
	// in the operator's language.
	for lang, want := range map[string]string{
		"en": "169.254.169.254 is a link-local, cloud metadata, unspecified or multicast address",
		"ko": "169.254.169.254은(는) 링크 로컬·클라우드 메타데이터·미지정·멀티캐스트 주소라",
	} {
		resp, body := rc.post(t, path, with(shown(), "healthURL", "http://169.254.169.254/latest/meta-data/"), map[string]string{"Accept-Language": lang})
		if resp.StatusCode != 422 || !strings.Contains(body, `id="err-healthURL"`) || !strings.Contains(body, want) {
			t.Fatalf("%s: %d, want 422 saying %q: %.600s", lang, resp.StatusCode, want, body)
		}
	}
}
