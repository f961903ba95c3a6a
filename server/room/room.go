// Package room holds a waiting room's settings and the rules for its name.
package room

import (
	"errors"
	"math"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"waitingroom/server/plaintext"
)

// Demo is the name of the room that exists at startup.
const Demo = "demo"

// MaxNameLen is the longest room name.
const MaxNameLen = 64

// ErrNotFound reports that a room does not exist.
var ErrNotFound = errors.New("room not found")

// ErrNoShop refuses a gate request in a room that sends its buyers to no
// outside shop (its gate has no target).
var ErrNoShop = errors.New("room: sends buyers to no outside shop")

// ValidName reports whether name matches [a-z0-9-]{1,64}.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Settings are a room's operator-controlled knobs. The JSON names are the
// admin API's contract.
type Settings struct {
	// Title is shown on the room's page.
	Title string `json:"title"`
	// Rate is the global number of admissions per second.
	Rate float64 `json:"rate"`
	// MaxActive caps admitted sessions that hold a slot; 0 means no cap.
	MaxActive int `json:"maxActive"`
	// TokenTTLSeconds is how long an entry token stays usable.
	TokenTTLSeconds int `json:"tokenTTLSeconds"`
	// OrderRate is the refill rate of the order endpoint's token bucket.
	OrderRate float64 `json:"orderRate"`
	// OrderBurst is the capacity of the order endpoint's token bucket.
	OrderBurst int `json:"orderBurst"`
	// Paused stops admissions; the line keeps forming.
	Paused bool `json:"paused"`
	// AbandonAfterSeconds is how long a waiting visitor may go without an
	// SSE connection or a poll before counting as away: when their turn
	// comes they are passed over (no admission goes to an empty page) and
	// kept for ReturnWithinSeconds. 0 means never away, never abandoned.
	AbandonAfterSeconds int `json:"abandonAfterSeconds"`
	// Mode is "fifo" (the waiting room, in ticket order; "queue" is
	// accepted on input as its old name), "random" (each tick admits
	// uniformly at random among the waiting), "passthrough", which admits
	// everyone at the next tick and skips the order bucket: the no-room
	// baseline that load tests compare with, or "closed" (nobody joins,
	// nobody is admitted).
	Mode string `json:"mode"`

	// DRAW: the sale's schedule (see schedule.go).
	Schedule

	// ABSENCE begin.

	// ReturnWithinSeconds is how long a waiting visitor who went away
	// (unseen since) keeps their ticket: coming back in time, they keep
	// their place, or, passed over meanwhile, are let in at the next tick.
	// Unseen longer, they depart as abandoned. At least AbandonAfterSeconds.
	ReturnWithinSeconds int `json:"returnWithinSeconds"`

	// ABSENCE end.
	// ShopURL is the shop the pages link back to: an absolute http(s) URL,
	// or empty for none.
	ShopURL string `json:"shopURL"`
	// MaxPerBuyer caps the total quantity of one buyer's (visitor id's)
	// placed orders in the room, and so of one order; 0 means only
	// order.MaxQuantity per order.
	MaxPerBuyer int `json:"maxPerBuyer"`

	// Challenge is ChallengeOff, ChallengeAuto or ChallengeAlways: whether
	// a join that creates a new place needs a proof of work (challenge.go).
	// "" (a room saved before the setting existed, or restored from such a
	// record) follows the server's default, CHALLENGE_DEFAULT.
	Challenge string `json:"challenge"`

	// ReadySpreadMs spreads the turns of the buyers one tick lets in over
	// this many milliseconds, so that they do not reach the order page in
	// the same millisecond (spread.go): 0 tells them all at once, nil
	// (JSON null, and rooms saved before the setting existed) follows the
	// server's default. At most one tick (ValidateReadySpread).
	ReadySpreadMs *int `json:"readySpreadMs"`

	// Branding: how the room looks, previews and embeds (branding.go).
	Branding

	// Gate: guarding an outside shop with passes and sessions (gate.go).
	Gate

	// Adapt: adaptive admission, the controller that sets Rate
	// (adaptive.go).
	Adapt

	// Access: who may take a new place (access.go).
	Access
	// Lines are the room's named lines, each with a share of the rate and
	// who may join it (lines.go); none is the room's one unnamed line.
	Lines []Line `json:"lines,omitempty"`

	// Bypass: who skips the line (bypass.go).
	Bypass
}

// The room modes.
const (
	ModeFIFO        = "fifo"
	ModeRandom      = "random"
	ModePassthrough = "passthrough"
	ModeClosed      = "closed"
	// ModeQueue is the old name of ModeFIFO, accepted on input.
	ModeQueue = "queue"
)

// CanonicalMode returns m with its old name replaced: "queue" and "" are
// "fifo".
func CanonicalMode(m string) string {
	if m == ModeQueue || m == "" {
		return ModeFIFO
	}
	return m
}

