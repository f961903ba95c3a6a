package console

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"waitingroom/server/admin"
	"waitingroom/web/request"

	"waitingroom/server/audit"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/share"
	"waitingroom/views"
)

// ShareLinks are the rooms' short links (server/share's Links).
type ShareLinks interface {
	Create(ctx context.Context, l share.Link) (share.Link, error)
	List(ctx context.Context, room string) ([]share.Link, error)
	Delete(ctx context.Context, room, code string) (share.Link, error)
	// Follow returns code's link, counting a click when click is set.
	Follow(ctx context.Context, code string, click bool) (share.Link, error)
}

// shortURL is the absolute short link of code, on the console's origin
// (baseURL).
func (s *Console) shortURL(r *http.Request, code string) string {
	return s.baseURL(r) + "/s/" + code
}

// shareFields are the form's fields, in order, with their UTM values.
func shareFields(t views.ShareText, l share.Link) []views.ShareField {
	return []views.ShareField{
		{Name: "utm_source", Label: t.Source, Hint: t.SourceHint, Value: l.Source, Required: true},
		{Name: "utm_medium", Label: t.Medium, Hint: t.MediumHint, Value: l.Medium},
		{Name: "utm_campaign", Label: t.Campaign, Hint: t.CampaignHnt, Value: l.Campaign},
		{Name: "utm_content", Label: t.Content, Hint: t.ContentHint, Value: l.Content},
		{Name: "utm_term", Label: t.Term, Hint: t.TermHint, Value: l.Term},
	}
}

// parseShareForm reads the form's UTM values, trimmed, utm_source and
// utm_medium in lower case, and the errors of the fields that are not
// valid UTM values (request.ValidUTM's rule) or, for utm_source and utm_medium,
// that the line would count under (other) (queue.CountedValue).
func parseShareForm(r *http.Request, t views.ShareText) (share.Link, map[string]string) {
	f := r.PostForm
	get := func(k string) string { return strings.TrimSpace(f.Get(k)) }
	l := share.Link{Source: get("utm_source"), Medium: get("utm_medium"), Campaign: get("utm_campaign"),
		Content: get("utm_content"), Term: get("utm_term")}
	errs := map[string]string{}
	for k, v := range map[string]string{"utm_source": l.Source, "utm_medium": l.Medium, "utm_campaign": l.Campaign,
		"utm_content": l.Content, "utm_term": l.Term} {
		if !request.ValidUTM(order.UTM{Source: v}) {
			errs[k] = views.Fill(t.ErrBadValue, "n", strconv.Itoa(request.MaxUTM))
		}
	}
	if l.Source == "" && errs["utm_source"] == "" {
		errs["utm_source"] = t.ErrRequired
	}
	// The source and medium in lower case, and only values the line counts
	// apart (queue.CountedValue): any other would count under (other).
	for _, f := range []struct {
		name string
		v    *string
	}{{"utm_source", &l.Source}, {"utm_medium", &l.Medium}} {
		if *f.v == "" || errs[f.name] != "" {
			continue
		}
		lower, ok := queue.CountedValue(*f.v)
		*f.v = lower
		if !ok {
			errs[f.name] = t.ErrOther
		}
	}
	return l, errs
}

// sharePage is room name's share page: its links and an empty form.
func (s *Console) sharePage(ctx context.Context, r *http.Request, sess Session, name string) (views.SharePage, error) {
	if _, err := s.rooms.Room(ctx, name); err != nil {
		return views.SharePage{}, err
	}
	ls, err := s.shares.List(ctx, name)
	if err != nil {
		return views.SharePage{}, err
	}
	t, lang := views.ShareTextFor(Lang(r)), Lang(r)
	sp := views.SharePage{Room: name, CSRF: sess.CSRF, Fields: shareFields(t, share.Link{}), MaxValue: request.MaxUTM}
	base := s.baseURL(r)
	loc, _, _ := consoleZone(r) // the orders' and audit log's zone
	if s.publicURL == "" {
		sp.Warning = views.Fill(t.NoPublicURL, "base", base)
	}
	for _, l := range ls {
		sp.Links = append(sp.Links, views.ShareRow{Code: l.Code, ShortURL: base + "/s/" + l.Code, LongURL: base + readableTarget(l),
			Clicks: l.Clicks, CreatedBy: l.CreatedBy, CreatedAt: views.ConsoleTime(l.CreatedAt, loc, lang),
			AtISO: l.CreatedAt.UTC().Format(time.RFC3339)})
	}
	return sp, nil
}

// consoleShareReady answers 503 when no share links are configured, and
// 404 for a path that names no valid room.
func (s *Console) consoleShareReady(w http.ResponseWriter, r *http.Request) (string, bool) {
	if s.shares == nil {
		s.Error(w, r, http.StatusServiceUnavailable, views.ShareTextFor(Lang(r)).ErrNoLinks)
		return "", false
	}
	return s.consoleRoomName(w, r)
}

func (s *Console) renderShare(w http.ResponseWriter, r *http.Request, sess Session, status int, sp views.SharePage) {
	t := views.ShareTextFor(Lang(r))
	s.render(w, r, status, views.ConsoleShare(s.consolePage(r, sess, views.Fill(t.Title, "room", sp.Room), "rooms"), sp))
}

