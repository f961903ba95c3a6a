package room

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
)

// Adapt is adaptive admission (issue 15): when Adaptive is on, a
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
		return fmt.Errorf("minRate must be between 0 (pause admission) and %d per second", MaxRate)
	case !finite(a.MaxRate) || a.MaxRate < MinRate || a.MaxRate > MaxRate:
		return fmt.Errorf("maxRate must be between %g and %d per second", MinRate, MaxRate)
	case a.MinRate > a.MaxRate:
		return fmt.Errorf("minRate must not be above maxRate (%g > %g)", a.MinRate, a.MaxRate)
	case a.TargetP95Ms < 1 || a.TargetP95Ms > MaxTargetP95Ms:
		return fmt.Errorf("targetP95Ms must be between 1 and %d milliseconds", MaxTargetP95Ms)
	case !finite(a.MaxErrorRate) || a.MaxErrorRate < 0 || a.MaxErrorRate > 1:
		return fmt.Errorf("maxErrorRate must be between 0 and 1 (a share of the orders)")
	case !ValidHealthURL(a.HealthURL):
		return fmt.Errorf("healthURL must be empty or an absolute http(s) URL of at most %d bytes, without user:password", MaxHealthURLLen)
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