// Limits on settings, so that one typo cannot take the order path down.
const (
	MaxTitleLen = 200
	// MinRate and MaxRate bound rate and orderRate, per second. The issuer
	// passes up to two batches of tokens per tick at MaxRate, so the
	// ceiling is one it can keep.
	MinRate         = 0.01
	MaxRate         = 10000
	MaxActiveLimit  = 10000000
	MinTokenTTL     = 10
	MaxTokenTTL     = 86400
	MaxOrderBurst   = 1000000
	DefaultTokenTTL = 300
	DefaultAbandon  = 120
	MinAbandon      = 60
	MaxAbandon      = 3600
	// DefaultReturnWithin and MaxReturnWithin bound ReturnWithinSeconds
	// (the liveness cells wrap after 36 hours).
	DefaultReturnWithin = 900
	MaxReturnWithin     = 86400
)

// Defaults returns the settings of a new room: the seeds' 50 admissions per
// second, 300 s tokens and a 50/s order bucket of capacity 50.
func Defaults(name string) Settings {
	return Settings{
		Title:           name,
		Rate:            50,
		TokenTTLSeconds: DefaultTokenTTL,
		OrderRate:       50,
		OrderBurst:      50,
		// 120 s without an SSE connection or a poll: the visitor has left.
		AbandonAfterSeconds: DefaultAbandon,
		Mode:                ModeFIFO,
		Schedule:            Schedule{ServeLineAfterClose: true},
		ReturnWithinSeconds: DefaultReturnWithin,
		Challenge:           "",  // the server's default
		ReadySpreadMs:       nil, // the server's default
		Gate:                DefaultGate(),
		Adapt:               DefaultAdapt(),
	}
}

// Validate returns an error that names the first invalid field.
func (s Settings) Validate() error {
	switch {
	case !plaintext.Valid(s.Title) || utf8.RuneCountInString(s.Title) > MaxTitleLen:
		return fieldError("title", "title must be at most %d characters of valid UTF-8, without control or bidirectional formatting characters", MaxTitleLen)
	case !finite(s.Rate) || s.Rate < MinRate && !(s.Adaptive && s.Rate >= s.Adapt.MinRate && s.Rate >= 0) || s.Rate > MaxRate:
		// Adaptive admission may take the rate down to minRate, 0 included.
		return fieldError("rate", "rate must be between %g and %d per second", MinRate, MaxRate)
	case s.MaxActive < 0 || s.MaxActive > MaxActiveLimit:
		return fieldError("maxActive", "maxActive must be between 0 (no cap) and %d", MaxActiveLimit)
	case s.TokenTTLSeconds < MinTokenTTL || s.TokenTTLSeconds > MaxTokenTTL:
		return fieldError("tokenTTLSeconds", "tokenTTLSeconds must be between %d and %d", MinTokenTTL, MaxTokenTTL)
	case !finite(s.OrderRate) || s.OrderRate < MinRate || s.OrderRate > MaxRate:
		return fieldError("orderRate", "orderRate must be between %g and %d per second", MinRate, MaxRate)
	case s.OrderBurst < 1 || s.OrderBurst > MaxOrderBurst:
		return fieldError("orderBurst", "orderBurst must be between 1 and %d", MaxOrderBurst)
	case s.AbandonAfterSeconds != 0 && (s.AbandonAfterSeconds < MinAbandon || s.AbandonAfterSeconds > MaxAbandon):
		return fieldError("abandonAfterSeconds", "abandonAfterSeconds must be 0 (never) or between %d and %d", MinAbandon, MaxAbandon)
	case s.ReturnWithinSeconds < max(MinAbandon, s.AbandonAfterSeconds) || s.ReturnWithinSeconds > MaxReturnWithin:
		return fieldError("returnWithinSeconds", "returnWithinSeconds must be between abandonAfterSeconds (at least %d) and %d", MinAbandon, MaxReturnWithin)
	case !validShopURL(s.ShopURL):
		return fieldError("shopURL", "shopURL must be empty or an absolute http(s) URL of at most %d bytes", MaxShopURLLen)
	case s.MaxPerBuyer < 0 || s.MaxPerBuyer > MaxPerBuyerLimit:
		return fieldError("maxPerBuyer", "maxPerBuyer must be between 0 (no limit of its own) and %d", MaxPerBuyerLimit)
	}
	switch CanonicalMode(s.Mode) {
	case ModeFIFO, ModeRandom, ModePassthrough, ModeClosed:
	default:
		return fieldError("mode", "mode must be %q, %q, %q or %q", ModeFIFO, ModeRandom, ModePassthrough, ModeClosed)
	}
	if err := validateChallenge(s.Challenge); err != nil {
		return err
	}
	if err := validateReadySpread(s.ReadySpreadMs); err != nil {
		return err
	}
	if err := s.Schedule.Validate(); err != nil {
		return err
	}
	if err := s.Branding.Validate(); err != nil {
		return err
	}
	if err := s.Adapt.Validate(); err != nil {
		return err
	}
	if err := s.Access.Validate(); err != nil {
		return err
	}
	if err := s.validateLines(); err != nil {
		return err
	}
	if err := s.Bypass.Validate(); err != nil {
		return err
	}
	return s.Gate.Validate()
}

