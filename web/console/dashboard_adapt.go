package console

import (
	"context"
	"math"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
)

// dashAdaptChanges is how many of the controller's changes the dashboard
// lists.
const dashAdaptChanges = 15

// dashboardAdaptive reads the adaptive controller of room name, whose
// settings are set, for the dashboard at now: its last decision, and its
// history (queue.AdaptHistoryLen changes at most) for the rate chart over
// the dashboard's window and the list of recent changes.
func (s *Console) dashboardAdaptive(ctx context.Context, name string, set room.Settings, now time.Time, t views.DashText) (*views.AdaptiveLive, error) {
	a := &views.AdaptiveLive{Rate: set.Rate, MinRate: set.Adapt.MinRate, MaxRate: set.Adapt.MaxRate,
		TargetP95Ms: set.TargetP95Ms, MaxErrorRate: set.MaxErrorRate}
	if c, byOrders := set.AdaptCeiling(); byOrders {
		a.OrderCeiling = c
	}
	a.Chart = views.Chart{ID: "dash-chart-adapt", Name: t.Adapt.RateName, Class: "c-rate", Kind: views.ChartLine, Unit: views.UnitRate}
	ars, err := s.rooms.AdaptRooms(ctx, []string{name})
	if err != nil {
		a.Chart.Values = nanSlots()
		return a, err
	}
	if ar, ok := ars[name]; ok {
		a.Reason, a.At = ar.LastReason, ar.Last
	}
	hist, err := s.rooms.AdaptHistory(ctx, name, queue.AdaptHistoryLen)
	if err != nil {
		a.Chart.Values = nanSlots()
		return a, err
	}
	a.Chart.Values = rateSeries(hist, len(hist) == queue.AdaptHistoryLen, set.Rate, now)
	for _, c := range hist[:min(len(hist), dashAdaptChanges)] {
		a.Changes = append(a.Changes, views.AdaptChangeRow{At: c.At, From: c.From, To: c.To, Reason: clip(c.Reason, 64),
			P95Ms: millis(c.P95), ErrorRate: c.ErrorRate, Samples: c.Samples})
	}
	return a, nil
}

// rateSeries lays the controller's rate on the dashboard window's seconds
// up to now, from its changes (newest first) and the rate now: each second
// has the rate the last change before it set. Before the oldest change the
// rate was that change's From, unless the history is full (the changes
// before it were trimmed): those seconds are unknown (NaN). Without any
// change the rate now is the rate all along; the last second is the rate
// now.
func rateSeries(changes []queue.AdaptChange, full bool, now float64, at time.Time) []float64 {
	v := nanSlots()
	start := at.Truncate(time.Second).Add(-time.Duration(dashSeconds-1) * time.Second)
	i := len(changes) - 1 // the oldest change not yet passed
	rate := now
	if i >= 0 {
		rate = changes[i].From
		if full {
			rate = math.NaN()
		}
	}
	for sec := range v {
		end := start.Add(time.Duration(sec+1) * time.Second)
		for i >= 0 && changes[i].At.Before(end) {
			rate = changes[i].To
			i--
		}
		v[sec] = rate
	}
	v[len(v)-1] = now // the rate as set now, whatever the clocks
	return v
}
