package console

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"waitingroom/server/audit"
	"waitingroom/server/livestats"
	"waitingroom/views"
)

func TestSummarize(t *testing.T) {
	now := time.Date(2026, 11, 30, 18, 0, 0, 400e6, time.UTC)
	sec := func(ago int, admitted, placed int64, p95 time.Duration, failed map[string]int64) livestats.Second {
		return livestats.Second{At: now.Truncate(time.Second).Add(-time.Duration(ago) * time.Second), Admitted: admitted, Placed: placed,
			P50: p95 / 2, P95: p95, Failed: failed}
	}
	tests := []struct {
		name             string
		series           []livestats.Second
		measured         bool
		admitted, orders float64
		p95              float64
		failures         views.Failures
	}{
		{"nothing", nil, false, 0, 0, math.NaN(), views.Failures{}},
		{"the current second is still counting", []livestats.Second{sec(0, 100, 100, 0, nil)}, false, 0, 0, math.NaN(), views.Failures{}},
		{"mean of the recorded seconds", []livestats.Second{sec(1, 4, 1, 0, nil), sec(2, 2, 3, 0, nil), sec(11, 100, 100, 0, nil)}, true, 3, 2, math.NaN(), views.Failures{}},
		{"latest latency of the last minute", []livestats.Second{sec(30, 0, 1, 80*time.Millisecond, nil), sec(5, 0, 1, 40*time.Millisecond, nil), sec(61, 0, 1, time.Second, nil)}, true, 0, 1, 40, views.Failures{}},
		{"older than a minute is no latency", []livestats.Second{sec(61, 0, 1, time.Second, nil)}, false, 0, 0, math.NaN(), views.Failures{}},
		{"failures by answer, over the window", []livestats.Second{
			sec(300, 0, 0, 0, map[string]int64{"token_missing": 1, "token_invalid": 1, "token_in_use": 2, "weird": 1, "placed": 9}),
			sec(3, 0, 0, 0, map[string]int64{"rate_limited": 3, "sold_out": 4, "unavailable": 5, "bad_order": 1, "other": -7}),
			sec(601, 0, 0, 0, map[string]int64{"sold_out": 100}),
		}, true, 0, 0, math.NaN(), views.Failures{Unauthorized: 2, Conflict: 2, TooFast: 3, SoldOut: 4, Unavailable: 5, Other: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(tt.series, now)
			if got.measured != tt.measured || got.admitted != tt.admitted || got.orders != tt.orders || got.failures != tt.failures {
				t.Errorf("got %+v", got)
			}
			if !(got.p95 == tt.p95 || math.IsNaN(got.p95) && math.IsNaN(tt.p95)) {
				t.Errorf("p95 %v, want %v", got.p95, tt.p95)
			}
		})
	}
}

func TestLastInLineETA(t *testing.T) {
	tests := []struct {
		waiting int64
		rate    float64
		paused  bool
		want    int64 // -1: no estimate
	}{
		{0, 0, false, 0},
		{0, 5, true, -1},
		{10, 0, false, -1},
		{10, math.NaN(), false, -1},
		{10, 5, true, -1},
		{10, 5, false, 2},
		{11, 5, false, 3},
	}
	for _, tt := range tests {
		got := lastInLineETA(tt.waiting, tt.rate, tt.paused)
		if (got == nil) != (tt.want < 0) || got != nil && *got != tt.want {
			t.Errorf("lastInLineETA(%d, %v, %v) = %v, want %d", tt.waiting, tt.rate, tt.paused, got, tt.want)
		}
	}
}

// TestTimelineKeepsTheLast20: of many sale events, the newest 20.
func TestTimelineKeepsTheLast20(t *testing.T) {
	var f fakeEvents
	for i := 60; i >= 1; i-- {
		f.entries = append(f.entries, audit.Entry{ID: int64(i), Room: "r", Action: "sale.paused", New: strings.Repeat("가", 500)})
	}
	items, err := timeline(context.Background(), &f, "r", "en")
	if err != nil || len(items) != timelineLen {
		t.Fatalf("%d items, %v", len(items), err)
	}
	if n := len([]rune(items[0].New)); n != timelineValue {
		t.Errorf("a value of %d characters, want it cut to %d", n, timelineValue)
	}
}

