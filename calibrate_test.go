package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"waitingroom/server/servicetest"
)

// TestCalibrateSmoke runs the calibration tool briefly against a real
// server: three short steps, then -apply sets the recommended rate.
func TestCalibrateSmoke(t *testing.T) {
	const admin = "calibrate-admin-token-0123456789ab"
	base, eng, rdb := startServer(t, 200*time.Millisecond, "-admin-token", admin)
	calib := servicetest.RoomName(t, rdb)
	target := servicetest.RoomName(t, rdb)
	addProduct(t, "warm-up-"+calib, "x", 1, 1) // waits for the migrations
	var out bytes.Buffer
	err := calibrateCommand(context.Background(), []string{"-url", base, "-calib-room", calib, "-room", target,
		"-from", "5", "-to", "15", "-by", "5", "-duration", "1500ms", "-warmup", "300ms", "-source-ips", "2",
		"-admin-token", admin, "-database-url", dbs[0], "-apply"}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 5 |", "| 10 |", "| 15 |", "recommended rate: 12/s", "applied: room " + target} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q", want)
		}
	}
	set, err := eng.Room(context.Background(), target)
	if err != nil || set.Rate != 12 {
		t.Fatalf("the target room's rate is %v (%v), want the recommended 12", set.Rate, err)
	}
}
