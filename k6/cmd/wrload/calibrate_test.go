package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestCalibrateSmoke runs the calibration tool briefly against a real
// server: three short steps, then -apply sets the recommended rate.
func TestCalibrateSmoke(t *testing.T) {
	srv := startServer(t, 200*time.Millisecond)
	calib := testRoom(t, srv, 50)
	target := testRoom(t, srv, 50)
	srv.addProduct(t, "warm-up-"+calib, "x", 1, 1) // waits for the migrations
	var out, progress servicetest.SyncBuffer
	err := calibrateCommand(context.Background(), []string{"-url", srv.base, "-calib-room", calib, "-room", target,
		"-from", "5", "-to", "15", "-by", "5", "-duration", "1500ms", "-warmup", "300ms", "-source-ips", "2",
		"-admin-token", testAdmin, "-database-url", srv.dbURL, "-apply", "-progress", "300ms"}, &out, &progress)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 5 |", "| 10 |", "| 15 |", "recommended rate: 12/s", "adaptive admission", `{"adaptive":true,"minRate":6,`, "PUT /api/admin/rooms/" + target, "applied: room " + target} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q", want)
		}
	}
	for _, want := range []string{"step 5/s", "step 15/s", "orders sent"} {
		if !strings.Contains(progress.String(), want) {
			t.Fatalf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	if rate := roomRate(t, srv.base, target); rate != 12 {
		t.Fatalf("the target room's rate is %v, want the recommended 12", rate)
	}
}

// roomRate reads a room's admission rate through the admin API.
func roomRate(t *testing.T, base, room string) float64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/admin/rooms/"+room, nil)
	req.Header.Set("Authorization", "Bearer "+testAdmin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Settings struct {
			Rate float64 `json:"rate"`
		} `json:"settings"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET room %s: %s %v", room, resp.Status, err)
	}
	return got.Settings.Rate
}
