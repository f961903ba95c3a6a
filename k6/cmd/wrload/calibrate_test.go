package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestCalibrateSmoke runs the calibration tool briefly against a real
// server: three short steps, then -apply sets the recommended rate. Where
// the knee falls is this machine's figure (a loaded machine saturates
// earlier); the knee's arithmetic is tested on recorded steps in k6. The
// smoke checks that the tool's answer follows from its own table: the
// rate before the knee less the 20% margin, set on the room, or, with the
// knee at the first step, a refusal that changes nothing.
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
	for _, want := range []string{"step 5/s", "step 15/s", "orders sent"} {
		if !strings.Contains(progress.String(), want) {
			t.Fatalf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	// The table's rows, and the one the tool marked as the knee.
	var rows []string
	knee := -1
	var kneeActual, kneeFail float64
	for _, line := range strings.Split(out.String(), "\n") {
		for _, r := range []string{"| 5 |", "| 10 |", "| 15 |"} {
			if strings.HasPrefix(line, r) {
				if strings.Contains(line, "← knee") {
					knee = len(rows)
					var target float64
					var p95 string
					fmt.Sscanf(line, "| %g | %g | %s | %g%%", &target, &kneeActual, &p95, &kneeFail)
				}
				rows = append(rows, r)
			}
		}
	}
	if len(rows) != 3 {
		t.Fatalf("the table has %d of the 3 steps: %v", len(rows), rows)
	}
	if knee == 0 {
		// Saturated at 5/s: behind (under 90% of it) or failing (over 5%),
		// the only ways a first step is a knee.
		if kneeActual >= 4.5 && kneeFail <= 5 {
			t.Fatalf("the first step is marked the knee at %g/s and %g%% failures", kneeActual, kneeFail)
		}
		if err == nil || !strings.Contains(err.Error(), "even the first step saturated") {
			t.Fatalf("a knee at the first step answered %v, want the refusal", err)
		}
		if rate := roomRate(t, srv.base, target); rate != 50 {
			t.Fatalf("the refusal set the target room's rate to %v", rate)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	lastGood := 15.0 // no knee: every step held
	if knee > 0 {
		lastGood = float64(5 * knee)
	}
	want := math.Floor(lastGood * 0.8)
	for _, line := range []string{fmt.Sprintf("recommended rate: %.0f/s", want), "adaptive admission", `{"adaptive":true,"minRate":`,
		"PUT /api/admin/rooms/" + target, fmt.Sprintf("applied: room %s admits %.0f/s", target, want)} {
		if !strings.Contains(out.String(), line) {
			t.Fatalf("output lacks %q", line)
		}
	}
	if rate := roomRate(t, srv.base, target); rate != want {
		t.Fatalf("the target room's rate is %v, want the recommended %v", rate, want)
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
