package console

import (
	"net/http"

	"waitingroom/server/room"
	"waitingroom/views"
)

// gateFieldErrors adds to errs the error of each gate field that patch p
// makes invalid on settings cur, in the console's language: every one at
// once, where Validate names only the first.
func gateFieldErrors(p room.Patch, cur room.Settings, errs map[string]string, r *http.Request) {
	g := views.GateFormTextFor(Lang(r))
	for field := range p.Apply(cur).Gate.FieldErrors() {
		if _, typed := errs[field]; !typed {
			errs[field] = g.Err[field]
		}
	}
}

// consoleNewAPIKey serves POST /admin/rooms/{room}/apikey: the room gets
// a new API key, shown once on the settings page it answers (never
// redirected to, never cached).
func (s *Console) consoleNewAPIKey(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleRoomName(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	key, err := s.newAPIKey(ctx, sess.Operator, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	f, _, err := s.roomForm(ctx, sess, name, r.URL.Query().Get("tz"))
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	f.NewAPIKey = key
	s.renderRoomForm(w, r, sess, http.StatusCreated, f)
}
