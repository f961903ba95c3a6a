package views

import (
	"math"
	"strconv"
	"time"
)

// AdaptiveLive is the adaptive controller of a room on its dashboard: the
// rate it set, why, its bounds and targets, the rate over the last
// minutes and its recent changes.
type AdaptiveLive struct {
	// Rate is the rate as set now; Reason the last decision's code ("" before
	// the first), taken At.
	Rate   float64
	Reason string
	At     time.Time
	// The room's bounds and targets.
	MinRate, MaxRate float64
	TargetP95Ms      int
	MaxErrorRate     float64
	// OrderCeiling is the room's orderRate when it is below MaxRate and
	// caps the controller (room.Settings.AdaptCeiling); 0 when it does not.
	OrderCeiling float64
	// Chart is the rate over the dashboard's window.
	Chart Chart
	// Changes are the recent changes, newest first.
	Changes []AdaptChangeRow
}

// AdaptChangeRow is one change of the controller: the rate From → To, why,
// and the signal it was decided on.
type AdaptChangeRow struct {
	At        time.Time
	From, To  float64
	Reason    string
	P95Ms     float64
	ErrorRate float64
	Samples   int64
}

// reason says in words why the controller did what it did last.
func (a AdaptiveLive) reason(t DashText) string {
	return t.Adapt.reasonText(a.Reason, a.OrderCeiling, t.Lang)
}

// reasonText is the words of a reason code; hold_max under an order ceiling
// says that the order rate is the ceiling, and an unknown code is named.
func (t AdaptDashText) reasonText(code string, orderCeiling float64, lang string) string {
	if code == "hold_max" && orderCeiling > 0 {
		return Fill(t.OrderCeiling, "n", FormatValue(orderCeiling, UnitRate, lang))
	}
	if s, ok := t.Reasons[code]; ok {
		return s
	}
	return Fill(t.UnknownReason, "code", code)
}

// rate is the rate now, per second.
func (a AdaptiveLive) rate(t DashText) string {
	return Fill(t.Adapt.PerSecond, "n", FormatValue(a.Rate, UnitRate, t.Lang))
}

// bounds says between which rates the controller moves.
func (a AdaptiveLive) bounds(t DashText) string {
	max := FormatValue(a.MaxRate, UnitRate, t.Lang)
	if a.OrderCeiling > 0 {
		max = Fill(t.Adapt.CappedBy, "n", FormatValue(a.OrderCeiling, UnitRate, t.Lang))
	}
	return Fill(Fill(t.Adapt.Bounds, "min", FormatValue(a.MinRate, UnitRate, t.Lang)), "max", max)
}

// targets says the p95 target and the error budget.
func (a AdaptiveLive) targets(t DashText) string {
	return Fill(Fill(t.Adapt.Targets, "p95", FormatValue(float64(a.TargetP95Ms), UnitMillis, t.Lang)), "budget", percent(a.MaxErrorRate))
}

// direction says in words whether a change raised, cut or held the rate
// (the arrow beside it is decoration).
func (c AdaptChangeRow) direction(t DashText) (arrow, word string) {
	switch {
	case c.To > c.From:
		return "↑", t.Adapt.Raised
	case c.To < c.From:
		return "↓", t.Adapt.Cut
	}
	return "→", t.Adapt.Held
}

// rates is the change's "from → to".
func (c AdaptChangeRow) rates(t DashText) string {
	if c.From == c.To {
		return FormatValue(c.To, UnitRate, t.Lang)
	}
	return FormatValue(c.From, UnitRate, t.Lang) + " → " + FormatValue(c.To, UnitRate, t.Lang)
}

// p95 is the change's p95 against the target, "—" without orders.
func (c AdaptChangeRow) p95(a AdaptiveLive, t DashText) string {
	p := "—"
	if c.Samples > 0 {
		p = FormatValue(c.P95Ms, UnitMillis, t.Lang)
	}
	return Fill(Fill(t.Adapt.OfTarget, "v", p), "target", FormatValue(float64(a.TargetP95Ms), UnitMillis, t.Lang))
}

// errors is the change's failure share against the budget, and how many
// orders it was judged on.
func (c AdaptChangeRow) errors(a AdaptiveLive, t DashText) string {
	v := "—"
	if c.Samples > 0 {
		v = percent(c.ErrorRate)
	}
	return Fill(Fill(Fill(t.Adapt.OfBudget, "v", v), "budget", percent(a.MaxErrorRate)), "n", FormatCount(c.Samples))
}

// percent writes a share (0..1) as a percentage with at most one decimal.
func percent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return strconv.FormatFloat(math.Round(v*1000)/10, 'f', -1, 64) + "%"
}
