package web

import (
	"encoding/json"
	"strings"
	"testing"

	"waitingroom/web/gatemode"
	"waitingroom/web/response"
)

// TestGateRedeemRetry: a redeem with the caller's session id is
// idempotent for that id (the shop's retry after a timeout), and 409 for
// any other; a malformed id is a 400 before anything is spent.
func TestGateRedeemRetry(t *testing.T) {
	g := newGateHarness(t, nil)
	redeem := "/api/rooms/" + g.room + "/passes/redeem"
	p := g.newPass(t)
	sid, other := randomToken(t)[:22], randomToken(t)[:22]
	body := func(session string) string { return `{"pass":"` + p + `","session":"` + session + `"}` }
	var first gatemode.SessionView
	for _, tc := range []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"too short an id", body("abc"), 400, "bad_request"},
		{"too long an id", body(sid + "A"), 400, "bad_request"},
		{"not base64url", body(strings.Repeat("+", 22)), 400, "bad_request"},
		{"not a string", `{"pass":"` + p + `","session":1}`, 400, "bad_json"},
		{"first", body(sid), 200, ""},
		{"retry with the same id", body(sid), 200, ""},
		{"again with the same id", body(sid), 200, ""},
		{"another id", body(other), 409, "pass_used"},
		{"no id", `{"pass":"` + p + `"}`, 409, "pass_used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.do(t, "POST", redeem, tc.body, g.keyed(g.apiKey), nil)
			var e response.Error
			json.Unmarshal([]byte(r.body), &e)
			if r.status != tc.status || e.Code != tc.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, tc.status, tc.code)
			}
			if r.status != 200 {
				return
			}
			var v map[string]gatemode.SessionView
			r.json(t, &v)
			s := v["session"]
			if s.ID != sid {
				t.Fatalf("session %q, want the caller's %q", s.ID, sid)
			}
			if first.ID == "" {
				first = s
			} else if s != first {
				t.Fatalf("retry: %+v, want %+v", s, first)
			}
		})
	}
	// The session is one, holding one slot.
	if n, err := g.eng.ActiveSessions(t.Context(), g.room); err != nil || n != 1 {
		t.Fatalf("%d live sessions (%v), want 1", n, err)
	}
}
