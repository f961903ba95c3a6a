package console

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"

	"waitingroom/server/share"
	"waitingroom/views"
)

// consoleShareQR serves GET /admin/rooms/{room}/share/{code}/qr.png and
// qr.svg: the QR code of the link's absolute short URL, for print. With
// ?download=1 it is an attachment named {room}-{code}.png (or .svg).
func (s *Console) consoleShareQR(svg bool) func(http.ResponseWriter, *http.Request, Session) {
	return func(w http.ResponseWriter, r *http.Request, _ Session) {
		name, ok := s.consoleShareReady(w, r)
		if !ok {
			return
		}
		t := views.ShareTextFor(Lang(r))
		code := r.PathValue("code")
		if !share.ValidCode(code) {
			s.Error(w, r, http.StatusNotFound, t.ErrNoLink)
			return
		}
		ctx := r.Context()
		l, err := s.shares.Follow(ctx, code, false)
		switch {
		case errors.Is(err, share.ErrNotFound), err == nil && l.Room != name:
			s.Error(w, r, http.StatusNotFound, t.ErrNoLink)
			return
		case err != nil:
			s.consoleFail(w, r, err)
			return
		}
		modules, err := share.QRModules(s.shortURL(r, code))
		if err != nil {
			s.consoleFail(w, r, err)
			return
		}
		var buf bytes.Buffer
		ctype, ext := "image/png", ".png"
		if svg {
			ctype, ext = "image/svg+xml", ".svg"
			err = share.WriteSVG(&buf, modules)
		} else {
			err = share.WritePNG(&buf, modules)
		}
		if err != nil {
			s.consoleFail(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Content-Length", strconv.Itoa(buf.Len()))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		disposition := "inline"
		if r.URL.Query().Get("download") == "1" {
			disposition = "attachment"
		}
		h.Set("Content-Disposition", disposition+`; filename="`+name+"-"+code+ext+`"`)
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(buf.Bytes())
		}
	}
}
