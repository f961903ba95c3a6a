package k6

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// AdaptiveSettings are adaptive admission's bounds and target that
// calibrate recommends, as the admin API takes them (with orderRate).
type AdaptiveSettings struct {
	Adaptive    bool    `json:"adaptive"`
	MinRate     float64 `json:"minRate"`
	MaxRate     float64 `json:"maxRate"`
	TargetP95Ms int     `json:"targetP95Ms"`
	// OrderRate is set to MaxRate, so that the order bucket does not cap
	// the controller below it (room.Adapt.Ceiling).
	OrderRate float64 `json:"orderRate"`
}

// AdaptiveRecommendation is AdaptiveSettings and what they were made of.
type AdaptiveRecommendation struct {
	Settings AdaptiveSettings
	// Fixed is the fixed rate Recommend gives; LastGood the last step that
	// held; Knee the first that did not (0 when none did).
	Fixed, LastGood, Knee float64
	// P95AtFixed is the p95 measured at the highest step not above Fixed
	// (the first step when all are above).
	P95AtFixed time.Duration
}

// Rounding and margins of RecommendAdaptive.
const (
	// adaptiveFloorShare is minRate's share of the recommended fixed rate.
	adaptiveFloorShare = 0.5
	// adaptiveNoKneeCeiling is maxRate over the last step when no step
	// broke: the range only gives a lower bound of the knee.
	adaptiveNoKneeCeiling = 1.5
	// targetMargin multiplies the p95 at the fixed rate into the target.
	targetMargin = 2
	// targetRound rounds the target up.
	targetRound = 50 * time.Millisecond
	// maxTargetP95 is the room's highest target (room.MaxTargetP95Ms).
	maxTargetP95 = 60 * time.Second
)

// RecommendAdaptive turns calibrate's step table into adaptive admission's
// settings, from the fixed rate Recommend gives with margin:
//
//   - minRate is half the fixed rate, rounded down (at least 1): the floor
//     the controller cuts to while the shop is unhealthy. It is well
//     inside what held, so the line still moves while the shop recovers,
//     and two cuts (to 70% each) from the fixed rate reach it.
//   - maxRate is the knee's step: the first rate that did not hold. The
//     shop held the step before it; the real knee lies between the two and
//     moves during a sale (caches warm, a provider slows), so the
//     controller may probe up to where calibration saw the shop break, and
//     its latency target cuts it back from there. When no step broke, it
//     is 1.5 times the last step, rounded up: the range gave only a lower
//     bound (calibrate further to know more).
//   - targetP95Ms is twice the p95 measured at the fixed rate (at the
//     highest step not above it), rounded up to 50 ms: a healthy shop
//     stays well under it, one past its knee (whose p95 jumps, by Knee's
//     definition, to five times the steps before and a second more) is
//     well over it.
//
// It returns false when there is no recommendation (the first step
// already broke, or no steps).
func RecommendAdaptive(steps []Step, margin float64) (AdaptiveRecommendation, bool) {
	fixed, lastGood, found := Recommend(steps, margin)
	if fixed <= 0 || len(steps) == 0 {
		return AdaptiveRecommendation{}, false
	}
	r := AdaptiveRecommendation{Fixed: fixed, LastGood: lastGood}
	r.Settings.Adaptive = true
	r.Settings.MinRate = max(1, math.Floor(fixed*adaptiveFloorShare))
	if k := Knee(steps); found && k > 0 {
		r.Knee = steps[k].Target
		r.Settings.MaxRate = r.Knee
	} else {
		r.Settings.MaxRate = math.Ceil(lastGood * adaptiveNoKneeCeiling)
	}
	r.Settings.MaxRate = max(r.Settings.MaxRate, fixed, r.Settings.MinRate)
	r.Settings.OrderRate = r.Settings.MaxRate
	r.P95AtFixed = steps[0].P95
	for _, s := range steps {
		if s.Target <= fixed {
			r.P95AtFixed = s.P95
		}
	}
	target := min(roundUp(r.P95AtFixed*targetMargin, targetRound), maxTargetP95)
	r.Settings.TargetP95Ms = int(max(target, targetRound) / time.Millisecond)
	return r, true
}

// roundUp rounds d up to a multiple of m.
func roundUp(d, m time.Duration) time.Duration {
	return (d + m - 1) / m * m
}

// JSON is the body of the admin API's PUT /api/admin/rooms/{room} that
// sets the recommendation.
func (s AdaptiveSettings) JSON() string {
	b, _ := json.Marshal(s) // numbers and a bool: cannot fail
	return string(b)
}

// FormatAdaptive says the recommendation, why, and the admin API request
// that sets it on room.
func FormatAdaptive(r AdaptiveRecommendation, room string) string {
	s := r.Settings
	maxWhy := fmt.Sprintf("the knee's step: the first rate that did not hold, %.0f/s held", r.LastGood)
	if r.Knee == 0 {
		maxWhy = fmt.Sprintf("no knee up to %.0f/s: 1.5 times the last step", r.LastGood)
	}
	return fmt.Sprintf(`adaptive admission (the online twin of this table):
  minRate     %g/s  half the recommended fixed rate (%g/s): the floor while the shop is unhealthy
  maxRate     %g/s  %s
  targetP95Ms %d    twice the p95 at %g/s (%v), rounded up to 50 ms
  orderRate   %g/s  = maxRate, so that the order bucket does not cap the controller below it
set it with the admin API:
  PUT /api/admin/rooms/%s   (Authorization: Bearer <admin token>, Content-Type: application/json)
  %s
`, s.MinRate, r.Fixed, s.MaxRate, maxWhy, s.TargetP95Ms, r.Fixed, r.P95AtFixed.Round(time.Millisecond), s.OrderRate, room, s.JSON())
}
