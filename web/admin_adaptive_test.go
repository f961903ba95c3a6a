package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// TestAdminAdaptive: the admin API takes and shows the adaptive settings,
// answers 400 naming the field for invalid ones, and a manual rate change
// turns adaptive off until it is turned on again.
func TestAdminAdaptive(t *testing.T) {
	h := newHarness(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	settings := func(r reply) room.Settings {
		t.Helper()
		var v struct {
			Settings room.Settings `json:"settings"`
		}
		r.json(t, &v)
		return v.Settings
	}
	steps := []struct {
		name, body   string
		status       int
		wantErr      string
		wantAdaptive bool
		wantRate     float64
	}{
		{"turn on with bounds", `{"adaptive":true,"minRate":0,"maxRate":300,"targetP95Ms":250,"maxErrorRate":0.05}`, 200, "", true, 300},
		{"minRate above maxRate", `{"minRate":400}`, 400, "minRate must not be above maxRate", true, 300},
		{"zero target", `{"targetP95Ms":0}`, 400, "targetP95Ms", true, 300},
		{"error budget above 1", `{"maxErrorRate":2}`, 400, "maxErrorRate", true, 300},
		{"a title change keeps it on", `{"title":"t"}`, 200, "", true, 300},
		{"a manual rate turns it off", `{"rate":40}`, 200, "", false, 40},
		{"on again, from a rate", `{"adaptive":true,"rate":20}`, 200, "", true, 20},
	}
	for _, st := range steps {
		r := h.do(t, "PUT", path, st.body, auth, nil)
		if r.status != st.status || !strings.Contains(r.body, st.wantErr) {
			t.Fatalf("%s: %d %s, want %d with %q", st.name, r.status, r.body, st.status, st.wantErr)
		}
		got := settings(h.do(t, "GET", path, "", auth, nil))
		if got.Adaptive != st.wantAdaptive || got.Rate != st.wantRate {
			t.Fatalf("%s: adaptive %v rate %g, want %v %g", st.name, got.Adaptive, got.Rate, st.wantAdaptive, st.wantRate)
		}
	}
	got := settings(h.do(t, "GET", path, "", auth, nil))
	want := room.Adapt{Adaptive: true, MinRate: 0, MaxRate: 300, TargetP95Ms: 250, MaxErrorRate: 0.05}
	if got.Adapt != want {
		t.Fatalf("adapt %+v, want %+v", got.Adapt, want)
	}

	// The controller's state shows while adaptive is on, and goes with a
	// manual rate.
	controller := func() *controllerView {
		t.Helper()
		var v roomView
		h.do(t, "GET", path, "", auth, nil).json(t, &v)
		return v.Controller
	}
	if c := controller(); c == nil || c.Rate != 20 || c.Decisions != 0 || c.Reason != "" || c.At != nil {
		t.Fatalf("controller %+v, want rate 20 before any decision", c)
	}
	ok, _, err := h.eng.ApplyAdapt(context.Background(), h.room, queue.AdaptDecision{From: 20, To: 25, Reason: "increase"})
	if err != nil || !ok {
		t.Fatalf("apply: %v %v", ok, err)
	}
	if c := controller(); c == nil || c.Rate != 25 || c.Decisions != 1 || c.Reason != "increase" || c.At == nil {
		t.Fatalf("controller %+v, want rate 25 after one increase", c)
	}
	// Its history: the changes, newest first, with their signal, at most
	// adminHistoryLen of them.
	for i := range adminHistoryLen + 5 {
		from, to := 25+float64(i), 26+float64(i)
		ok, _, err := h.eng.ApplyAdapt(context.Background(), h.room, queue.AdaptDecision{N: int64(1 + i), From: from, To: to,
			Reason: "increase", P95: 120 * time.Millisecond, ErrorRate: 0.01, Samples: 30})
		if err != nil || !ok {
			t.Fatalf("apply %d: %v %v", i, ok, err)
		}
	}
	c := controller()
	if c == nil || len(c.History) != adminHistoryLen {
		t.Fatalf("controller %+v, want %d changes", c, adminHistoryLen)
	}
	if h0 := c.History[0]; h0.To != 25+adminHistoryLen+5 || h0.From != h0.To-1 || h0.Reason != "increase" || h0.P95Ms != 120 ||
		h0.ErrorRate != 0.01 || h0.Samples != 30 || time.Since(h0.At) > time.Minute {
		t.Fatalf("newest change %+v", h0)
	}
	h.do(t, "PUT", path, `{"rate":30}`, auth, nil)
	if c := controller(); c != nil {
		t.Fatalf("controller %+v after a manual rate, want none", c)
	}
}
