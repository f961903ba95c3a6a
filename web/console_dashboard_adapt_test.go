package web

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// TestDashboardAdaptive: an adaptive room's dashboard shows the
// controller's rate now, the reason in words, its bounds and targets, the
// rate chart and the recent changes with their p95 against the target and
// failures against the budget, in the page and in its stream, escaped; in
// Korean too; a room that is not adaptive shows none of it; an order rate
// below maxRate is said to be the ceiling.
func TestDashboardAdaptive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newDashHarness(t, 0)
	_, html := h.get(t, h.client, "/admin/rooms/"+h.room)
	if strings.Contains(html, `id="dash-adapt"`) {
		t.Fatal("a room that is not adaptive shows the controller")
	}
	s, err := h.eng.Room(ctx, h.room)
	if err != nil {
		t.Fatal(err)
	}
	s.Rate, s.OrderRate = 100, 1000
	s.Adaptive, s.MinRate, s.MaxRate, s.TargetP95Ms, s.MaxErrorRate = true, 5, 300, 500, 0.02
	if err := h.eng.SaveRoom(ctx, h.room, s); err != nil {
		t.Fatal(err)
	}
	_, html = h.get(t, h.client, "/admin/rooms/"+h.room)
	if got := text(t, html, "dash-adapt-rate"); got != "100 per second" {
		t.Errorf("#dash-adapt-rate before any decision = %q", got)
	}
	if !strings.Contains(html, `id="dash-adapt-none"`) || !strings.Contains(html, "No decision yet") {
		t.Error("no word that nothing was decided yet")
	}

	apply := func(to float64, reason string, p95 time.Duration, errRate float64, samples int64) {
		t.Helper()
		rs, err := h.eng.AdaptRooms(ctx, []string{h.room})
		r := rs[h.room]
		if err != nil {
			t.Fatal(err)
		}
		ok, why, err := h.eng.ApplyAdapt(ctx, h.room, queue.AdaptDecision{N: r.N, From: r.Rate, To: to, Reason: reason,
			P95: p95, ErrorRate: errRate, Samples: samples})
		if err != nil || !ok {
			t.Fatalf("apply %s: %v %q %v", reason, ok, why, err)
		}
	}
	s1 := openLive(t, h)
	s1.next(t, 2*time.Second)
	apply(110, "increase", 120*time.Millisecond, 0, 60)
	apply(110, "hold_short_line", 130*time.Millisecond, 0, 50)
	apply(77, "cut_latency", 620*time.Millisecond, 0.031, 80)

	_, html = h.get(t, h.client, "/admin/rooms/"+h.room+"?tz=UTC")
	wantTexts(t, html, map[string]string{
		"dash-adapt-rate":    "77 per second",
		"dash-adapt-reason":  "Cut: the order p95 is over the target, so the shop is slowing down.",
		"dash-adapt-bounds":  "between 5 and 300 per second",
		"dash-adapt-targets": "order p95 under 500 ms, failed orders under 2%",
	})
	tbl := html[strings.Index(html, `id="dash-adapt-changes"`):]
	tbl = tbl[:strings.Index(tbl, "</table>")]
	if n := strings.Count(tbl, "<tr data-reason="); n != 3 {
		t.Errorf("%d changes listed, want 3", n)
	}
	for _, want := range []string{
		"<strong>Cut</strong> 110 → 77", "620 ms (target 500 ms)", "3.1% (budget 2%) of 80 orders",
		"<strong>Held</strong> 110", "Held: the shop is healthy, but the line is short",
		"<strong>Raised</strong> 100 → 110", "0% (budget 2%) of 60 orders",
	} {
		if !strings.Contains(tbl, want) {
			t.Errorf("the changes lack %q:\n%s", want, tbl)
		}
	}
	if i, j := strings.Index(tbl, "Cut"), strings.Index(tbl, "Raised"); i > j {
		t.Error("the changes are not newest first")
	}
	// (at most 100 or 110: the step to 110 may have lasted less than a
	// second of the chart)
	if !strings.Contains(html, `id="dash-chart-adapt"`) || !strings.Contains(html, `aria-label="Controller&#39;s rate: 77 now, at most 1`) {
		t.Errorf("no rate chart, or not labelled: %s", html[strings.Index(html, `id="dash-chart-adapt"`):][:600])
	}

	// Live: the stream's next tick follows the controller.
	h.tick(t, 1)
	frame := s1.next(t, 2*time.Second)
	if text(t, frame, "dash-adapt-rate") != "77 per second" || !strings.Contains(frame, "620 ms (target 500 ms)") {
		t.Fatalf("the stream does not show the cut: %q", text(t, frame, "dash-adapt-rate"))
	}

	// A code without words is named, escaped.
	apply(77, "<script>x</script>", 0, 0, 0)
	_, html = h.get(t, h.client, "/admin/rooms/"+h.room)
	if strings.Contains(html, "<script>x") || !strings.Contains(html, "Reason code &lt;script&gt;x&lt;/script&gt;.") {
		t.Error("an unknown reason is not named, or not escaped")
	}

	// In Korean.
	apply(70, "cut_errors", 100*time.Millisecond, 0.1, 90)
	_, ko := h.getIn(t, h.client, "/admin/rooms/"+h.room, "ko")
	for _, want := range []string{"적응형 입장", "초당 70", "낮춤: 실패한 주문이 허용 비율을 넘었습니다.", "10% (허용 2%) · 주문 90건 기준"} {
		if !strings.Contains(ko, want) {
			t.Errorf("the Korean page lacks %q", want)
		}
	}

	// An order rate below maxRate is the ceiling, and the hold there says
	// so.
	s, _ = h.eng.Room(ctx, h.room)
	s.OrderRate = 70
	if err := h.eng.SaveRoom(ctx, h.room, s); err != nil {
		t.Fatal(err)
	}
	apply(70, "hold_max", 100*time.Millisecond, 0, 90)
	_, html = h.get(t, h.client, "/admin/rooms/"+h.room)
	if got := text(t, html, "dash-adapt-bounds"); got != "between 5 and 70 (the order rate) per second" {
		t.Errorf("#dash-adapt-bounds = %q", got)
	}
	if got := text(t, html, "dash-adapt-reason"); !strings.HasPrefix(got, "Held at the ceiling: the room&#39;s order rate (70 per second) is below maxRate") {
		t.Errorf("#dash-adapt-reason = %q", got)
	}
}

// TestConsoleAdaptive: the settings form turns adaptive admission on and
// off; in an adaptive room, a rate left as the form showed it keeps the
// controller's (which moved since the page was shown), and a rate typed
// in turns adaptive off; invalid bounds are refused at their field.
func TestConsoleAdaptive(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
