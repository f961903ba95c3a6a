package room

import (
	"net/url"
	"strings"
	"unicode"

	"waitingroom/server/egress"
)

// Adapt is adaptive admission: when Adaptive is on, a
// controller (server/adapt) moves the room's Rate between MinRate and
// MaxRate from the order path's health: up by a step while the order p95
// is under TargetP95Ms and the failures under MaxErrorRate and the line is
// long, down by a factor when either is over. Off, Rate is the operator's.
type Adapt struct {
	// Adaptive lets the controller set Rate. A manual change of Rate turns
	// it off (see Patch.Apply): the operator wins until they turn it on
	// again.
	Adaptive bool `json:"adaptive"`
	// MinRate is the lowest rate the controller sets; 0 is allowed and
	// pauses admission while the shop is unhealthy.
	MinRate float64 `json:"minRate"`
	// MaxRate is the highest rate the controller sets.
	MaxRate float64 `json:"maxRate"`
	// TargetP95Ms is the order latency's p95 the controller keeps under.
	TargetP95Ms int `json:"targetP95Ms"`
	// MaxErrorRate is the share of failed orders (0..1) the controller
	// tolerates; more cuts the rate.
	MaxErrorRate float64 `json:"maxErrorRate"`
	// HealthURL, optional, is the shop's own load figure, polled about
	// once a second (a JSON object's numeric "load", or a Prometheus
	// gauge load or waitingroom_load): 1 or more cuts the rate, and no
	// answer freezes it. "" polls nothing.
	HealthURL string `json:"healthURL"`
}

// Limits and defaults of adaptive admission.
const (
	MaxTargetP95Ms      = 60000
	DefaultMinRate      = 5
	DefaultMaxRate      = 200
	DefaultTargetP95Ms  = 500
	DefaultMaxErrorRate = 0.02
	MaxHealthURLLen     = 2048
)

// DefaultAdapt returns the adaptive settings of a new room: off, between 5
// and 200 admissions per second, a 500 ms p95 target and a 2% error
// budget.
func DefaultAdapt() Adapt {
	return Adapt{MinRate: DefaultMinRate, MaxRate: DefaultMaxRate, TargetP95Ms: DefaultTargetP95Ms, MaxErrorRate: DefaultMaxErrorRate}
}

// Validate returns an error that names the first invalid field. The bounds
// hold whether Adaptive is on or off, so that turning it on never finds
// them invalid.
func (a Adapt) Validate() error {
	switch {
	case !finite(a.MinRate) || a.MinRate < 0 || a.MinRate > MaxRate:
		return fieldError("minRate", "minRate must be between 0 (pause admission) and %d per second", MaxRate)
	case !finite(a.MaxRate) || a.MaxRate < MinRate || a.MaxRate > MaxRate:
		return fieldError("maxRate", "maxRate must be between %g and %d per second", MinRate, MaxRate)
	case a.MinRate > a.MaxRate:
		return fieldError("minRate", "minRate must not be above maxRate (%g > %g)", a.MinRate, a.MaxRate)
	case a.TargetP95Ms < 1 || a.TargetP95Ms > MaxTargetP95Ms:
		return fieldError("targetP95Ms", "targetP95Ms must be between 1 and %d milliseconds", MaxTargetP95Ms)
	case !finite(a.MaxErrorRate) || a.MaxErrorRate < 0 || a.MaxErrorRate > 1:
		return fieldError("maxErrorRate", "maxErrorRate must be between 0 and 1 (a share of the orders)")
	case !ValidHealthURL(a.HealthURL):
		return fieldError("healthURL", "healthURL must be empty or an absolute http(s) URL of at most %d bytes, without user:password", MaxHealthURLLen)
	}
	return checkHealthHost(a.HealthURL)
}

// checkHealthHost refuses a healthURL whose host the server never
// fetches from (package egress): the error says why.
func checkHealthHost(u string) error {
	if u == "" {
		return nil
	}
	p, err := url.Parse(u)
	if err != nil {
		return fieldError("healthURL", "healthURL: %w", err)
	}
	if err := egress.CheckHost(p.Hostname()); err != nil {
		return fieldError("healthURL", "healthURL: %w; loopback and private addresses are allowed", err)
	}
	return nil
}

