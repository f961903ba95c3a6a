package e2e

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"waitingroom/server/livestats"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestLiveStatsAreWired runs the real server: a visitor joins by a
// campaign link and is admitted, an order without a pass fails, and the
// live series, the instance list and the attribution show all of it.
func TestLiveStatsAreWired(t *testing.T) {
	base, eng, rdb := startServer(t, 100*time.Millisecond)
	ctx := context.Background()
	name := servicetest.RoomName(t, rdb)
	s := room.Defaults(name)
	s.Rate = 100
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	p := getPosition(t, c, "POST", base+"/api/rooms/"+name+"/queue?utm_source=news&utm_medium=email&utm_campaign=launch")
	for deadline := time.Now().Add(5 * time.Second); p.Status != "READY" && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		p = getPosition(t, c, "GET", base+"/api/rooms/"+name+"/queue/position")
	}
	if p.Status != "READY" {
		t.Fatalf("never admitted: %+v", p)
	}
	// The visitor's cookie with someone else's pass: the order path fails.
	req, _ := http.NewRequest("POST", base+"/api/rooms/"+name+"/orders", strings.NewReader(`{"quantity":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Entry-Token", strings.Repeat("A", 43))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("an order with a wrong pass: %d", resp.StatusCode)
	}

	rd := livestats.NewReader(rdb, eng.Namespace())
	var admitted, failed int64
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		series, err := rd.Series(ctx, name, start.Add(-time.Second))
		if err != nil {
			t.Fatal(err)
		}
		admitted, failed = 0, 0
		for _, sec := range series {
			admitted += sec.Admitted
			failed += sec.Failed["token_invalid"]
		}
		if admitted == 1 && failed == 1 {
			break
		}
	}
	if admitted != 1 || failed != 1 {
		t.Fatalf("series: %d admitted, %d orders with a wrong pass; want 1 and 1", admitted, failed)
	}
	ins, err := rd.Instances(ctx)
	if err != nil || len(ins) == 0 {
		t.Fatalf("instances %+v %v, want this server", ins, err)
	}
	got, err := eng.Attribution(ctx, name)
	want := queue.CampaignCount{Campaign: queue.Campaign{Source: "news", Medium: "email", Campaign: "launch"}, Joined: 1, Admitted: 1}
	if err != nil || len(got) != 1 || got[0] != want {
		t.Fatalf("attribution %+v %v, want %+v", got, err, want)
	}
}
