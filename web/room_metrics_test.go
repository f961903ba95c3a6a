package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"waitingroom/server/issuer"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/server/servicetest"
)

// ownRooms narrows the engine's list of rooms to this test's, so that
// parallel tests sharing the Redis database do not show up; a deleted
// room drops out of the list as it does in production.
type ownRooms struct {
	*queue.Engine
	names []string
}

func (o ownRooms) Rooms(ctx context.Context) ([]string, error) {
	all, err := o.Engine.Rooms(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(n string) bool { return !slices.Contains(o.names, n) }), nil
}

// TestRoomStateGauges runs the real issuer over real rooms: each room's
// paused, sold-out and phase gauges follow its state, and a deleted room's
// series all go at the next tick.
func TestRoomStateGauges(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	open, paused, soldOut, later := servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb)
	opens := time.Now().Add(time.Hour)
	for name, mut := range map[string]func(*room.Settings){
		open:    func(*room.Settings) {},
		paused:  func(s *room.Settings) { s.Paused = true },
		soldOut: func(*room.Settings) {},
		later:   func(s *room.Settings) { s.OpensAt = &opens },
	} {
		s := room.Defaults(name)
		mut(&s)
		if err := eng.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.SetSoldOut(ctx, soldOut, true); err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	loop := issuer.New(ownRooms{eng, []string{open, paused, soldOut, later}}, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	loop.Tick(ctx)

	tests := []struct {
		room            string
		paused, soldOut float64
		phase           string
	}{
		{open, 0, 0, queue.PhaseOpen},
		{paused, 1, 0, queue.PhaseOpen},
		{soldOut, 0, 1, queue.PhaseOpen},
		{later, 0, 0, queue.PhaseScheduled},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(m.RoomPaused.WithLabelValues(tt.room)); got != tt.paused {
			t.Errorf("%s: waitingroom_room_paused = %v, want %v", tt.room, got, tt.paused)
		}
		if got := testutil.ToFloat64(m.RoomSoldOut.WithLabelValues(tt.room)); got != tt.soldOut {
			t.Errorf("%s: waitingroom_room_sold_out = %v, want %v", tt.room, got, tt.soldOut)
		}
		for _, ph := range roomPhases {
			want := 0.0
			if ph == tt.phase {
				want = 1
			}
			if got := testutil.ToFloat64(m.RoomPhase.WithLabelValues(tt.room, ph)); got != want {
				t.Errorf("%s: waitingroom_room_phase{phase=%q} = %v, want %v", tt.room, ph, got, want)
			}
		}
	}

	// Deleting a room drops every series of it at the next tick.
	m.ObserveOrder(paused, OrderPlaced, time.Millisecond)
	if _, err := eng.DeleteRoom(ctx, paused); err != nil {
		t.Fatal(err)
	}
	loop.Tick(ctx)
	for name, n := range map[string]int{
		"waitingroom_waiting": testutil.CollectAndCount(m.Waiting), "waitingroom_active_slots": testutil.CollectAndCount(m.Active),
		"waitingroom_admitted_total": testutil.CollectAndCount(m.Admitted), "waitingroom_departures": testutil.CollectAndCount(m.Departures) / 3,
		"waitingroom_room_paused": testutil.CollectAndCount(m.RoomPaused), "waitingroom_room_sold_out": testutil.CollectAndCount(m.RoomSoldOut),
		"waitingroom_room_phase": testutil.CollectAndCount(m.RoomPhase) / len(roomPhases),
	} {
		if n != 3 {
			t.Errorf("%s has %d rooms after deleting one of 4, want 3", name, n)
		}
	}
	if n := testutil.CollectAndCount(m.OrdersPlaced) + testutil.CollectAndCount(m.OrderDuration); n != 0 {
		t.Errorf("the deleted room kept %d order series", n)
	}
}

// fixedReady is a readiness check with a fixed report.
type fixedReady roomsync.Report

func (f fixedReady) Check(context.Context) roomsync.Report { return roomsync.Report(f) }

// TestUpGauges: waitingroom_redis_up and waitingroom_db_up report the
// readiness check at scrape time; without a database check (Options.Ready
// unset) only Redis is reported, from Health against real Redis.
func TestUpGauges(t *testing.T) {
	down := errors.New("down")
	tests := []struct {
		name      string
		mut       func(*Options)
		redis, db float64
		reportsDB bool
	}{
		{"health, Redis answers", nil, 1, 0, false},
		{"health, Redis down", func(o *Options) { o.Health = func(context.Context) error { return down } }, 0, 0, false},
		{"ready", func(o *Options) {
			o.Ready = fixedReady{Ready: true, Checks: map[string]string{roomsync.CheckRedis: roomsync.OK, roomsync.CheckDatabase: roomsync.OK}}
		}, 1, 1, true},
		{"database unreachable", func(o *Options) {
			o.Ready = fixedReady{Checks: map[string]string{roomsync.CheckRedis: roomsync.OK, roomsync.CheckDatabase: roomsync.Unreachable}}
		}, 1, 0, true},
		{"database migrating, Redis down", func(o *Options) {
			o.Ready = fixedReady{Checks: map[string]string{roomsync.CheckRedis: roomsync.Unreachable, roomsync.CheckDatabase: roomsync.Migrating}}
		}, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.mut)
			got := map[string]float64{}
			mfs, err := h.web.metrics.Registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				if n := mf.GetName(); n == "waitingroom_redis_up" || n == "waitingroom_db_up" {
					got[n] = mf.GetMetric()[0].GetGauge().GetValue()
				}
			}
			if v, ok := got["waitingroom_redis_up"]; !ok || v != tt.redis {
				t.Errorf("waitingroom_redis_up = %v (reported %v), want %v", v, ok, tt.redis)
			}
			if v, ok := got["waitingroom_db_up"]; ok != tt.reportsDB || v != tt.db {
				t.Errorf("waitingroom_db_up = %v (reported %v), want %v (reported %v)", v, ok, tt.db, tt.reportsDB)
			}
		})
	}
}
