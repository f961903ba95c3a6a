package console

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"waitingroom/server/admin"
	"waitingroom/web/media"

	"waitingroom/server/room"
	"waitingroom/views"
)

// The console's branding page: every field of a room's room.Branding and
// its shop address, with uploads of its images, saved through saveRoom
// (validated, recorded, audited) like any other room write.

// BrandingBodyMax bounds the branding form: its images at their limits,
// and the text fields.
func BrandingBodyMax() int64 {
	return int64(media.LogoSlot.MaxBytes+media.OGImageSlot.MaxBytes+media.FaviconSlot.MaxBytes) + FormBodyMax
}

func brandingText(r *http.Request) views.BrandingText { return views.BrandingTextFor(Lang(r)) }

// brandingForm is the form of set as saved.
func brandingForm(name, csrf string, set room.Settings) views.BrandingForm {
	b := set.Branding
	return views.BrandingForm{Room: name, CSRF: csrf,
		Images:      map[string]string{media.LogoSlot.Field: b.Logo, media.OGImageSlot.Field: b.OGImage, media.FaviconSlot.Field: b.Favicon},
		AccentColor: b.AccentColor, AccentColorDark: b.AccentColorDark, Description: b.Description,
		DefaultLanguage: b.DefaultLanguage, ShopName: b.ShopName, ShopURL: set.ShopURL,
		EmbedOrigins: strings.Join(b.EmbedOrigins, "\n"), EmbedTarget: b.EmbedTarget, Listed: b.Listed,
		Limits: imageLimits(), Errors: map[string]string{}}
}

// imageLimits are the image fields' limits in KB.
func imageLimits() map[string]int {
	out := map[string]int{}
	for _, sl := range media.Slots {
		out[sl.Field] = sl.MaxBytes >> 10
	}
	return out
}

func (s *Console) renderBranding(w http.ResponseWriter, r *http.Request, sess Session, status int, f views.BrandingForm) {
	t := brandingText(r)
	f.JS = s.assetURL("console-branding.js")
	s.render(w, r, status, views.ConsoleBranding(s.consolePage(r, sess, views.Fill(t.Title, "room", f.Room), "rooms"), f))
}

// consoleBranding serves GET /admin/rooms/{room}/branding.
func (s *Console) consoleBranding(w http.ResponseWriter, r *http.Request, sess Session) {
	name, set, ok := s.consoleRoom(w, r)
	if !ok {
		return
	}
	f := brandingForm(name, sess.CSRF, set)
	if r.URL.Query().Get("saved") == "1" {
		f.Notice = brandingText(r).Saved
	}
	s.renderBranding(w, r, sess, http.StatusOK, f)
}

