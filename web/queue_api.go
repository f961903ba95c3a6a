package web

import (
	"errors"
	"net/http"

	"waitingroom/server/queue"
	"waitingroom/web/response"
)

// enter puts the visitor in the line (idempotently) and answers their
// position. The first enter issues the wr_vid cookie. Its optional JSON
// body brings an access code and the shop's identity (joinKeys): an
// identity makes the join its visitor's, on every device, and sets the
// room's identity cookie.
func (s *Server) enter(w http.ResponseWriter, r *http.Request) {
	keys, ok := readJoinKeys(w, r)
	if !ok {
		return
	}
	name := r.PathValue("room")
	camp := queue.Campaign{} // direct, unless the query says otherwise
	if r.URL.RawQuery != "" {
		camp = s.campaignOf(r.URL.Query())
	}
	ok, giveBack := s.takeEnter(r)
	if !ok {
		response.WriteRateLimited(w)
		return
	}
	id, isNew, err := s.visitorOrNew(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	vid, line, identified, err := s.identified(ctx, w, r, name, keys.Identity)
	if err != nil {
		giveBack() // no enter was tried
		s.fail(w, r, err)
		return
	}
	if identified {
		id, isNew = vid, false
	}
	if s.fromStaff(ctx, r, name) {
		// Staff skip the line: a pass of their own, at once. With every
		// slot held they join the line as any buyer does.
		p, err := s.letIn(ctx, r, name, id, "")
		if err == nil {
			if isNew {
				s.setVisitorCookie(w, r, id)
			}
			s.writePosition(w, http.StatusOK, p)
			return
		}
		if !errors.Is(err, queue.ErrRoomFull) {
			s.fail(w, r, err)
			return
		}
	}
	payload := r.Header.Get(altchaHeader)
	p, id, redeemed, err := s.admitWith(ctx, r, name, keys.Code, queue.Credentials{Identity: identified, Line: line},
		func(cred queue.Credentials) (queue.Position, string, error) {
			return s.enterProved(ctx, r, name, id, isNew, payload, camp, cred)
		})
	if isNew && redeemed && err != nil {
		// The code is held for this visitor: their next join needs none.
		s.setVisitorCookie(w, r, id)
	}
	err = s.withSignIn(ctx, name, err)
	if payload == "" && errors.Is(err, queue.ErrChallengeRequired) || askedAccess(err) {
		// The page's first, bare enter in a challenge room learns that
		// it must solve and makes nothing: it gives its enter back, so a
		// crowd behind one address pays one enter a join, the proved one.
		// So does an enter that learns it needs a code or a sign-in.
		giveBack()
	}
	if writeScheduleError(w, p, err) {
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if isNew {
		s.setVisitorCookie(w, r, id)
	}
	setUTMCookies(w, r, name, camp)
	s.writePosition(w, http.StatusOK, p)
}

// position answers the visitor's position without entering: the polling
// API. A visitor without a valid cookie is NOT_ENTERED.
func (s *Server) position(w http.ResponseWriter, r *http.Request) {
	id, known := s.visitorID(r)
	if !known {
		id = anonymous
	}
	p, err := s.q.Position(r.Context(), r.PathValue("room"), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writePosition(w, http.StatusOK, p)
}

// leave takes the visitor out of the line, or gives up their unused token,
// and answers their (now NOT_ENTERED) position.
func (s *Server) leave(w http.ResponseWriter, r *http.Request) {
	if !drainBody(w, r) {
		return
	}
	name := r.PathValue("room")
	id, known := s.visitorID(r)
	if !known {
		id = anonymous
	} else if _, err := s.q.Leave(r.Context(), name, id); err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.q.Position(r.Context(), name, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writePosition(w, http.StatusOK, p)
}

// anonymous stands for a visitor without a cookie: a well-formed id that no
// cookie can carry, since the signer never signs it for a client.
const anonymous = "AAAAAAAAAAAAAAAAAAAAAA"
