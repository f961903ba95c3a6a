package web

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"waitingroom/server/challenge"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
)

// The no-JavaScript join in a room that asks a proof of work: the join
// form without a proof answers a short wait instead (the wait page), whose
// signed, timed token joins once due. The wait lasts as long as a phone
// would take to solve the challenge, and one network's waits end at most
// twice a second (queue.BookWait), so that the path is never faster than a
// script.

// The join form's fields that carry a proof, and the wait page's
// parameter.
const (
	altchaField = "altcha"
	waitField   = "wait"
	waitParam   = "w"
	// codeField is the join form's access code.
	codeField = "code"
)

// joinProved enters the visitor of a posted join form with the proof it
// carries: a wait token, an ALTCHA payload, or none, and with cred and
// the form's access code (admitWith). It returns the wait read from a
// wait token (set when it is early, too), the visitor it entered (see
// enterProved), and whether a code was redeemed for them.
func (s *Server) joinProved(ctx context.Context, r *http.Request, name, id string, isNew bool, camp queue.Campaign, cred queue.Credentials) (challenge.Wait, string, bool, error) {
	token := r.PostForm.Get(waitField)
	code := strings.TrimSpace(r.PostForm.Get(codeField))
	if token == "" {
		_, id, redeemed, err := s.admitWith(ctx, r, name, code, cred, func(cred queue.Credentials) (queue.Position, string, error) {
			return s.enterProved(ctx, r, name, id, isNew, r.PostForm.Get(altchaField), camp, cred)
		})
		return challenge.Wait{}, id, redeemed, err
	}
	wt, bad := s.challenges.VerifyWait(token, name, s.enterNet(r), s.clock.Now())
	var proof queue.Proof
	if bad == nil {
		// A wait is spendable from NotBefore: one that came due before
		// the room's pre-queue or opening is refused as stale.
		proof = queue.Proof{ID: wt.ProofID(), Expires: wt.Expires, IssuedAt: wt.NotBefore}
	}
	_, id, redeemed, err := s.admitWith(ctx, r, name, code, cred, func(cred queue.Credentials) (queue.Position, string, error) {
		p, err := s.enterWith(ctx, r, name, id, camp, proof, bad, cred)
		return p, id, err
	})
	return wt, id, redeemed, err
}

// joinRefused answers a join form that joinProved refused: a join without
// any proof gets a wait; a wait token refused for itself gets a page that
// says why (an early one, the wait again); anything else htmlFail.
func (s *Server) joinRefused(ctx context.Context, w http.ResponseWriter, r *http.Request, name string, wt challenge.Wait, err error) {
	token := r.PostForm.Get(waitField)
	switch {
	case token == "" && r.PostForm.Get(altchaField) == "" && errors.Is(err, queue.ErrChallengeRequired):
		s.offerWait(ctx, w, r, name)
	case token != "" && errors.Is(err, challenge.ErrEarly):
		s.waitPage(w, r, name, token, wt, utmOf(r.Form))
	case token != "" && refusalReason(err) != "":
		s.waitRefused(w, r, name, err)
	default:
		s.htmlFail(w, r, err, name)
	}
}

// offerWait books the visitor's network a no-JavaScript join and answers
// the wait page with its token. The wait is the challenge the visitor
// would have solved, priced the same (and counted: the page is one join
// attempt of the network), in time on the assumed phone.
func (s *Server) offerWait(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) {
	network := s.enterNet(r)
	rates, err := s.q.CountChallenge(ctx, name, network)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	maxNumber := s.policy.MaxNumber(rates.Network, rates.Room, rates.Mode)
	if maxNumber == 0 { // the room stopped asking a proof meanwhile
		s.htmlFail(w, r, queue.ErrChallengeRequired, name)
		return
	}
	slot, err := s.q.BookWait(ctx, name, network, challenge.WaitFor(maxNumber))
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	if !slot.Booked {
		retry := wholeSeconds(slot.At.Sub(slot.Now))
		t := s.roomText(r, name)
		w.Header().Set("Retry-After", strconv.FormatInt(retry, 10))
		s.htmlError(w, r, http.StatusTooManyRequests, views.Fill(views.WaitTextFor(t.Lang).Busy, "t", t.Duration(retry)), name, false)
		return
	}
	s.metrics.ChallengesIssued.Inc()
	s.metrics.ChallengeDifficulty.Observe(float64(maxNumber))
	wt := challenge.NewWait(name, network, slot.At)
	s.waitPage(w, r, name, s.challenges.SignWait(wt), wt, utmOf(r.Form))
}