// ValidHealthURL reports whether u is a room's healthURL: empty, or an
// absolute http or https URL of at most MaxHealthURLLen bytes, with a
// host, no user:password, no fragment and no white space or control
// character.
func ValidHealthURL(u string) bool {
	if u == "" {
		return true
	}
	if len(u) > MaxHealthURLLen || strings.ContainsFunc(u, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		return false
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" && p.User == nil &&
		p.Fragment == "" && !strings.Contains(u, "#")
}

// Clamp returns rate within [MinRate, MaxRate].
func (a Adapt) Clamp(rate float64) float64 {
	return min(max(rate, a.MinRate), a.MaxRate)
}

// AdaptPatch is a partial update of Adapt: nil fields keep their value.
type AdaptPatch struct {
	Adaptive     *bool    `json:"adaptive"`
	MinRate      *float64 `json:"minRate"`
	MaxRate      *float64 `json:"maxRate"`
	TargetP95Ms  *int     `json:"targetP95Ms"`
	MaxErrorRate *float64 `json:"maxErrorRate"`
	HealthURL    *string  `json:"healthURL"`
}

func (p AdaptPatch) apply(a Adapt) Adapt {
	set(&a.Adaptive, p.Adaptive)
	set(&a.MinRate, p.MinRate)
	set(&a.MaxRate, p.MaxRate)
	set(&a.TargetP95Ms, p.TargetP95Ms)
	set(&a.MaxErrorRate, p.MaxErrorRate)
	set(&a.HealthURL, p.HealthURL)
	return a
}

// Ceiling is the highest rate the controller sets: MaxRate, or orderRate
// when the room's orders go through its order bucket (bucketed) and
// orderRate is lower, but never under MinRate. Admitting faster than the
// bucket lets orders through only has them refused (429) before they reach
// the shop, which then looks healthy, so the controller would climb on
// for nothing while the passes it hands out wait on the bucket. It reports
// whether orderRate is the ceiling.
func (a Adapt) Ceiling(orderRate float64, bucketed bool) (float64, bool) {
	if bucketed && orderRate < a.MaxRate {
		c := max(orderRate, a.MinRate)
		return c, c < a.MaxRate
	}
	return a.MaxRate, false
}

// OrdersBucketed reports whether the room's orders go through its order
// bucket (orderRate): the built-in order form, not a gate to an outside
// shop, and not passthrough (which skips the bucket).
func (s Settings) OrdersBucketed() bool { return OrdersBucketed(s.Gate.TargetURL != "", s.Mode) }

// OrdersBucketed reports whether a room's orders go through its order
// bucket, from whether it has a gate and its mode.
func OrdersBucketed(gate bool, mode string) bool {
	return !gate && CanonicalMode(mode) != ModePassthrough
}

// AdaptCeiling is Ceiling for the room's own order rate.
func (s Settings) AdaptCeiling() (float64, bool) {
	return s.Adapt.Ceiling(s.OrderRate, s.OrdersBucketed())
}

// Restored returns s as a room restored from the database's record (Redis
// lost its data) restarts. The record holds the rate of the operator's
// last write, not the ones the controller set since, and the shop's state
// is unknown: an adaptive room restarts at MinRate, the floor the
// operator declared safe while the shop is unhealthy, and the controller
// climbs from there as it does from any start. A MinRate of 0 would pause
// admission, with no orders to give the controller a signal to leave it:
// such a room restarts at the recorded rate, clamped into [0, MaxRate].
// A room that is not adaptive keeps its rate: it is the operator's.
func (s Settings) Restored() Settings {
	switch {
	case !s.Adaptive:
	case s.Adapt.MinRate > 0:
		s.Rate = s.Adapt.MinRate
	default:
		s.Rate = s.Adapt.Clamp(s.Rate)
	}
	return s
}
