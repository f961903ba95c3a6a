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
)

// Challenges issues and verifies the proofs of work (package challenge).
type Challenges interface {
	Issue(room string, maxNumber int64, now time.Time) (challenge.Challenge, error)
	Verify(payload, room string, now time.Time) (challenge.Proof, error)
}

// DefaultEnterRatePerIP is the default of Options.EnterRatePerIP, per
// second.
const DefaultEnterRatePerIP = 200

// randomChallengeKeys derives challenge keys from a fresh random secret.
func randomChallengeKeys() (*challenge.Keys, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("web: challenge secret: %w", err)
	}
	return challenge.Derive(secret)
}

// altchaHeader carries the base64 ALTCHA payload of an enter.
const altchaHeader = "X-Altcha"

// challengeURL is where a client gets room's challenge.
func challengeURL(roomName string) string { return "/api/rooms/" + roomName + "/challenge" }

// issueChallenge serves GET /api/rooms/{room}/challenge: a fresh challenge
// whose difficulty follows the recent join rates of the client's network
// and of the room (the request counts as one), or 404 challenge_off in a
// room that asks no proof.
func (s *Server) issueChallenge(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room") // valid, and no-store: see api
	rates, err := s.q.CountChallenge(r.Context(), name, s.enterNet(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	maxNumber := s.policy.MaxNumber(rates.Network, rates.Room, rates.Mode)
	if maxNumber == 0 {
		writeError(w, http.StatusNotFound, "challenge_off", "This room asks no proof of work.")
		return
	}
	c, err := s.challenges.Issue(name, maxNumber, time.Now())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.metrics.ChallengesIssued.Inc()
	s.metrics.ChallengeDifficulty.Observe(float64(maxNumber))
	writeJSON(w, http.StatusOK, c)
}

// challengeRefusal is a 428's body: the error, and where to get a
// challenge.
type challengeRefusal struct {
	apiError
	Challenge string `json:"challenge"`
}

// enterProved enters the visitor with the proof of work in payload (""
// for none). A proof that does not verify is not sent: a visitor who has
// a place needs none, and one who has none is refused for the proof's
// fault (ErrInvalid, ErrExpired, ErrOtherRoom of package challenge)
// rather than for its absence.
func (s *Server) enterProved(ctx context.Context, r *http.Request, name, id, payload string, camp queue.Campaign) (queue.Position, error) {
	var proof queue.Proof
	var bad error
	if payload != "" {
		pr, err := s.challenges.Verify(payload, name, time.Now())
		if err != nil {
			bad = err
		} else {
			proof = queue.Proof{ID: pr.ID, Expires: pr.Expires}
		}
	}
	start := time.Now()
	p, err := s.q.EnterWithProof(ctx, name, id, s.enterNet(r), camp, proof)
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
		return "required"
	case errors.Is(err, queue.ErrChallengeUsed):
		return "used"
	case errors.Is(err, challenge.ErrExpired):
		return "expired"
	case errors.Is(err, challenge.ErrOtherRoom):
		return "other_room"
	case errors.Is(err, challenge.ErrInvalid):
		return "invalid"
	}
	return ""
}

// writeChallengeError answers 428 for a proof-of-work refusal and reports
// whether err was one.
func writeChallengeError(w http.ResponseWriter, name string, err error) bool {
	var e apiError
	switch refusalReason(err) {
	case "required":
		e = apiError{"challenge_required", "Joining this room takes a proof of work: get a challenge, solve it and send the solution in the X-Altcha header."}
	case "used":
		e = apiError{"challenge_used", "This proof of work was used already. Get a new challenge."}
	case "expired":
		e = apiError{"challenge_expired", "This proof of work has expired. Get a new challenge."}
	case "other_room":
		e = apiError{"challenge_invalid", "This proof of work is for another room. Get a challenge of this room."}
	case "invalid":
		e = apiError{"challenge_invalid", "This proof of work is not valid. Get a new challenge."}
	default:
		return false
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusPreconditionRequired, challengeRefusal{apiError: e, Challenge: challengeURL(name)})
	return true
}
