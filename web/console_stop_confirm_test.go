package web

import (
	"context"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestStopActionsAskForConfirmation: Drain and Close turn buyers away, so
// their forms carry a confirmation box; a post without it ticked is
// refused with a clear message and changes nothing.
func TestStopActionsAskForConfirmation(t *testing.T) {
	rc := newRoomsConsole(t)
	ctx := context.Background()
	base := "/admin/rooms/" + rc.room
	_, page := rc.get(t, base+"/settings", "en")
	if n := strings.Count(page, `<input type="checkbox" name="confirm" value="1" required>`); n != 2 || !strings.Contains(page, "I understand buyers can no longer join") {
		t.Fatalf("%d confirmation boxes on the settings page, want 2 (drain, close): %s", n, page)
	}
	before, _ := rc.eng.Room(ctx, rc.room)
	for _, action := range []string{"drain", "close"} {
		for _, tc := range []struct {
			lang, confirm, want string
		}{
			{"en", "", "tick the confirmation box"},
			{"en", "yes", "tick the confirmation box"},
			{"ko", "", "확인란에 체크한 뒤"},
		} {
			f := url.Values{"action": {action}}
			if tc.confirm != "" {
				f.Set("confirm", tc.confirm)
			}
			resp, body := rc.post(t, base+"/action", f, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != 422 || !strings.Contains(body, tc.want) {
				t.Fatalf("%s without confirmation (%q, %s): %d %.300s", action, tc.confirm, tc.lang, resp.StatusCode, body)
			}
			if got, _ := rc.eng.Room(ctx, rc.room); !reflect.DeepEqual(got, before) {
				t.Fatalf("an unconfirmed %s changed the room: %+v", action, got)
			}
		}
	}
	// Pause needs no confirmation; close with it ticked closes.
	if resp, body := rc.post(t, base+"/action", url.Values{"action": {"pause"}}, nil); resp.StatusCode != 303 {
		t.Fatalf("pause: %d %.300s", resp.StatusCode, body)
	}
	if resp, body := rc.post(t, base+"/action", url.Values{"action": {"close"}, "confirm": {"1"}}, nil); resp.StatusCode != 303 {
		t.Fatalf("confirmed close: %d %.300s", resp.StatusCode, body)
	}
	if got, _ := rc.eng.Room(ctx, rc.room); got.Mode != "closed" {
		t.Fatalf("mode %q after a confirmed close", got.Mode)
	}
}
