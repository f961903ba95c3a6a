package web

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/web/sse"
)

// spreadOptions give a server a 1 s tick and a hub whose default spread is
// 800 ms (80% of the tick), as web/app does.
func spreadOptions(o *Options) {
	o.Tick = time.Second
	o.Hub = newHub(o.Queue.(sse.Source), sse.Options{ReadySpread: 800 * time.Millisecond}, o.Metrics, o.Log)
}

func spreadString(ms *int) string {
	if ms == nil {
		return "null"
	}
	return strconv.Itoa(*ms)
}

// TestAdminReadySpread: the admin API takes readySpreadMs (null for the
// server's default, 0 for none, at most one tick), shows it with the
// server's default, and answers 400 naming the field for anything else,
// saving nothing.
func TestAdminReadySpread(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		spreadOptions(o)
		t.Cleanup(o.Hub.Close)
	})
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	type view struct {
		Settings struct {
			ReadySpreadMs        *int `json:"readySpreadMs"`
			ReadySpreadDefaultMs int  `json:"readySpreadDefaultMs"`
			Paused               bool `json:"paused"`
		} `json:"settings"`
	}
	show := func() view {
		t.Helper()
		var v view
		r := h.do(t, "GET", path, "", auth, nil)
		r.json(t, &v)
		if !strings.Contains(r.body, `"readySpreadMs":`) || v.Settings.ReadySpreadDefaultMs != 800 {
			t.Fatalf("GET %s: want readySpreadMs and a default of 800 ms: %.600s", path, r.body)
		}
		return v
	}
	if got := show().Settings.ReadySpreadMs; got != nil {
		t.Fatalf("a new room's readySpreadMs is %s, want null (the server's default)", spreadString(got))
	}
	ms := func(n int) *int { return &n }
	steps := []struct {
		name, body string
		status     int
		wantErr    string
		want       *int
	}{
		{"250 ms", `{"readySpreadMs":250}`, 200, "", ms(250)},
		{"no spread", `{"readySpreadMs":0}`, 200, "", ms(0)},
		{"one tick", `{"readySpreadMs":1000}`, 200, "", ms(1000)},
		{"over one tick", `{"readySpreadMs":1001}`, 400, "readySpreadMs must be null (the server's default), 0 (no spread) or between 1 and 1000 milliseconds", ms(1000)},
		{"negative", `{"readySpreadMs":-1}`, 400, "readySpreadMs must be", ms(1000)},
		{"over the ceiling", `{"readySpreadMs":10001}`, 400, "readySpreadMs must be", ms(1000)},
		{"a fraction", `{"readySpreadMs":1.5}`, 400, "readySpreadMs must be null (the server's default) or a whole number", ms(1000)},
		{"a string", `{"readySpreadMs":"300"}`, 400, "readySpreadMs", ms(1000)},
		{"another field keeps it", `{"title":"t"}`, 200, "", ms(1000)},
		{"null: the server's default", `{"readySpreadMs":null}`, 200, "", nil},
	}
	for _, st := range steps {
		r := h.do(t, "PUT", path, st.body, auth, nil)
		if r.status != st.status || !strings.Contains(r.body, st.wantErr) {
			t.Fatalf("%s: %d %s, want %d with %q", st.name, r.status, r.body, st.status, st.wantErr)
		}
		if got := show().Settings.ReadySpreadMs; !room.SameReadySpread(got, st.want) {
			t.Fatalf("%s: readySpreadMs %s, want %s", st.name, spreadString(got), spreadString(st.want))
		}
	}

	// A room saved under a longer tick keeps its spread, and can still be
	// paused: only a change of readySpreadMs is held to this server's tick.
	set, err := h.eng.Room(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	set.ReadySpreadMs = ms(5000)
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{`{"paused":true}`, `{"readySpreadMs":5000}`} {
		if r := h.do(t, "PUT", path, body, auth, nil); r.status != 200 {
			t.Fatalf("PUT %s to a room with a 5 s spread: %d %s, want 200", body, r.status, r.body)
		}
	}
	if v := show(); !v.Settings.Paused || !room.SameReadySpread(v.Settings.ReadySpreadMs, ms(5000)) {
		t.Fatalf("paused %v, readySpreadMs %s; want paused with 5000 kept", v.Settings.Paused, spreadString(v.Settings.ReadySpreadMs))
	}
}
