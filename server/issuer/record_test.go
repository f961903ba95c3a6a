package issuer

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"waitingroom/server/livestats"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// TestTickIsRecorded runs one tick with a livestats Recorder hooked in and
// reads the second back: the line, the active passes, the admissions and
// the rate as set.
func TestTickIsRecorded(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	ns := queue.DefaultNamespace(rdb)
	eng := queue.New(rdb, ns)
	name := servicetest.RoomName(t, rdb)
	s := room.Defaults(name)
	s.Rate = 3
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	eng.Admit(ctx, name, time.Second, nil) // start the rate clock
	for range 10 {
		id, _ := visitor.NewID()
		if _, err := eng.Enter(ctx, name, id); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond) // credit for 3
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := livestats.NewRecorder(rdb, ns, "test", nil, log)
	start := time.Now()
	New(oneRoom{eng, name}, time.Second, log, nil).Record(rec).Tick(ctx)
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	series, err := livestats.NewReader(rdb, ns).Series(ctx, name, start.Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got []livestats.Second
	for _, sec := range series {
		if sec.Admitted > 0 || sec.Waiting > 0 {
			got = append(got, sec)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d seconds recorded, want 1: %+v", len(got), series)
	}
	if g := got[0]; g.Admitted != 3 || g.Waiting != 7 || g.Active != 3 || g.Rate != 3 || g.Prequeued != 0 {
		t.Fatalf("recorded %+v, want 3 admitted, 7 waiting, 3 active at rate 3", g)
	}
}