// TestTimelineSettingsChanges: a settings change reads as the audit log
// reads it, field by field (old → new), never as raw JSON; other values
// stay as they are.
func TestTimelineSettingsChanges(t *testing.T) {
	f := fakeEvents{entries: []audit.Entry{
		{ID: 3, Room: "r", Action: "room.update", Old: `{"rate":5,"title":"Drop"}`, New: `{"rate":8,"title":"Drop"}`},
		{ID: 2, Room: "r", Action: "sale.rate", Old: "5", New: "8"},
		{ID: 1, Room: "r", Action: "room.update", Old: `{"paused":false}`, New: `{"paused":true}`},
	}}
	items, err := timeline(context.Background(), &f, "r", "en")
	if err != nil || len(items) != 3 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	for i, want := range []struct {
		old, new string
		changes  []views.TimelineChange
	}{
		{"", "", []views.TimelineChange{{Field: "rate", Old: "5", New: "8"}}},
		{"5", "8", nil},
		{"", "", []views.TimelineChange{{Field: "paused", Old: "false", New: "true"}}},
	} {
		it := items[i]
		if it.Old != want.old || it.New != want.new || !slices.Equal(it.Changes, want.changes) {
			t.Errorf("item %d: old %q new %q changes %+v; want %q %q %+v", i, it.Old, it.New, it.Changes, want.old, want.new, want.changes)
		}
	}
}

func TestHoldGauge(t *testing.T) {
	n := math.NaN()
	tests := []struct {
		name     string
		in, want []float64
	}{
		{"nothing recorded", []float64{n, n}, []float64{n, n}},
		{"held until the next tick", []float64{n, 5, n, n, 7, n}, []float64{n, 5, 5, 5, 7, 7}},
		{"for at most hold seconds", []float64{3, n, n, n, n}, []float64{3, 3, 3, n, n}},
	}
	for _, tt := range tests {
		v := append([]float64(nil), tt.in...)
		holdGauge(v, 2)
		for i := range v {
			if !(v[i] == tt.want[i] || math.IsNaN(v[i]) && math.IsNaN(tt.want[i])) {
				t.Errorf("%s: %v, want %v", tt.name, v, tt.want)
				break
			}
		}
	}
}

// TestSummarizeIssuerFailures: the issuers' failures of the window add up,
// with the last second that had one; older ones are left out.
func TestSummarizeIssuerFailures(t *testing.T) {
	now := time.Date(2026, 11, 30, 18, 0, 0, 400e6, time.UTC)
	sec := func(ago int, n int64) livestats.Second {
		return livestats.Second{At: now.Truncate(time.Second).Add(-time.Duration(ago) * time.Second), IssuerFailed: n}
	}
	got := summarize([]livestats.Second{sec(601, 50), sec(300, 2), sec(10, 1), sec(5, 0)}, now)
	if got.issuerFailed != 3 || !got.issuerFailedAt.Equal(sec(10, 0).At) {
		t.Fatalf("%d failures, last at %v", got.issuerFailed, got.issuerFailedAt)
	}
	if got := summarize([]livestats.Second{sec(3, 0)}, now); got.issuerFailed != 0 || !got.issuerFailedAt.IsZero() {
		t.Fatalf("failures without any: %+v", got)
	}
}

// TestLastGoodCache: the time of each room's figures' last good reading,
// a room's figures apart, bounded by forgetting the room read least
// recently.
func TestLastGoodCache(t *testing.T) {
	var c lastGoodCache
	t0 := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		put       bool
		room, fig string
		at        time.Time
	}{
		{true, "a", views.FigLine, t0},
		{true, "a", views.FigSeries, t0.Add(time.Second)},
		{true, "b", views.FigLine, t0.Add(2 * time.Second)},
		{false, "a", views.FigLine, t0},
		{false, "a", views.FigSeries, t0.Add(time.Second)},
		{false, "a", views.FigStock, time.Time{}}, // never read
		{false, "c", views.FigLine, time.Time{}},
	} {
		if step.put {
			c.put(step.room, step.fig, step.at)
			continue
		}
		if got := c.get(step.room, step.fig); !got.Equal(step.at) {
			t.Errorf("%s %s: %v, want %v", step.room, step.fig, got, step.at)
		}
	}
	for i := range maxLastGood + 5 {
		c.put("r"+strconv.Itoa(i), views.FigLine, t0.Add(time.Hour+time.Duration(i)*time.Second))
	}
	if len(c.m) != maxLastGood {
		t.Fatalf("%d rooms kept, want %d", len(c.m), maxLastGood)
	}
	if !c.get("a", views.FigLine).IsZero() || c.get("r"+strconv.Itoa(maxLastGood+4), views.FigLine).IsZero() {
		t.Error("the cache forgot a recent room before the oldest")
	}
}

// fakeEvents is an audit log of entries, newest first, paged by id.
type fakeEvents struct{ entries []audit.Entry }

func (f *fakeEvents) List(_ context.Context, flt audit.Filter) ([]audit.Entry, error) {
	var out []audit.Entry
	for _, e := range f.entries {
		if e.Room == flt.Room && (flt.Before == 0 || e.ID < flt.Before) && len(out) < flt.Limit {
			out = append(out, e)
		}
	}
	return out, nil
}
