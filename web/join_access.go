package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"waitingroom/server/access"
	"waitingroom/server/identity"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// AccessCodes redeems the rooms' access codes for joins (package access):
// a redeemed code is held by its visitor until given back.
type AccessCodes interface {
	Redeem(ctx context.Context, room, code, visitor string) (access.Grant, error)
	Held(ctx context.Context, room, visitor string) (access.Grant, bool, error)
	Release(ctx context.Context, room, code, visitor string, g access.Grant) error
}

// joinAccess sets up who may join a room whose access is limited: the
// codes, the identities' visitors, and the shops' key sets.
func (s *Server) joinAccess(o Options) error {
	s.redeemer, s.visitors, s.links = o.AccessCodes, o.Visitors, o.TestLinks
	if s.visitors.Zero() {
		var key [32]byte
		if _, err := rand.Read(key[:]); err != nil {
			return fmt.Errorf("web: a key for the identities' visitors: %w", err)
		}
		v, err := identity.NewVisitors(key[:])
		if err != nil {
			return err
		}
		s.visitors = v
	}
	s.jwks = NewJWKS(s.clock.Now)
	return nil
}

// joinKeys are what a join brings to a room whose access is limited: an
// access code, and the shop's signed identity of its buyer.
type joinKeys struct {
	Code     string `json:"code"`
	Identity string `json:"identity"`
}

// maxCodeLen bounds a code as a join sends it, spaces and dashes
// included (access.Normalize takes up to 64 symbols).
const maxCodeLen = 128

// enterBodyMax bounds the JSON enter's body: an identity, a code and
// their JSON.
const enterBodyMax = identity.MaxTokenLen + 1<<10

// errCodesOff refuses a code in a deployment that keeps no codes.
var errCodesOff = errors.New("access codes: no database keeps them")

