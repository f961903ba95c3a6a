package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"waitingroom/k6"
)

// TestWidgetSoakSmoke runs the widget measurement briefly against the
// real server: 200 widget viewers, then 200 waiting visitors on the same
// room, as k6/widget.sh does with 10,000 of each. The viewers take no
// ticket; both report their memory and command figures.
func TestWidgetSoakSmoke(t *testing.T) {
	srv := startServer(t, 200*time.Millisecond)
	name := testRoom(t, srv, 2)
	const n = 200
	run := func(widget bool) k6.Report {
		t.Helper()
		rep, err := k6.Soak{BaseURL: srv.base, MetricsURL: srv.metrics, Room: name, N: n, Ramp: 1000, Hold: 2 * time.Second,
			Settle: 300 * time.Millisecond, SourceIPs: 4, Widget: widget}.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Log(rep.String())
		// A widget is sent a frame only when what it shows changes: in a
		// room where nothing changes, its viewers count no ticks.
		minTicks := 5
		if widget {
			minTicks = 0
		}
		if rep.Connected != n || rep.Failed != 0 || rep.Lost != 0 || rep.Ticks < minTicks {
			t.Fatalf("connected %d, failed %d, lost %d over %d ticks", rep.Connected, rep.Failed, rep.Lost, rep.Ticks)
		}
		if rep.RSSBefore <= 0 || rep.CommandsPerSec <= 0 || rep.ServerConns != n {
			t.Fatalf("server figures: %+v", rep)
		}
		return rep
	}
	w := run(true)
	if w.Mode != "widget" || !strings.Contains(w.String(), "mode widget") {
		t.Fatalf("report %q", w.String())
	}
	if issued := roomIssued(t, srv, name); issued != 0 {
		t.Fatalf("%d widget viewers took %d tickets", n, issued)
	}
	// The server finds the viewers gone within a few ticks, though nothing
	// is written to them (web.widgetPeekEvery).
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m, err := k6.ScrapeSoak(context.Background(), srv.metrics)
		if err == nil && m["waitingroom_sse_connections"] == 0 {
			break
		}
	}
	run(false)
	if issued := roomIssued(t, srv, name); issued != n {
		t.Fatalf("%d waiting visitors took %d tickets", n, issued)
	}
}

// roomIssued reads the tickets a room issued from the admin API.
func roomIssued(t *testing.T, srv server, room string) int64 {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.base+"/api/admin/rooms/"+room, nil)
	req.Header.Set("Authorization", "Bearer "+testAdmin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Live struct {
			Issued int64 `json:"issued"`
		} `json:"live"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET room: %d %v", resp.StatusCode, err)
	}
	return body.Live.Issued
}
