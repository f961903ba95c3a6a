package issuer

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// listObs is a RoomsObserver: it keeps each tick's list of rooms.
type listObs struct {
	countObs
	lists [][]string
}

func (o *listObs) Listed(rooms []string) { o.lists = append(o.lists, slices.Clone(rooms)) }

// TestTickTellsTheRoomsItRuns: an observer that is a RoomsObserver is told
// every tick's rooms, before the tick, so it can forget a deleted room; a
// failed listing tells it nothing (a Redis outage deletes no room).
func TestTickTellsTheRoomsItRuns(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	a, b := servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb)
	for _, name := range []string{a, b} {
		if err := eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	obs := &listObs{}
	New(twoRooms{eng, []string{a, b}}, 0, log, obs).Tick(ctx)
	New(oneRoom{eng, a}, 0, log, obs).Tick(ctx)
	New(failingRooms{eng}, 0, log, obs).Tick(ctx)
	want := [][]string{{a, b}, {a}}
	if !slices.EqualFunc(obs.lists, want, slices.Equal) {
		t.Fatalf("listed %q, want %q", obs.lists, want)
	}
}

type failingRooms struct{ *queue.Engine }

func (failingRooms) Rooms(context.Context) ([]string, error) { return nil, context.DeadlineExceeded }