// readJoinKeys reads the JSON enter's optional body, {"code", "identity"}:
// a body that is empty or only white space brings neither, whether its
// length was announced or not. It answers 400 or 413 itself and reports
// false for a body it refuses.
func readJoinKeys(w http.ResponseWriter, r *http.Request) (joinKeys, bool) {
	var k joinKeys
	if r.ContentLength == 0 {
		return k, drainBody(w, r)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return k, request.BodyError(w, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return k, true
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	if !request.DecodeStrict(w, r, &k, `{"code":"…","identity":"…"} (both optional)`) {
		return k, false
	}
	if len(k.Code) > maxCodeLen || len(k.Identity) > identity.MaxTokenLen {
		response.WriteError(w, http.StatusBadRequest, "bad_json", fmt.Sprintf("code is at most %d bytes, identity %d.", maxCodeLen, identity.MaxTokenLen))
		return k, false
	}
	k.Code = strings.TrimSpace(k.Code)
	return k, true
}

// identified returns who a join into room name is for when it brings the
// shop's identity: the visitor of token, verified against the room's
// keys (its identity cookie is then set on w), else the visitor of the
// room's identity cookie, and the line the identity names ("" for none);
// ok is false for neither.
func (s *Server) identified(ctx context.Context, w http.ResponseWriter, r *http.Request, name, token string) (id, line string, ok bool, err error) {
	if token == "" {
		id, line, ok = request.IdentityOf(r, s.signer, name, s.clock.Now())
		return id, line, ok, nil
	}
	if id, line, err = s.verifyIdentity(ctx, name, token); err != nil {
		return "", "", false, err
	}
	request.SetIdentityCookie(w, r, s.signer, name, id, line, s.clock.Now())
	return id, line, true, nil
}

// verifyIdentity returns the visitor of identity token in room name and
// the line it names ("" for none), or why it is refused:
// *response.SignIn around an identity refusal,
// response.ErrIdentityNotTaken, or the error of the room or its keys.
func (s *Server) verifyIdentity(ctx context.Context, name, token string) (id, line string, err error) {
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		return "", "", err
	}
	if !set.TakesIdentity() {
		s.metrics.Identities.WithLabelValues("not_taken").Inc()
		return "", "", response.ErrIdentityNotTaken
	}
	var keys identity.KeySource
	if set.IdentityJWKSURL != "" {
		keys = s.jwks.Source(set.IdentityJWKSURL)
	} else if keys, err = s.pasted.parse(set.IdentityKeys); err != nil {
		s.metrics.Identities.WithLabelValues("keys_unavailable").Inc()
		return "", "", fmt.Errorf("identity: room %s's pasted keys: %w", name, err)
	}
	c, err := identity.Verify(ctx, token, name, keys, s.clock.Now())
	if err != nil {
		s.metrics.Identities.WithLabelValues(identityResult(err)).Inc()
		if identity.Refused(err) {
			return "", "", &response.SignIn{URL: set.SignInURL, Err: err}
		}
		return "", "", err
	}
	s.metrics.Identities.WithLabelValues("verified").Inc()
	return s.visitors.ID(name, c.Subject), c.Line, nil
}

// identityResult names an identity refusal for the metrics.
func identityResult(err error) string {
	for _, r := range []struct {
		err  error
		name string
	}{
		{identity.ErrMalformed, "malformed"}, {identity.ErrSignature, "signature"}, {identity.ErrExpired, "expired"},
		{identity.ErrNotYetValid, "not_yet_valid"}, {identity.ErrWrongRoom, "wrong_room"},
		{identity.ErrNoSubject, "no_subject"}, {identity.ErrNoExpiry, "no_expiry"},
	} {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return "keys_unavailable"
}

// withSignIn adds room name's sign-in page to a join refused for its
// identity, or for having none, so that the answer links to it.
func (s *Server) withSignIn(ctx context.Context, name string, err error) error {
	if _, ok := errors.AsType[*response.SignIn](err); ok || !errors.Is(err, queue.ErrIdentityRequired) && !identity.Refused(err) {
		return err
	}
	if set, rerr := s.rooms.Room(ctx, name); rerr == nil {
		return &response.SignIn{URL: set.SignInURL, Err: err}
	}
	return err
}

// enterFunc enters a join's visitor with cred, and returns their position
// and the visitor it entered (see enterProved).
type enterFunc func(cred queue.Credentials) (queue.Position, string, error)

// admitWith runs a join: enter with cred, and, in a room whose access
// takes a code the enter did not bring, again with the code the join
// brought (code, "" for none), redeemed for the visitor the enter was
// for, or else with a code the visitor holds. A room asks no code of a
// visitor who has a place, so only a visitor without one redeems.
//
// A redemption holds: a join that then waits for its proof of work needs
// no code the next time (a no-JavaScript wait brings none). The code's
// use is given back only when its visitor is left without a place
// (leftWithoutPlace): a join that raced another of the same visitor's,
// and found the place that one made, keeps the code the place was made
// with.
//
// In a room with lines, a code chooses its visitor's line: a new place
// that would go to a line open to all (queue.ErrCodeAsked) redeems the
// join's code, or takes the one the visitor holds, and goes to the code's
// line; a visitor without one enters again with NoCode.
//
// redeemed reports a code redeemed for the visitor by this join: the
// caller keeps the visitor's cookie even when the enter failed.
func (s *Server) admitWith(ctx context.Context, r *http.Request, name, code string, cred queue.Credentials, enter enterFunc) (p queue.Position, id string, redeemed bool, err error) {
	p, id, err = enter(cred)
	asked := errors.Is(err, queue.ErrCodeAsked)
	if !asked && !errors.Is(err, queue.ErrCodeRequired) {
		return p, id, false, err
	}
	noCode := func() (queue.Position, string, bool, error) {
		if !asked {
			return p, id, false, queue.ErrCodeRequired
		}
		cred.NoCode = true
		p, id, err = enter(cred)
		return p, id, false, err
	}
	var grant access.Grant
	switch {
	case code != "":
		if grant, err = s.redeemCode(ctx, r, name, code, id); err != nil {
			return p, id, false, err
		}
		redeemed = !grant.Again
	case s.redeemer != nil:
		var held bool
		if grant, held, err = s.redeemer.Held(ctx, name, id); err != nil {
			return p, id, false, err
		}
		if !held {
			return noCode()
		}
	default:
		return noCode()
	}
	cred.Code = true
	if grant.Line != "" {
		cred.Line = grant.Line // the code's line before the identity's
	}
	visitor := id
	p, id, err = enter(cred)
	if redeemed && s.leftWithoutPlace(context.WithoutCancel(ctx), name, visitor, p, err) {
		if rerr := s.redeemer.Release(context.WithoutCancel(ctx), name, code, visitor, grant); rerr != nil {
			s.log.Error("access: give back a code's use", "room", name, "err", rerr)
		}
		redeemed = false
	}
	return p, id, redeemed, err
}

// leftWithoutPlace reports whether visitor has no place in room name
// after an enter that answered p and err. A refused proof of work keeps
// the code for the proved join that follows; a refusal that makes no
// place (sold out, closed, not open, no identity, no room) leaves none;
// an enter whose context ended keeps it (its script may still run);
// after any other failure the visitor's place is read, and a visitor
// whose place cannot be read is taken to have one, so that a code is
// never given back twice over.
func (s *Server) leftWithoutPlace(ctx context.Context, name, visitor string, p queue.Position, err error) bool {
	switch {
	case err == nil:
		return p.Status == queue.StatusNotEntered
	case refusalReason(err) != "", errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// A proof to solve keeps the code for the proved join; an enter
		// given up on may still make its place after the read below.
		return false
	case errors.Is(err, queue.ErrIdentityRequired), errors.Is(err, queue.ErrNotOpen),
		errors.Is(err, queue.ErrSaleEnded), errors.Is(err, room.ErrNotFound):
		return true
	}
	now, perr := s.q.Position(ctx, name, visitor)
	return perr == nil && now.Status == queue.StatusNotEntered
}

// redeemCode redeems code for visitor in room name, counting a refused
// code against the client network's guesses (queue.GuessBudget).
func (s *Server) redeemCode(ctx context.Context, r *http.Request, name, code, visitor string) (access.Grant, error) {
	if s.redeemer == nil {
		return access.Grant{}, errCodesOff
	}
	guess, err := s.q.TakeGuess(ctx, s.clientKey(r))
	if err != nil {
		if _, ok := errors.AsType[*queue.GuessError](err); ok {
			s.metrics.AccessCodes.WithLabelValues("throttled").Inc()
		}
		return access.Grant{}, err
	}
	g, err := s.redeemer.Redeem(ctx, name, code, visitor)
	if reason := codeRefusal(err); reason != "" {
		s.metrics.AccessCodes.WithLabelValues(reason).Inc()
		return access.Grant{}, err
	}
	// A code redeemed, or a failure that is not the code's: no guess.
	if ferr := s.q.ForgiveGuess(context.WithoutCancel(ctx), guess); ferr != nil {
		s.log.Error("access: forgive a guess", "err", ferr)
	}
	if err != nil {
		return access.Grant{}, err
	}
	s.metrics.AccessCodes.WithLabelValues("redeemed").Inc()
	return g, nil
}

// askedAccess reports a join that made nothing for want of a code or a
// sign-in, or for a code refused or over the guess budget: such a join
// gives its enter back, since refused codes are counted by a budget of
// their own (queue.GuessBudget).
func askedAccess(err error) bool {
	_, throttled := errors.AsType[*queue.GuessError](err)
	return errors.Is(err, queue.ErrCodeRequired) || errors.Is(err, queue.ErrIdentityRequired) ||
		codeRefusal(err) != "" || throttled
}

// codeRefusal names a code's refusal for the metrics, "" for none.
func codeRefusal(err error) string {
	switch {
	case errors.Is(err, access.ErrUnknown):
		return "unknown"
	case errors.Is(err, access.ErrWrongRoom):
		return "wrong_room"
	case errors.Is(err, access.ErrUsedUp):
		return "used_up"
	case errors.Is(err, access.ErrExpired):
		return "expired"
	}
	return ""
}

// identityParam is the identity link's query parameter: the shop's token.
const identityParam = "token"

// identityLink serves GET /r/{room}/identity?token=…, the link by which a
// shop sends its signed-in buyer to the room: it verifies the token, sets
// the room's identity cookie and sends the browser on to the room's page
// (303), whose address no longer holds the token. A refused token is
// answered with a page that says why, in the buyer's language, linking to
// the shop's sign-in.
func (s *Server) identityLink(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer") // the token is in the address
	if !room.ValidName(name) {
		s.htmlFail(w, r, room.ErrNotFound, "")
		return
	}
	token := r.URL.Query().Get(identityParam)
	if token == "" || len(token) > identity.MaxTokenLen {
		s.htmlFail(w, r, s.withSignIn(r.Context(), name, identity.ErrMalformed), name)
		return
	}
	if !s.pageEnterAllowed(w, r, name) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	id, line, err := s.verifyIdentity(ctx, name, token)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	request.SetIdentityCookie(w, r, s.signer, name, id, line, s.clock.Now())
	http.Redirect(w, r, withUTM("/r/"+name, queryUTM(r)), http.StatusSeeOther)
}

// joinAccess is what set's join form asks of a buyer.
func joinAccess(set room.Settings) views.JoinAccess {
	a := views.JoinAccess{Code: set.NeedsCode()}
	if set.NeedsIdentity() {
		a.SignIn = set.SignInURL
	}
	// With lines, the form asks for what chooses a line: a code field
	// where a line takes codes, the sign-in where one takes members.
	// Beside a line open to all, both are offered, not required.
	open := false
	for _, l := range set.Lines {
		switch {
		case l.NeedsCode():
			a.Code = true
		case l.NeedsIdentity():
			a.SignIn = set.SignInURL
		default:
			open = true
		}
	}
	a.Lines = open && !set.NeedsIdentity()
	return a
}
