package web

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/room"
)

// flakyRooms is a room store whose list of names is scripted: it blocks
// until release is closed (when set), fails while fail is set, and counts
// the scans.
type flakyRooms struct {
	roomStore
	names   []string
	release chan struct{}
	fail    atomic.Bool
	scans   atomic.Int64
	reads   atomic.Int64 // calls reading rooms' settings
}

func (f *flakyRooms) Room(ctx context.Context, name string) (room.Settings, error) {
	f.reads.Add(1)
	return f.roomStore.Room(ctx, name)
}

func (f *flakyRooms) RoomsSettings(ctx context.Context, names []string) (map[string]room.Settings, error) {
	f.reads.Add(1)
	return f.roomStore.RoomsSettings(ctx, names)
}

func (f *flakyRooms) Rooms(ctx context.Context) ([]string, error) {
	f.scans.Add(1)
	if f.release != nil {
		<-f.release // a store that does not heed ctx
	}
	if f.fail.Load() {
		return nil, errors.New("redis is away")
	}
	return f.names, nil
}

// TestFrontPageScans: a request waits on another's scan only as long as
// its own context allows; a failed scan serves the last good list, and is
// remembered a few seconds, so that a failing store is not scanned per
// request.
func TestFrontPageScans(t *testing.T) {
	base := newHarness(t, nil)
	set := room.Defaults(base.room)
	set.Listed = true
	if err := base.eng.SaveRoom(context.Background(), base.room, set); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, h *harness, f *flakyRooms, clock *time.Time)
	}{
		{"settings are read a hundred rooms a round trip", func(t *testing.T, h *harness, f *flakyRooms, _ *time.Time) {
			f.names = nil
			for i := range 250 {
				f.names = append(f.names, fmt.Sprintf("%s-gone-%03d", base.room, i)) // unknown rooms
			}
			f.names = append(f.names, base.room)
			rooms, err := h.web.listed(context.Background())
			if err != nil || len(rooms) != 1 || rooms[0].name != base.room {
				t.Fatalf("%v %v, want the listed room", rooms, err)
			}
			if n := f.reads.Load(); n != 3 {
				t.Errorf("%d reads of settings, want 3", n)
			}
		}},
		{"a waiting request heeds its context", func(t *testing.T, h *harness, f *flakyRooms, _ *time.Time) {
			f.release = make(chan struct{})
			defer close(f.release)
			go h.web.listed(context.Background()) // holds the scan
			for f.scans.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			if _, err := h.web.listed(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err %v, want the request's deadline", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("waited %v past its deadline", d)
			}
		}},
		{"a failed refresh serves the last list", func(t *testing.T, h *harness, f *flakyRooms, clock *time.Time) {
			if rooms, err := h.web.listed(context.Background()); err != nil || len(rooms) != 1 {
				t.Fatalf("%v %v", rooms, err)
			}
			f.fail.Store(true)
			*clock = clock.Add(homeTTL)
			if rooms, err := h.web.listed(context.Background()); err != nil || len(rooms) != 1 || rooms[0].name != base.room {
				t.Fatalf("%v %v, want the last list", rooms, err)
			}
		}},
		{"a failure is remembered a while", func(t *testing.T, h *harness, f *flakyRooms, clock *time.Time) {
			f.fail.Store(true)
			for range 10 {
				if _, err := h.web.listed(context.Background()); err == nil {
					t.Fatal("no error from a failing store")
				}
			}
			if n := f.scans.Load(); n != 1 {
				t.Errorf("%d scans, want 1", n)
			}
			*clock = clock.Add(homeFailTTL)
			f.fail.Store(false)
			if rooms, err := h.web.listed(context.Background()); err != nil || len(rooms) != 1 || f.scans.Load() != 2 {
				t.Errorf("%v %v after %d scans: the failure was not forgotten", rooms, err, f.scans.Load())
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f *flakyRooms
			h := newHarness(t, func(o *Options) {
				f = &flakyRooms{roomStore: o.Rooms, names: []string{base.room}}
				o.Rooms = f
			})
			clock := time.Now()
			h.web.front.now = func() time.Time { return clock }
			tt.run(t, h, f, &clock)
		})
	}
}
