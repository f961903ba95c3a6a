package views

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/salelog"
)

// TestEveryPhaseHasALabel: the dashboard names each phase of the queue in
// both languages.
func TestEveryPhaseHasALabel(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		d := DashTextFor(lang)
		for _, ph := range []string{queue.PhaseScheduled, queue.PhasePrequeue, queue.PhaseOpen, queue.PhaseClosed} {
			if d.Phases[ph] == "" {
				t.Errorf("%s: no label for phase %s", lang, ph)
			}
		}
		if len(d.Phases) != 4 || d.Phase == "" {
			t.Errorf("%s: phases %v", lang, d.Phases)
		}
	}
}

// TestEveryEventHasALabel: every sale event (salelog.Events, which its
// own test keeps complete) is named in the timeline in both languages.
func TestEveryEventHasALabel(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		d := DashTextFor(lang)
		for _, ev := range salelog.Events {
			a := salelog.Action(ev)
			if label := d.Events[a]; label == "" || label == a {
				t.Errorf("%s: no label for %s", lang, a)
			}
		}
	}
}

// TestIssuerFailuresAreSaid: the fragment says the issuers' failures, in
// the operator's zone, and nothing when there were none.
func TestIssuerFailuresAreSaid(t *testing.T) {
	at := time.Date(2026, 11, 30, 18, 0, 5, 0, time.UTC)
	seoul := time.FixedZone("KST", 9*60*60)
	for _, tc := range []struct {
		lang string
		n    int64
		want string
	}{
		{"en", 3, "failed 3 times in the last 10 minutes, the last at 12-01 03:00:05 UTC+09:00"},
		{"ko", 3, "3번 실패했습니다. 마지막: 12-01 03:00:05 UTC+09:00"},
		{"en", 0, ""},
	} {
		var b strings.Builder
		l := DashboardLive{At: at, Loc: seoul, Phase: queue.PhaseOpen, IssuerFailed: tc.n, IssuerFailedAt: at, P50: math.NaN(), P95: math.NaN()}
		if err := DashboardLiveView(l, DashTextFor(tc.lang)).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(b.String(), `id="dash-issuer-failed"`)
		if tc.want == "" {
			if has {
				t.Errorf("%s: failures said without any", tc.lang)
			}
			continue
		}
		if !has || !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s: the fragment lacks %q", tc.lang, tc.want)
		}
	}
}

// TestFlaggedNetworksAreSaid: the fragment lists the flagged pre-queue
// networks, each marked in words, says when none is, and says nothing of
// networks in a room without a pre-queue.
func TestFlaggedNetworksAreSaid(t *testing.T) {
	at := time.Date(2026, 11, 30, 18, 0, 5, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		lang    string
		nets    bool
		flagged []NetworkRow
		want    []string
		not     []string
	}{
		{"no pre-queue", "en", false, nil, nil, []string{"dash-networks", "dash-flagged"}},
		{"none flagged", "en", true, nil, []string{`id="dash-networks-none"`, "No network is flagged.", "from 50 pre-queue joins on"}, []string{"dash-flagged", `id="dash-networks"`}},
		{"none flagged ko", "ko", true, nil, []string{"표시된 네트워크가 없습니다.", "50건 이상"}, []string{"dash-flagged"}},
		{"two flagged", "en", true, []NetworkRow{{"10.1.1.0/24", 1200}, {"2001:db8::/64", 50}},
			[]string{"Networks flagged: 2", `<th scope="row">10.1.1.0/24 <span class="dash-badge dash-warn"><span aria-hidden="true">⚑ </span>Flagged</span></th><td>1,200</td>`, "2001:db8::/64"},
			[]string{"dash-networks-none"}},
		{"one flagged ko", "ko", true, []NetworkRow{{"10.1.1.0/24", 70}}, []string{"주의 네트워크 1개", ">주의</span>"}, nil},
	} {
		var b strings.Builder
		l := DashboardLive{At: at, Phase: queue.PhasePrequeue, Networks: tc.nets, Flagged: tc.flagged, FlagJoins: 50, P50: math.NaN(), P95: math.NaN()}
		if err := DashboardLiveView(l, DashTextFor(tc.lang)).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the fragment lacks %s", tc.name, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("%s: the fragment has %s", tc.name, n)
			}
		}
	}
}
