package web

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"time"

	"waitingroom/server/challenge"
	"waitingroom/server/queue"
	"waitingroom/web/response"
)

// Challenges issues and verifies the proofs of work, and signs and checks
// the no-JavaScript wait tokens (package challenge).
type Challenges interface {
	Issue(room, visitor string, maxNumber int64, now time.Time) (challenge.Challenge, error)
	Verify(payload, room string, now time.Time) (challenge.Proof, error)
	SignWait(w challenge.Wait) string
	VerifyWait(token, room, net string, now time.Time) (challenge.Wait, error)
}

// DefaultEnterRatePerIP is the default of Options.EnterRatePerIP, per
// second.
const DefaultEnterRatePerIP = 200

// randomChallengeKeys derives challenge keys from a fresh random secret
// (its own to this process, so no namespace is needed to tell it apart).
func randomChallengeKeys() (*challenge.Keys, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("web: challenge secret: %w", err)
	}
	return challenge.Derive(secret, "")
}

// crossSite reports a request that the cross-origin guard would refuse
// were it a POST: the challenge's GET counts toward its network's price,
// so it is judged as the state-changing requests are (Sec-Fetch-Site, or
// Origin against the host and the allowed origins).
func (s *Server) crossSite(r *http.Request) bool {
	p := r.WithContext(r.Context())
	p.Method = http.MethodPost
	return s.origins.Check(p) != nil
}

// altchaHeader carries the base64 ALTCHA payload of an enter.
const altchaHeader = "X-Altcha"

// issueChallenge serves GET /api/rooms/{room}/challenge: a fresh challenge
// for the visitor (of the wr_vid cookie, else a new id that the proved
// enter makes; the GET sets no cookie), whose difficulty follows the
// recent challenges of the client's network (the request counts as one)
// and the room's recent proved joins. It answers 404 challenge_off in a
// room that asks no proof, 409 as an enter does when the room takes no
// joins (not_open, sale_ended; nothing counted), 429 past the client's
// bucket (the enters' rate), and 403 to a cross-site request, which could
// otherwise raise a network's price from its visitors' browsers.
func (s *Server) issueChallenge(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room") // valid, and no-store: see api
	if s.crossSite(r) {
		s.refuseCrossSite(w, r)
		return
	}
	if !s.challengeFetches.allow(s.clientKey(r)) {
		s.metrics.Rejected.WithLabelValues("challenge_rate").Inc()
		response.WriteRateLimited(w)
		return
	}
	id, _, err := s.visitorOrNew(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rates, err := s.q.CountChallenge(r.Context(), name, s.enterNet(r))
	if writeScheduleError(w, rates.Schedule, err) {
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	maxNumber := s.policy.MaxNumber(rates.Network, rates.Room, rates.Mode)
	if maxNumber == 0 {
		response.WriteError(w, http.StatusNotFound, "challenge_off", "This room asks no proof of work.")
		return
	}
	c, err := s.challenges.Issue(name, id, maxNumber, s.clock.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.metrics.ChallengesIssued.Inc()
	s.metrics.ChallengeDifficulty.Observe(float64(maxNumber))
	response.WriteJSON(w, http.StatusOK, c)
}

// errOtherVisitor reports a proof of work issued for another visitor than
// the one of the cookie that brings it (a solution handed over).
var errOtherVisitor = fmt.Errorf("challenge of another visitor: %w", challenge.ErrInvalid)

// enterProved enters the visitor with the proof of work in payload (""
// for none) and returns the visitor id it entered: id, the cookie's
// visitor, or, for a new visitor (isNew) with a valid proof, the visitor
// that the proof was issued for (the caller sets the cookie of it). A
// proof issued for another visitor than a cookie's is invalid. A proof
// that does not verify is not sent: a visitor who has a place needs none,
// and one who has none is refused for the proof's fault (ErrInvalid,
// ErrExpired, ErrOtherRoom of package challenge) rather than for its
// absence.
func (s *Server) enterProved(ctx context.Context, r *http.Request, name, id string, isNew bool, payload string, camp queue.Campaign, cred queue.Credentials) (queue.Position, string, error) {
	var proof queue.Proof
	var bad error
	if payload != "" {
		pr, err := s.challenges.Verify(payload, name, s.clock.Now())
		switch {
		case err != nil:
			bad = err
		case isNew:
			id = pr.Visitor
		case pr.Visitor != id:
			bad = errOtherVisitor
		}
		if bad == nil {
			proof = queue.Proof{ID: pr.ID, Expires: pr.Expires, IssuedAt: pr.IssuedAt, Fresh: isNew}
		}
	}
	// A new visitor whose id no proof replaced has the id visitorOrNew
	// minted for this request: they cannot have a place yet.
	minted := isNew && proof.ID == ""
	p, err := s.enterAs(ctx, r, name, id, minted, camp, proof, bad, cred)
	return p, id, err
}

// enterWith enters the visitor with a verified proof (the zero Proof for
// none); bad, when set, is why the proof the visitor sent is none, and is
// the refusal when one was needed.
func (s *Server) enterWith(ctx context.Context, r *http.Request, name, id string, camp queue.Campaign, proof queue.Proof, bad error, cred queue.Credentials) (queue.Position, error) {
	return s.enterAs(ctx, r, name, id, false, camp, proof, bad, cred)
}

// enterAs is enterWith for a visitor whose id was minted for this request
// (minted; then proof is the zero Proof): such an enter does not look for
// a place they cannot have (queue.Engine.EnterNew).
func (s *Server) enterAs(ctx context.Context, r *http.Request, name, id string, minted bool, camp queue.Campaign, proof queue.Proof, bad error, cred queue.Credentials) (queue.Position, error) {
	start := time.Now()
	var p queue.Position
	var err error
	if minted && cred == (queue.Credentials{}) {
		p, err = s.q.EnterNew(ctx, name, id, s.enterNet(r), camp)
	} else {
		p, err = s.q.EnterWith(ctx, name, id, s.enterNet(r), camp, proof, cred)
	}
	s.metrics.EnterDuration.Observe(time.Since(start).Seconds())
	switch {
	case errors.Is(err, queue.ErrChallengeRequired) && bad != nil:
		err = bad
	case err == nil && p.Proved:
		s.metrics.ChallengesSolved.Inc()
	}
	if reason := refusalReason(err); reason != "" {
		s.metrics.ChallengesRefused.WithLabelValues(reason).Inc()
	}
	return p, err
}

// refusalReason names the proof-of-work refusal err is, "" for none.
func refusalReason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, queue.ErrChallengeRequired):
		// The page's first, bare enter: asked to solve, the normal flow.
		return "asked"
	case errors.Is(err, queue.ErrChallengeUsed):
		return "used"
	case errors.Is(err, queue.ErrChallengeStale):
		return "stale"
	case errors.Is(err, challenge.ErrExpired):
		return "expired"
	case errors.Is(err, challenge.ErrOtherRoom):
		return "other_room"
	case errors.Is(err, challenge.ErrOtherNetwork):
		return "other_network"
	case errors.Is(err, challenge.ErrInvalid):
		return "invalid"
	case errors.Is(err, challenge.ErrEarly):
		return "early"
	}
	return ""
}
