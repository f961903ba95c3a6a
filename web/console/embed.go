package console

import (
	"bytes"
	"net/http"

	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/response"
)

// embedSnippet is the one line a host page pastes: base is the site's
// absolute origin (PUBLIC_URL, else the host the operator reached).
func embedSnippet(base, name string) string {
	return `<script src="` + base + `/static/embed.js" data-room="` + name + `" async></script>`
}

// consoleEmbed serves GET /admin/rooms/{room}/embed: the snippet to copy,
// the room's embed settings (edited on its branding page) and a preview.
func (s *Console) consoleEmbed(w http.ResponseWriter, r *http.Request, sess Session) {
	name, set, ok := s.consoleRoom(w, r)
	if !ok {
		return
	}
	t := views.EmbedTextFor(Lang(r))
	var origins []string
	for _, o := range set.EmbedOrigins {
		if room.ValidOrigin(o) {
			origins = append(origins, o)
		}
	}
	p := views.EmbedPage{Page: s.consolePage(r, sess, views.Fill(t.Title, "room", name), "rooms"), T: t, Room: name,
		Snippet: embedSnippet(s.baseURL(r), name), Origins: origins, SameTab: set.EmbedTarget == room.EmbedSameTab}
	var buf bytes.Buffer
	if err := views.ConsoleEmbed(p).Render(r.Context(), &buf); err != nil {
		s.log.Error("render", "path", r.URL.Path, "err", err)
		response.WriteError(w, http.StatusInternalServerError, "internal", "The page could not be rendered.")
		return
	}
	response.HTMLHeaders(w)
	// This page alone frames: its preview of the widget, from this origin.
	w.Header().Set("Content-Security-Policy", response.ContentSecurityPolicy+"; frame-src 'self'")
	w.Write(buf.Bytes())
}