// waitStatus serves GET /r/{room}/wait?w=<token>: the wait's seconds
// left, or, once due, the join form. It reads no Redis (the room's face
// is cached) and enters nobody.
func (s *Server) waitStatus(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if !room.ValidName(name) {
		t := s.roomText(r, "")
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusBadRequest, Heading: t.TitleNotFound, Message: t.BadRoomName})
		return
	}
	q := r.URL.Query()
	token := q.Get(waitParam)
	wt, err := s.challenges.VerifyWait(token, name, s.enterNet(r), s.clock.Now())
	if err != nil && !errors.Is(err, challenge.ErrEarly) {
		s.waitRefused(w, r, name, err)
		return
	}
	s.waitPage(w, r, name, token, wt, utmOf(q))
}

// waitPage answers the wait page of wt (signed as token).
func (s *Server) waitPage(w http.ResponseWriter, r *http.Request, name, token string, wt challenge.Wait, utm []views.Field) {
	f := s.roomFace(r.Context(), name)
	if !f.found {
		s.htmlFail(w, r, room.ErrNotFound, name)
		return
	}
	t := s.roomText(r, name)
	title := f.title
	if title == "" {
		title = name
	}
	now := s.clock.Now()
	page := views.WaitPage{Room: name, Title: title, T: t, W: views.WaitTextFor(t.Lang), Assets: s.roomAssets(f.favicon),
		Brand: brandOf(name, f.title, f.shopURL, f.brand), ShopURL: f.shopURL,
		Left: wholeSeconds(wt.Left(now)), Within: max(wholeSeconds(wt.Expires.Sub(now)), 0), Token: token, UTM: utm}
	if page.Left > 0 {
		page.Within = int64(challenge.WaitTTL / time.Second)
	}
	w.Header().Set("Cache-Control", "no-store")
	// The token is in the page's URL and its links: no referrer leaks it.
	s.renderWith(w, r, http.StatusOK, views.Wait(page), func(h http.Header) { h.Set("Referrer-Policy", "no-referrer") })
}

// waitRefused answers a wait token that cannot be used, saying why, with
// a way to join again: the status page, which offers the join form to a
// visitor without a place and shows the place of one who has it.
func (s *Server) waitRefused(w http.ResponseWriter, r *http.Request, name string, err error) {
	t := s.roomText(r, name)
	wt := views.WaitTextFor(t.Lang)
	p := views.ErrorPage{Status: http.StatusBadRequest, Heading: wt.Refused, Message: wt.Invalid, Room: name,
		RoomURL: "/r/" + name + "/status", Rejoin: true}
	switch {
	case errors.Is(err, challenge.ErrExpired), errors.Is(err, queue.ErrChallengeStale):
		p.Status, p.Message = http.StatusGone, wt.Expired
	case errors.Is(err, challenge.ErrOtherRoom):
		p.Message = wt.OtherRoom
	case errors.Is(err, challenge.ErrOtherNetwork):
		p.Message = wt.OtherNetwork
	case errors.Is(err, queue.ErrChallengeUsed):
		p.Status, p.Message = http.StatusConflict, wt.Used
	}
	s.htmlPage(w, r, p)
}

// wholeSeconds rounds d up to whole seconds, 0 for none.
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}