// consoleSaveBranding serves POST /admin/rooms/{room}/branding.
func (s *Console) consoleSaveBranding(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := brandingText(r)
	cur, err := s.rooms.Room(ctx, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	f, errs := s.readBrandingForm(ctx, r, sess, cur.Branding, t)
	f.Room, f.CSRF, f.Errors = name, sess.CSRF, errs
	refuse := func() {
		if f.Error == "" {
			f.Error = t.FixErrors
		}
		s.renderBranding(w, r, sess, http.StatusUnprocessableEntity, f)
	}
	origins := []string{}
	for l := range strings.Lines(f.EmbedOrigins) {
		if o := strings.ToLower(strings.TrimSpace(l)); o != "" {
			origins = append(origins, o)
		}
	}
	p := room.Patch{ShopURL: &f.ShopURL, BrandingPatch: room.BrandingPatch{
		Logo: ptr(f.Images[media.LogoSlot.Field]), OGImage: ptr(f.Images[media.OGImageSlot.Field]), Favicon: ptr(f.Images[media.FaviconSlot.Field]),
		AccentColor: &f.AccentColor, AccentColorDark: &f.AccentColorDark, Description: &f.Description,
		DefaultLanguage: &f.DefaultLanguage, ShopName: &f.ShopName, EmbedOrigins: &origins, EmbedTarget: &f.EmbedTarget, Listed: &f.Listed,
	}}
	// Every field's error at once, not one a submit.
	for field := range p.Apply(cur).Branding.FieldErrors() {
		if _, said := errs[field]; said {
			continue
		}
		if msg, ok := BrandingFieldError(t, field); ok {
			errs[field] = msg
		}
	}
	if len(errs) > 0 {
		refuse()
		return
	}
	_, err = s.roomWrites.Save(ctx, sess.Operator, name, admin.Write{Patch: p, Exist: admin.MustExist})
	var invalid *admin.InvalidError
	switch {
	case errors.As(err, &invalid):
		var field string
		if fe := (*room.FieldError)(nil); errors.As(err, &fe) {
			field = fe.Field
		}
		if msg, ok := BrandingFieldError(t, field); ok {
			f.Errors[field] = msg
		} else {
			// A setting this page does not show (an older record's): its
			// own words, which name it.
			f.Error = t.FixErrors + " " + invalid.Err.Error()
		}
		refuse()
		return
	case err != nil:
		s.consoleFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/rooms/"+name+"/branding?saved=1", http.StatusSeeOther)
}

func ptr[T any](v T) *T { return &v }

// BrandingFieldError is the message of a field that room validation
// refused, with its limit filled in.
func BrandingFieldError(t views.BrandingText, field string) (string, bool) {
	for _, sl := range media.Slots {
		if sl.Field == field {
			return t.ErrNoImage, true
		}
	}
	msg, ok := t.ErrField[field]
	n := map[string]int{"description": room.MaxDescriptionLen, "shopName": room.MaxShopNameLen, "embedOrigins": room.MaxEmbedOrigins}[field]
	return views.Fill(msg, "n", strconv.Itoa(n)), ok
}

// readBrandingForm reads the posted form as typed, keeps its uploads, and
// returns the errors of the fields that fail before validation: images
// refused, colours that are not colours or lack contrast (in the
// operator's language, next to the field).
func (s *Console) readBrandingForm(ctx context.Context, r *http.Request, sess Session, cur room.Branding, t views.BrandingText) (views.BrandingForm, map[string]string) {
	pf := r.PostForm
	get := func(k string, max int) string {
		v := strings.TrimSpace(pf.Get(k))
		if len(v) > max {
			v = strings.ToValidUTF8(v[:max], "")
		}
		return v
	}
	f := views.BrandingForm{
		Images:      map[string]string{},
		AccentColor: strings.ToLower(get("accentColor", 16)), AccentColorDark: strings.ToLower(get("accentColorDark", 16)),
		Description: get("description", 4*room.MaxDescriptionLen), DefaultLanguage: get("defaultLanguage", 8),
		ShopName: get("shopName", 4*room.MaxShopNameLen), ShopURL: get("shopURL", room.MaxShopURLLen+1),
		EmbedOrigins: get("embedOrigins", room.MaxEmbedOrigins*(room.MaxOriginLen+2)), EmbedTarget: get("embedTarget", 8),
		Listed: pf.Get("listed") == "1", Limits: imageLimits(),
	}
	errs := map[string]string{}
	saved := map[string]string{media.LogoSlot.Field: cur.Logo, media.OGImageSlot.Field: cur.OGImage, media.FaviconSlot.Field: cur.Favicon}
	for _, slot := range media.Slots {
		path := get(slot.Field, 128)
		if pf.Get("remove-"+slot.Field) == "1" {
			path = ""
		}
		kept, has, refused := s.keepUpload(ctx, r, sess.Operator, slot)
		switch {
		case refused == media.RefusedNotKept:
			errs[slot.Field] = t.ErrNoImage
		case refused != "":
			errs[slot.Field] = ImageRefusal(t.ErrImage, slot, refused)
		case has:
			path = kept
		case path != "" && path != saved[slot.Field] && !s.images.Has(ctx, path):
			// A path typed or kept from an earlier form: it must name an
			// image this server holds.
			errs[slot.Field] = t.ErrNoImage
			path = saved[slot.Field]
		}
		f.Images[slot.Field] = path
	}
	for _, a := range []struct {
		field, colour string
		scheme        room.Scheme
	}{{"accentColor", f.AccentColor, room.Light}, {"accentColorDark", f.AccentColorDark, room.Dark}} {
		err := room.CheckAccent(a.colour, a.scheme)
		var low *room.ContrastError
		switch {
		case errors.As(err, &low):
			scheme := t.SchemeLight
			if low.Scheme == room.Dark.Name {
				scheme = t.SchemeDark
			}
			msg := views.Fill(t.ErrContrast, "scheme", scheme)
			msg = views.Fill(views.Fill(msg, "fg", low.Foreground), "bg", low.Background)
			msg = views.Fill(msg, "ratio", strconv.FormatFloat(math.Floor(low.Ratio*100)/100, 'f', 2, 64))
			msg = views.Fill(msg, "min", strconv.FormatFloat(low.Min, 'f', 1, 64))
			if low.Suggestion != "" {
				msg += " " + views.Fill(t.ErrSuggest, "colour", low.Suggestion)
			}
			errs[a.field] = msg
		case err != nil:
			errs[a.field] = t.ErrColour
		}
	}
	return f, errs
}

// keepUpload checks and keeps the file posted for slot, as actor: its
// path when kept. has is false when no file was posted; refused is the
// imageErr* code of a file refused, or media.RefusedNotKept when it could not
// be kept (no image store, or the store failed, which is logged).
func (s *Console) keepUpload(ctx context.Context, r *http.Request, actor string, slot media.Slot) (path string, has bool, refused string) {
	data, has, err := uploadOf(r, slot)
	switch {
	case err != nil:
		return "", true, media.RefusedTooLarge
	case !has:
		return "", false, ""
	case s.images == nil:
		return "", true, media.RefusedNotKept
	}
	path, err = s.images.Put(ctx, actor, slot, data)
	var bad *media.RefusedError
	switch {
	case errors.As(err, &bad):
		return "", true, bad.Code
	case err != nil:
		s.log.Error("console: keep image", "field", slot.Field, "err", err)
		return "", true, media.RefusedNotKept
	}
	return path, true, ""
}

// uploadOf returns the file posted for slot, if any, read up to its
// limit; an error when it is over.
func uploadOf(r *http.Request, slot media.Slot) ([]byte, bool, error) {
	if r.MultipartForm == nil || len(r.MultipartForm.File[slot.Field+"-file"]) == 0 {
		return nil, false, nil
	}
	fh := r.MultipartForm.File[slot.Field+"-file"][0]
	if fh.Size == 0 {
		return nil, false, nil // the browser's empty file input
	}
	if fh.Size > int64(slot.MaxBytes) {
		return nil, true, &media.RefusedError{Field: slot.Field, Code: media.RefusedTooLarge}
	}
	file, err := fh.Open()
	if err != nil {
		return nil, true, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, int64(slot.MaxBytes)+1))
	if err != nil || len(data) > slot.MaxBytes {
		return nil, true, &media.RefusedError{Field: slot.Field, Code: media.RefusedTooLarge}
	}
	return data, true, nil
}

// ImageRefusal words the refusal code of an upload for slot from msgs
// (by code), with the slot's limits filled in.
func ImageRefusal(msgs map[string]string, slot media.Slot, code string) string {
	msg := views.Fill(msgs[code], "kb", strconv.Itoa(slot.MaxBytes>>10))
	msg = views.Fill(msg, "side", strconv.Itoa(slot.MaxSide))
	return views.Fill(msg, "pixels", groupDigits(slot.MaxPixels))
}

// groupDigits writes n with a comma between groups of three digits.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// brandingTooLarge answers a branding form over BrandingBodyMax: the form
// again, with the saved settings (the body was cut, so nothing typed can
// be kept) and a message that gives each image's limit. It changes
// nothing.
func (s *Console) brandingTooLarge(w http.ResponseWriter, r *http.Request) {
	sess, err := s.session(r)
	if err != nil {
		s.Error(w, r, http.StatusRequestEntityTooLarge, consoleText(r).ErrTooLarge)
		return
	}
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	t := brandingText(r)
	f := brandingForm(name, sess.CSRF, set)
	msg := t.ErrFormTooLarge
	for _, slot := range media.Slots {
		msg = views.Fill(msg, slot.Field, strconv.Itoa(slot.MaxBytes>>10))
	}
	f.Error = msg
	s.renderBranding(w, r, sess, http.StatusRequestEntityTooLarge, f)
}
