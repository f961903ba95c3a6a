package k6

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestNATCrowd: every buyer joins, from one address without
// X-Forwarded-For, and the phone-equivalent time is the hashes over the
// assumed rate.
func TestNATCrowd(t *testing.T) {
	room := &challengeRoom{challenge: true, number: 999}
	srv := httptest.NewServer(room.handler(t))
	defer srv.Close()
	rep, err := NATCrowd{URL: srv.URL, Room: "sale", N: 20, Window: 200 * time.Millisecond, Timeout: 10 * time.Second,
		PhoneHPS: 1000, Expiry: 500 * time.Millisecond}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	if rep.Challenged != 20 || len(rep.Wall) != 20 || Percentile(rep.Phone, 50) != time.Second || PercentileInt(rep.MaxNumber, 95) != 5000 || rep.OverExpiry != 20 {
		t.Fatalf("report %+v", rep)
	}
	for _, f := range room.forwarded {
		if f != "" {
			t.Fatalf("a buyer sent X-Forwarded-For %q", f)
		}
	}
	if s := rep.String(); !strings.Contains(s, "20 joined") || !strings.Contains(s, "phone-equivalent (hashes / 1000 hashes/s): p50 1000 ms") {
		t.Fatalf("report:\n%s", s)
	}
	room.refuse = "challenge_used"
	rep, _ = NATCrowd{URL: srv.URL, Room: "sale", N: 3, Window: time.Millisecond, Timeout: 10 * time.Second, PhoneHPS: 1000}.Run(context.Background())
	if err := rep.Check(); err == nil || !strings.Contains(err.Error(), "428 challenge_used × 3") {
		t.Fatalf("a refused crowd: %v", err)
	}
}
