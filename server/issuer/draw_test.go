package issuer

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"waitingroom/server/draw"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// TestIssuersDriveTheDraw: three issuer loops on one room past its opening
// draw the pre-queue once, and then admit in the drawn order.
func TestIssuersDriveTheDraw(t *testing.T) {
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	s := room.Defaults(name)
	s.Rate = 1000
	pre, open := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	s.PrequeueAt, s.OpensAt = &pre, &open
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	var byTicket []string
	var tickets []int64
	for range 30 {
		id, _ := visitor.NewID()
		p, err := eng.Enter(ctx, name, id)
		if err != nil || p.Status != queue.StatusPrequeued {
			t.Fatalf("enter: %+v %v", p, err)
		}
		byTicket, tickets = append(byTicket, id), append(tickets, p.Ticket)
	}
	info, err := eng.DrawInfo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s.OpensAt = &now
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	obs := &orderObs{}
	loops := make([]*Loop, 3)
	for i := range loops {
		loops[i] = New(oneRoom{queue.New(rdb, queue.DefaultNamespace(rdb)), name}, 100*time.Millisecond, log, obs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(obs.admitted) < len(byTicket) && time.Now().Before(deadline) {
		for _, l := range loops {
			l.Tick(ctx) // the loops tick one after the other: obs needs no lock
		}
		time.Sleep(50 * time.Millisecond)
	}
	admitted := obs.admitted
	for _, l := range loops {
		l.wg.Wait()
	}
	done, err := eng.DrawInfo(ctx, name)
	if err != nil || !done.Done || done.Commitment != info.Commitment {
		t.Fatalf("draw info %+v %v", done, err)
	}
	seed, _ := hex.DecodeString(done.Seed)
	var want []string
	for _, j := range draw.Order(seed, tickets) {
		want = append(want, byTicket[j])
	}
	if !slices.Equal(admitted, want) {
		t.Fatalf("admitted %v, want the drawn order %v", admitted, want)
	}
}

type orderObs struct{ admitted []string }

func (o *orderObs) Ticked(_ string, a queue.Admission, _ time.Duration, _ error) {
	o.admitted = append(o.admitted, a.Visitors...)
}