// MaxShopURLLen bounds shopURL, in bytes; MaxPerBuyerLimit bounds
// maxPerBuyer.
const (
	MaxShopURLLen    = 2048
	MaxPerBuyerLimit = 1000000
)

// validShopURL reports whether u is empty or an absolute http or https URL
// with a host, of at most MaxShopURLLen bytes, without control characters.
func validShopURL(u string) bool {
	if u == "" {
		return true
	}
	if len(u) > MaxShopURLLen || !utf8.ValidString(u) || strings.ContainsFunc(u, unicode.IsControl) {
		return false
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != "" && p.User == nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Patch is a partial update of Settings: nil fields keep their value.
type Patch struct {
	Title           *string  `json:"title"`
	Rate            *float64 `json:"rate"`
	MaxActive       *int     `json:"maxActive"`
	TokenTTLSeconds *int     `json:"tokenTTLSeconds"`
	OrderRate       *float64 `json:"orderRate"`
	OrderBurst      *int     `json:"orderBurst"`
	Paused          *bool    `json:"paused"`
	// AbandonAfterSeconds, when set, replaces Settings.AbandonAfterSeconds.
	AbandonAfterSeconds *int `json:"abandonAfterSeconds"`
	// Mode, when set, replaces Settings.Mode.
	Mode *string `json:"mode"`
	// ReturnWithinSeconds, when set, replaces Settings.ReturnWithinSeconds.
	ReturnWithinSeconds *int `json:"returnWithinSeconds"` // ABSENCE

	// DRAW: the schedule's fields (see schedule.go).
	SchedulePatch

	// ShopURL, when set, replaces Settings.ShopURL.
	ShopURL *string `json:"shopURL"`
	// MaxPerBuyer, when set, replaces Settings.MaxPerBuyer.
	MaxPerBuyer *int `json:"maxPerBuyer"`
	// Challenge, when set, replaces Settings.Challenge.
	Challenge *string `json:"challenge"`
	// ReadySpreadMs, when present, replaces Settings.ReadySpreadMs (null:
	// the server's default).
	ReadySpreadMs ReadySpreadPatch `json:"readySpreadMs"`

	// BrandingPatch: the branding's fields (branding.go).
	BrandingPatch

	// GatePatch: the gate's fields (gate.go), but for the API key's hash.
	GatePatch

	// AdaptPatch: adaptive admission's fields (adaptive.go).
	AdaptPatch

	// AccessPatch: who may take a new place (access.go).
	AccessPatch
	// Lines, when present, replaces Settings.Lines (null or []: none).
	Lines LinesPatch `json:"lines"`

	// BypassPatch: who skips the line (bypass.go).
	BypassPatch
}

// Apply returns s with the patch's non-nil fields set. It does not validate.
//
// Adaptive admission: a patch that changes Rate without saying adaptive
// turns it off (the operator's rate wins until they turn it on again); one
// that sets both starts the controller from that rate. While adaptive is
// on, Rate is kept within [minRate, maxRate] (when they are in order), so
// that turning it on or narrowing the bounds moves the rate inside them.
func (p Patch) Apply(s Settings) Settings {
	if p.Rate != nil && *p.Rate != s.Rate && p.AdaptPatch.Adaptive == nil {
		s.Adaptive = false
	}
	set(&s.Title, p.Title)
	set(&s.Rate, p.Rate)
	set(&s.MaxActive, p.MaxActive)
	set(&s.TokenTTLSeconds, p.TokenTTLSeconds)
	set(&s.OrderRate, p.OrderRate)
	set(&s.OrderBurst, p.OrderBurst)
	set(&s.Paused, p.Paused)
	set(&s.AbandonAfterSeconds, p.AbandonAfterSeconds)
	set(&s.Mode, p.Mode)
	s.Mode = CanonicalMode(s.Mode)
	s.Schedule = p.SchedulePatch.apply(s.Schedule)
	set(&s.ReturnWithinSeconds, p.ReturnWithinSeconds) // ABSENCE

	set(&s.ShopURL, p.ShopURL)
	set(&s.MaxPerBuyer, p.MaxPerBuyer)
	set(&s.Challenge, p.Challenge)
	s.ReadySpreadMs = p.ReadySpreadMs.apply(s.ReadySpreadMs)
	s.Branding = p.BrandingPatch.apply(s.Branding)
	s.Gate = p.GatePatch.apply(s.Gate)
	s.Adapt = p.AdaptPatch.apply(s.Adapt)
	s.Access = p.AccessPatch.apply(s.Access)
	s.Lines = p.Lines.apply(s.Lines)
	s.Bypass = p.BypassPatch.apply(s.Bypass)
	if s.Adaptive && s.Adapt.MinRate <= s.Adapt.MaxRate {
		s.Rate = s.Adapt.Clamp(s.Rate)
	}
	return s
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
