package web

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/netip"

	"waitingroom/server/admin"
	"waitingroom/server/audit"
	"waitingroom/server/bypass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/token"
	"waitingroom/views"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// TestLinks makes, lists, revokes and reads the rooms' test links
// (package bypass).
type TestLinks interface {
	Make(ctx context.Context, room string, spec bypass.Spec) (bypass.Made, error)
	List(ctx context.Context, room string) ([]queue.BypassLink, error)
	Revoke(ctx context.Context, room, id string) error
	Read(room, token string) (string, bool)
}

// bypassTokenField is the test link's token, in its address and its form.
const bypassTokenField = "t"

// bypassPath is the address of room name's test link page.
func bypassPath(name string) string { return "/r/" + name + "/bypass" }

// fromStaff reports whether r comes from one of room name's staff
// networks (read through the room's cached face).
func (s *Server) fromStaff(ctx context.Context, r *http.Request, name string) bool {
	f := s.roomFace(ctx, name)
	if len(f.staff) == 0 {
		return false
	}
	a, err := netip.ParseAddr(request.ClientIP(r, s.trusted))
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range f.staff {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// letIn lets visitor id into room name at once, outside the line: a
// staff network's join (link "") or a test link's. A place they held in
// the line is given up in the same step (queue.Bypass), so that it
// admits nobody later; a visitor with a live pass keeps it. Each pass let in is counted and
// recorded in the audit log with the client's network. It returns the
// visitor's position (READY).
func (s *Server) letIn(ctx context.Context, r *http.Request, name, id, link string) (queue.Position, error) {
	kind := "staff"
	if link != "" {
		kind = "link"
	}
	toks, err := token.NewBatch(1)
	if err != nil {
		return queue.Position{}, err
	}
	b, err := s.q.Bypass(ctx, name, id, toks[0], link)
	if err != nil {
		s.metrics.Bypasses.WithLabelValues(kind, bypassRefusal(err)).Inc()
		return queue.Position{}, err
	}
	if b.Admitted {
		s.metrics.Bypasses.WithLabelValues(kind, "admitted").Inc()
		target := kind
		if link != "" {
			target = "link " + link
		}
		s.recordAudit(ctx, audit.Entry{Actor: "buyer", Room: name, Action: "bypass.enter", Target: target,
			New: admin.CompactJSON(map[string]any{"network": s.clientKey(r), "until": b.PassExpires.UTC()})})
	}
	return s.q.Position(ctx, name, id)
}

// bypassRefusal names a bypass's refusal for the metrics.
func bypassRefusal(err error) string {
	switch {
	case errors.Is(err, queue.ErrRoomFull):
		return "full"
	case errors.Is(err, queue.ErrSaleEnded):
		return "ended"
	case errors.Is(err, queue.ErrLinkUnknown), errors.Is(err, queue.ErrLinkExpired), errors.Is(err, queue.ErrLinkUsedUp):
		return "refused"
	}
	return "failed"
}

// recordAudit records e, logging a failure: the action it records was
// done.
func (s *Server) recordAudit(ctx context.Context, e audit.Entry) {
	if s.auditLog == nil {
		return
	}
	if err := s.auditLog.Record(context.WithoutCancel(ctx), e); err != nil {
		s.log.ErrorContext(ctx, "audit", "room", e.Room, "action", e.Action, "err", err)
	}
}

// bypassPage serves GET /r/{room}/bypass?t=…, a test link: a page that
// says what the link does, with the button that uses it (a POST of this
// site), so that a link preview or a crawler following it uses nothing.
// A link that does not read is the page of a link that is not valid.
func (s *Server) bypassPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer") // the token is in the address
	tok := r.URL.Query().Get(bypassTokenField)
	if !room.ValidName(name) || s.links == nil {
		s.htmlFail(w, r, room.ErrNotFound, "")
		return
	}
	if _, ok := s.links.Read(name, tok); !ok {
		s.htmlFail(w, r, queue.ErrLinkUnknown, name)
		return
	}
	f := s.roomFace(r.Context(), name)
	if !f.found {
		s.htmlFail(w, r, room.ErrNotFound, name)
		return
	}
	t := s.roomText(r, name)
	s.render(w, r, http.StatusOK, views.BypassPage(views.Bypass{Room: name, Title: cmp.Or(f.title, name), Token: tok,
		T: t, B: views.BypassTextFor(t.Lang), Assets: s.roomAssets(f.favicon), Brand: brandOf(name, f.title, f.shopURL, f.brand)}))
}

// useBypass serves POST /r/{room}/bypass, the test link page's button: it
// lets the visitor in at once (letIn) and sends them to their status page.
func (s *Server) useBypass(w http.ResponseWriter, r *http.Request) {
	name, _, ok := s.postedRoomForm(w, r, func(t views.Messages) string { return t.FormInvalid })
	if !ok {
		return
	}
	if s.links == nil {
		s.htmlFail(w, r, room.ErrNotFound, "")
		return
	}
	link, ok := s.links.Read(name, r.PostForm.Get(bypassTokenField))
	if !ok {
		s.htmlFail(w, r, queue.ErrLinkUnknown, name)
		return
	}
	if !s.pageEnterAllowed(w, r, name) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	id, isNew, err := s.visitorOrNew(r)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	if _, err := s.letIn(ctx, r, name, id, link); err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	if isNew {
		s.setVisitorCookie(w, r, id)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/r/"+name+"/status", http.StatusSeeOther)
}

// linkSpecFail answers a test link's spec refused in the admin API, and
// reports whether it did.
func linkSpecFail(w http.ResponseWriter, err error) bool {
	var inv *bypass.InvalidError
	if errors.As(err, &inv) {
		response.WriteError(w, http.StatusBadRequest, "bad_link", inv.Msg+".")
		return true
	}
	if errors.Is(err, queue.ErrTooManyLinks) {
		response.WriteError(w, http.StatusConflict, "too_many_links", "The room has as many test links as it may (100): revoke one first.")
		return true
	}
	return false
}
