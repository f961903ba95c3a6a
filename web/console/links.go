package console

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"waitingroom/server/admin"
	"waitingroom/server/audit"
	"waitingroom/server/bypass"
	"waitingroom/server/queue"
	"waitingroom/views"
)

// TestLinks makes, lists and revokes the rooms' test links (package
// bypass).
type TestLinks interface {
	Make(ctx context.Context, room string, spec bypass.Spec) (bypass.Made, error)
	List(ctx context.Context, room string) ([]queue.BypassLink, error)
	Revoke(ctx context.Context, room, id string) error
}

// linksPage is room name's test links page with an empty form.
func (s *Console) linksPage(ctx context.Context, r *http.Request, sess Session, name string) (views.LinksPage, error) {
	if _, err := s.rooms.Room(ctx, name); err != nil {
		return views.LinksPage{}, err
	}
	links, err := s.links.List(ctx, name)
	if err != nil {
		return views.LinksPage{}, err
	}
	loc, zone, _ := consoleZone(r)
	action := "/admin/rooms/" + name + "/links"
	if zone != defaultZone {
		action += "?tz=" + url.QueryEscape(zone)
	}
	lp := views.LinksPage{Room: name, CSRF: sess.CSRF, Uses: "5", Errors: map[string]string{}, MaxUses: queue.MaxBypassUses,
		Zone: zone, Action: templ.SafeURL(action)}
	lang := Lang(r)
	for _, l := range links {
		row := views.LinkRow{ID: l.ID, Uses: l.Uses, Used: l.Used}
		if l.ExpiresAt != nil {
			row.Ends, row.EndsISO = views.ConsoleTime(*l.ExpiresAt, loc, lang), l.ExpiresAt.UTC().Format(time.RFC3339)
		}
		lp.Links = append(lp.Links, row)
	}
	return lp, nil
}

func (s *Console) renderLinks(w http.ResponseWriter, r *http.Request, sess Session, status int, lp views.LinksPage) {
	t := views.LinksTextFor(Lang(r))
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, status, views.ConsoleLinks(s.consolePage(r, sess, views.Fill(t.Title, "room", lp.Room), "rooms"), lp))
}

// linksReady answers 404 when test links are off, and for a path that
// names no valid room.
func (s *Console) linksReady(w http.ResponseWriter, r *http.Request) (string, bool) {
	if s.links == nil {
		s.NotFound(w, r)
		return "", false
	}
	return s.consoleRoomName(w, r)
}

// consoleLinks serves GET /admin/rooms/{room}/links.
func (s *Console) consoleLinks(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.linksReady(w, r)
	if !ok {
		return
	}
	lp, err := s.linksPage(r.Context(), r, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	s.renderLinks(w, r, sess, http.StatusOK, lp)
}

// consoleChangeLinks serves POST /admin/rooms/{room}/links: op=make makes
// a link and shows its address this once (the answer is the page, not a
// redirect: the address is not kept to show again); op=revoke ends the
// link of field id. Both are audited.
func (s *Console) consoleChangeLinks(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.linksReady(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := views.LinksTextFor(Lang(r))
	lp, err := s.linksPage(ctx, r, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	f := r.PostForm
	switch f.Get("op") {
	case "make":
	case "revoke":
		id := f.Get("id")
		switch err := s.links.Revoke(ctx, name, id); {
		case errors.Is(err, bypass.ErrNoLink):
			lp.Error = t.ErrNoLink
			s.renderLinks(w, r, sess, http.StatusUnprocessableEntity, lp)
			return
		case err != nil:
			s.consoleFail(w, r, err)
			return
		}
		s.audit(ctx, audit.Entry{Actor: sess.Operator, Room: name, Action: "bypass.revoke", Target: id})
		s.afterLinks(w, r, sess, name, t.Revoked, "")
		return
	default:
		s.Error(w, r, http.StatusBadRequest, views.RoomsTextFor(Lang(r)).ErrBadAction)
		return
	}
	lp.Uses, lp.ExpiresAt = f.Get("uses"), f.Get("expiresAt")
	loc, _, _ := consoleZone(r)
	var spec bypass.Spec
	n, err := strconv.Atoi(strings.TrimSpace(lp.Uses))
	if err != nil || n < 1 || n > queue.MaxBypassUses {
		lp.Errors["uses"] = views.Fill(t.ErrUses, "max", strconv.Itoa(queue.MaxBypassUses))
	}
	spec.Uses = n
	if v := strings.TrimSpace(lp.ExpiresAt); v != "" {
		at, err := time.ParseInLocation(DatetimeLocal, v, loc)
		if err != nil {
			at, err = time.ParseInLocation(datetimeLocalSeconds, v, loc)
		}
		if err != nil || !at.After(s.clk.Now()) {
			lp.Errors["expiresAt"] = t.ErrExpires
		}
		spec.ExpiresAt = &at
	}
	var m bypass.Made
	if len(lp.Errors) == 0 {
		m, err = s.links.Make(ctx, name, spec)
		var inv *bypass.InvalidError
		switch {
		case errors.As(err, &inv):
			lp.Errors[inv.Field] = map[string]string{"uses": views.Fill(t.ErrUses, "max", strconv.Itoa(queue.MaxBypassUses)), "expiresAt": t.ErrExpires}[inv.Field]
		case errors.Is(err, queue.ErrTooManyLinks):
			lp.Error = t.ErrTooMany
			s.renderLinks(w, r, sess, http.StatusUnprocessableEntity, lp)
			return
		case err != nil:
			s.consoleFail(w, r, err)
			return
		}
	}
	if len(lp.Errors) > 0 {
		lp.Error = t.FixErrors
		s.renderLinks(w, r, sess, http.StatusUnprocessableEntity, lp)
		return
	}
	s.log.Info("test link made", "room", name, "by", sess.Operator, "uses", m.Uses)
	s.audit(ctx, audit.Entry{Actor: sess.Operator, Room: name, Action: "bypass.link", Target: m.ID,
		New: admin.CompactJSON(map[string]any{"uses": m.Uses, "expiresAt": m.ExpiresAt})})
	s.afterLinks(w, r, sess, name, views.Fill(t.Made, "n", strconv.Itoa(m.Uses)),
		cmp.Or(s.publicURL, s.baseURL(r))+"/r/"+name+"/bypass?t="+m.Token)
}

// afterLinks answers a change with the page as it is now, saying notice,
// and the new link's address (shown this once) when one was made.
func (s *Console) afterLinks(w http.ResponseWriter, r *http.Request, sess Session, name, notice, newLink string) {
	lp, err := s.linksPage(r.Context(), r, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	lp.Notice, lp.New = notice, newLink
	s.renderLinks(w, r, sess, http.StatusOK, lp)
}