// consoleShare serves GET /admin/rooms/{room}/share.
func (s *Console) consoleShare(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleShareReady(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	sp, err := s.sharePage(ctx, r, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	t, q := views.ShareTextFor(Lang(r)), r.URL.Query()
	if c := q.Get("created"); share.ValidCode(c) {
		sp.Notice, sp.Created = views.Fill(t.Created, "url", s.shortURL(r, c)), c
	} else if c := q.Get("deleted"); share.ValidCode(c) {
		sp.Notice = views.Fill(t.Deleted, "code", c)
	}
	s.renderShare(w, r, sess, http.StatusOK, sp)
}

// consoleChangeShare serves POST /admin/rooms/{room}/share: op=delete
// with confirm=1 deletes the link of field code (without confirm it asks
// first, renderShareDelete), anything else creates a link from the form.
// Both are audited.
func (s *Console) consoleChangeShare(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleShareReady(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := views.ShareTextFor(Lang(r))
	sp, err := s.sharePage(ctx, r, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	if r.PostForm.Get("op") == "delete" {
		code := r.PostForm.Get("code")
		if !share.ValidCode(code) {
			s.Error(w, r, http.StatusNotFound, t.ErrNoLink)
			return
		}
		if r.PostForm.Get("confirm") != "1" {
			s.renderShareDelete(ctx, w, r, sess, name, code)
			return
		}
		old, err := s.shares.Delete(ctx, name, code)
		switch {
		case err != nil:
			s.consoleFail(w, r, err)
		default:
			s.log.Info("share link deleted", "room", name, "by", sess.Operator, "code", code)
			s.audit(ctx, audit.Entry{Actor: sess.Operator, Room: name, Action: "share.delete", Target: code, Old: admin.CompactJSON(shareAudit(old))})
			http.Redirect(w, r, "/admin/rooms/"+name+"/share?deleted="+code, http.StatusSeeOther)
		}
		return
	}
	l, errs := parseShareForm(r, t)
	sp.Fields = shareFields(t, l)
	if len(errs) == 0 {
		l.Room, l.CreatedBy = name, sess.Operator
		created, err := s.shares.Create(ctx, l)
		switch {
		case err == nil:
			s.log.Info("share link created", "room", name, "by", sess.Operator, "code", created.Code)
			s.audit(ctx, audit.Entry{Actor: sess.Operator, Room: name, Action: "share.create", Target: created.Code, New: admin.CompactJSON(shareAudit(created))})
			http.Redirect(w, r, "/admin/rooms/"+name+"/share?created="+created.Code, http.StatusSeeOther)
			return
		case errors.Is(err, share.ErrTooMany):
			sp.Error = views.Fill(t.ErrFull, "n", strconv.Itoa(share.MaxPerRoom))
			s.renderShare(w, r, sess, http.StatusConflict, sp)
			return
		default:
			s.consoleFail(w, r, err)
			return
		}
	}
	for i := range sp.Fields {
		sp.Fields[i].Error = errs[sp.Fields[i].Name]
	}
	sp.Error = t.FixErrors
	s.renderShare(w, r, sess, http.StatusUnprocessableEntity, sp)
}

// shareAudit is what the audit log keeps of a link: where it leads.
func shareAudit(l share.Link) map[string]string {
	return map[string]string{"code": l.Code, "target": l.Target()}
}

// consoleShareDelete serves GET /admin/rooms/{room}/share/{code}/delete:
// the confirmation of a link's deletion.
func (s *Console) consoleShareDelete(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleShareReady(w, r)
	if !ok {
		return
	}
	code := r.PathValue("code")
	if !share.ValidCode(code) {
		s.Error(w, r, http.StatusNotFound, views.ShareTextFor(Lang(r)).ErrNoLink)
		return
	}
	ctx := r.Context()
	s.renderShareDelete(ctx, w, r, sess, name, code)
}

// renderShareDelete asks before room name's link code is deleted, naming
// its short link and clicks; 404 when the room has no such link.
func (s *Console) renderShareDelete(ctx context.Context, w http.ResponseWriter, r *http.Request, sess Session, name, code string) {
	t := views.ShareTextFor(Lang(r))
	ls, err := s.shares.List(ctx, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	for _, l := range ls {
		if l.Code == code {
			d := views.ShareDelete{Room: name, CSRF: sess.CSRF, Code: code, ShortURL: s.shortURL(r, code), Clicks: l.Clicks}
			s.render(w, r, http.StatusOK, views.ConsoleShareDelete(s.consolePage(r, sess, views.Fill(t.ConfirmTitle, "code", code), "rooms"), d))
			return
		}
	}
	s.Error(w, r, http.StatusNotFound, t.ErrNoLink)
}

// readableTarget is where l leads, written for people: its UTM values as
// typed, not percent-encoded (the page escapes them), source first.
func readableTarget(l share.Link) string {
	p, sep := "/r/"+l.Room, "?"
	for _, kv := range [...][2]string{{"utm_source", l.Source}, {"utm_medium", l.Medium}, {"utm_campaign", l.Campaign},
		{"utm_content", l.Content}, {"utm_term", l.Term}} {
		if kv[1] != "" {
			p += sep + kv[0] + "=" + kv[1]
			sep = "&"
		}
	}
	return p
}
