package k6

import (
	"context"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

// TestPowBot: the bot's identities from one /64 each solve the room's
// challenge, and every place it reports is a ticket the room gave.
func TestPowBot(t *testing.T) {
	room := &challengeRoom{challenge: true, number: 300}
	srv := httptest.NewServer(room.handler(t))
	defer srv.Close()
	net := netip.MustParsePrefix("2001:db8:aa:bb::/64")
	rep, err := PowBot{URL: srv.URL, Room: "sale", Workers: 2, Duration: 300 * time.Millisecond, Source: SourceV6, Net: net}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Placed == 0 || rep.Placed != rep.Attempts || rep.Challenged != rep.Attempts || rep.Hashes != 301*rep.Challenged ||
		int64(len(rep.Tickets)) != rep.Placed || len(rep.Refused) != 0 || rep.CPU <= 0 || rep.PerCPUSecond() <= 0 {
		t.Fatalf("report %+v", rep)
	}
	seen := map[string]bool{}
	room.mu.Lock()
	defer room.mu.Unlock()
	for _, f := range room.forwarded {
		a, err := netip.ParseAddr(f)
		if err != nil || !net.Contains(a) {
			t.Fatalf("X-Forwarded-For %q is not in %v", f, net)
		}
		seen[f] = true
	}
	if len(seen) < int(rep.Attempts) {
		t.Errorf("%d addresses for %d identities", len(seen), rep.Attempts)
	}
}

func TestPowBotValidate(t *testing.T) {
	good := PowBot{URL: "http://127.0.0.1:1", Room: "r", Workers: 1, Duration: time.Second, Source: SourceOne}
	for name, b := range map[string]PowBot{
		"not loopback":   {URL: "http://192.0.2.1", Room: "r", Workers: 1, Duration: time.Second, Source: SourceOne},
		"no workers":     {URL: good.URL, Room: "r", Duration: time.Second, Source: SourceOne},
		"unbounded":      {URL: good.URL, Room: "r", Workers: 1, Source: SourceOne},
		"another source": {URL: good.URL, Room: "r", Workers: 1, Duration: time.Second, Source: "v4-24"},
		"not a /64":      {URL: good.URL, Room: "r", Workers: 1, Duration: time.Second, Source: SourceV6, Net: netip.MustParsePrefix("2001:db8::/48")},
	} {
		if err := b.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
}
