package web

import (
	"errors"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitingroom/server/challenge"
	"waitingroom/server/room"
)

var waitRefresh = regexp.MustCompile(`<meta http-equiv="refresh" content="(\d+);url=([^"]+)"`)

// waitToken reads the wait page's token from its refresh address, or its
// join form.
func waitToken(t *testing.T, page string) string {
	t.Helper()
	if m := waitRefresh.FindStringSubmatch(page); m != nil {
		u, err := url.Parse(html.UnescapeString(m[2]))
		if err != nil {
			t.Fatal(err)
		}
		return u.Query().Get("w")
	}
	if m := regexp.MustCompile(`name="wait" value="([^"]+)"`).FindStringSubmatch(page); m != nil {
		return html.UnescapeString(m[1])
	}
	t.Fatalf("no wait token in the page:\n%s", page)
	return ""
}

// getPage GETs path in lang without following redirects.
func (h *harness) getPage(t *testing.T, path, lang string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.srv.URL+path, nil)
	req.Header.Set("Accept-Language", lang)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp, readBody(t, resp)
}

// places counts the room's places.
func (h *harness) places(t *testing.T) int64 {
	t.Helper()
	st, err := h.eng.Stats(t.Context(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	return st.Issued + st.Prequeued
}

// TestJoinWithoutJavaScriptWaits walks the no-JavaScript join of a room
// that asks a proof of work: the join form answers a wait page (no
// cookie, no place) that refreshes itself to the wait's address; before
// it is due that says the seconds left, then offers the join form with
// the token; the form joins and lands on the status page. The token joins
// once: a replay, as another visitor, is refused in words.
// testNet is the client network of the harness's requests (127.0.0.1).
const testNet = "127.0.0.0/24"

func TestJoinWithoutJavaScriptWaits(t *testing.T) {
	t.Parallel()
	h, keys := clockedChallengeHarness(t, room.ChallengeAuto)
	join := "/r/" + h.room + "/join"

	resp := h.postForm(t, join+"?utm_source=news", nil, nil, "en")
	page := readBody(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Set-Cookie") != "" || resp.Header.Get("Cache-Control") != "no-store" ||
		resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("join without a proof: %d %v, want no-store, no-referrer and no cookie", resp.StatusCode, resp.Header)
	}
	m := waitRefresh.FindStringSubmatch(page)
	if m == nil || m[1] != "2" || !strings.HasPrefix(html.UnescapeString(m[2]), "/r/"+h.room+"/wait?") ||
		!strings.Contains(m[2], "utm_source=news") {
		t.Fatalf("the wait page does not refresh to its address in 2 s (with the utm fields):\n%s", page)
	}
	for _, want := range []string{`<html lang="en"`, "One moment before you join", "Please wait 2", "this page moves on by itself", `id="wr-again"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the wait page lacks %q", want)
		}
	}
	if strings.Contains(page, `name="wait"`) || h.places(t) != 0 {
		t.Fatal("the wait page offers the join before it is due, or a place was taken")
	}
	token := waitToken(t, page)
	wt, err := keys.VerifyWait(token, h.room, testNet, h.clock.Now())
	if left := wt.NotBefore.Sub(h.clock.Now()); !errors.Is(err, challenge.ErrEarly) || left > 2*time.Second || left < time.Second {
		t.Fatalf("token: %+v %v, want due in 2 s", wt, err)
	}
	again := html.UnescapeString(m[2])

	// Before it is due: the seconds left, and the refresh again.
	resp, page = h.getPage(t, again, "en")
	if resp.StatusCode != 200 || !waitRefresh.MatchString(page) || !strings.Contains(page, "Please wait ") || strings.Contains(page, `name="wait"`) ||
		resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("the wait before it is due: %d\n%s", resp.StatusCode, page)
	}
	// Posted early, the token is the wait again, with the seconds left.
	resp = h.postForm(t, join, url.Values{"wait": {token}}, nil, "en")
	if early := readBody(t, resp); resp.StatusCode != 200 || !strings.Contains(early, "Please wait ") || h.places(t) != 0 || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("an early join: %d, %d places\n%s", resp.StatusCode, h.places(t), early)
	}

	h.clock.Advance(wt.NotBefore.Sub(h.clock.Now())) // the wait is due
	resp, page = h.getPage(t, again, "en")
	if resp.StatusCode != 200 || waitRefresh.MatchString(page) || !strings.Contains(page, "You can join the line now.") ||
		!strings.Contains(page, `action="/r/`+h.room+`/join?utm_source=news"`) || waitToken(t, page) != token {
		t.Fatalf("the due wait does not offer the join form:\n%s", page)
	}

	resp = h.postForm(t, join+"?utm_source=news", url.Values{"wait": {token}}, nil, "en")
	c := reply{header: resp.Header}.cookie()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/r/"+h.room+"/status?utm_source=news" || c == nil {
		t.Fatalf("join with the due token: %d to %q, cookie %v", resp.StatusCode, resp.Header.Get("Location"), c)
	}
	st := h.do(t, "GET", "/r/"+h.room+"/status", "", map[string]string{"Accept-Language": "en"}, c)
	if st.status != 200 || !strings.Contains(st.body, "You are next") || h.places(t) != 1 {
		t.Fatalf("status after the join: %d, %d places\n%s", st.status, h.places(t), st.body)
	}
	// The same visitor posting it again (a double click) keeps its place.
	if resp := h.postForm(t, join, url.Values{"wait": {token}}, c, "en"); resp.StatusCode != http.StatusSeeOther || h.places(t) != 1 {
		t.Errorf("the joined visitor's second post: %d, %d places", resp.StatusCode, h.places(t))
	}
	// Another visitor replaying it is refused, in their language.
	resp = h.postForm(t, join, url.Values{"wait": {token}}, nil, "ko")
	if replay := readBody(t, resp); resp.StatusCode != http.StatusConflict || !strings.Contains(replay, "이미 사용한 참여입니다") ||
		!strings.Contains(replay, `<html lang="ko"`) || resp.Header.Get("Set-Cookie") != "" || h.places(t) != 1 {
		t.Errorf("a replay: %d, %d places\n%s", resp.StatusCode, h.places(t), replay)
	}
}

// TestWaitTokensRefused: a tampered, another room's, an expired or a
// missing token neither joins nor shows a join form, on the wait page or
// posted; each says why, in the visitor's language.
func TestWaitTokensRefused(t *testing.T) {
	t.Parallel()
	h, keys := challengeHarness(t, room.ChallengeAuto)
	due := challenge.NewWait(h.room, testNet, time.Now().Add(-time.Second))
	good := keys.SignWait(due)
	tampered := []byte(good)
	tampered[len(tampered)-5] ^= 0x01
	other, _ := challenge.Derive([]byte("another deployment"), "test")
	otherNS, _ := challenge.Derive([]byte("test-challenge-secret"), "another-namespace")
	for _, tc := range []struct {
		name, token string
		status      int
		en, ko      string
	}{
		{"tampered", string(tampered), 400, "This join is not valid.", "올바른 참여가 아닙니다"},
		{"signed elsewhere", other.SignWait(due), 400, "This join is not valid.", "올바른 참여가 아닙니다"},
		{"another namespace's, same secret", otherNS.SignWait(due), 400, "This join is not valid.", "올바른 참여가 아닙니다"},
		{"given to another network", keys.SignWait(challenge.NewWait(h.room, "203.0.113.0/24", time.Now().Add(-time.Second))), 400,
			"given to another network", "다른 네트워크(다른 와이파이나 모바일 연결)에서 받은 참여입니다"},
		{"MAC cut short", good[:len(good)-1], 400, "This join is not valid.", "올바른 참여가 아닙니다"},
		{"another room's", keys.SignWait(challenge.NewWait("another-room", testNet, time.Now().Add(-time.Second))), 400, "for another waiting room", "다른 대기실의 참여입니다"},
		{"expired", keys.SignWait(challenge.NewWait(h.room, testNet, time.Now().Add(-challenge.WaitTTL-time.Second))), 410, "This join has expired", "참여 시간이 지났습니다"},
		{"garbage", "<script>alert(1)</script>", 400, "This join is not valid.", "올바른 참여가 아닙니다"},
		{"too long", strings.Repeat("a", 1000), 400, "This join is not valid.", "올바른 참여가 아닙니다"},
	} {
		for _, lang := range []string{"en", "ko"} {
			want := tc.en
			if lang == "ko" {
				want = tc.ko
			}
			resp, page := h.getPage(t, "/r/"+h.room+"/wait?w="+url.QueryEscape(tc.token), lang)
			if resp.StatusCode != tc.status || !strings.Contains(page, want) || strings.Contains(page, `name="wait"`) ||
				!strings.Contains(page, `<html lang="`+lang+`"`) || strings.Contains(page, "<script>alert") {
				t.Errorf("%s, wait page in %s: %d, want %d and %q\n%.600s", tc.name, lang, resp.StatusCode, tc.status, want, page)
			}
			resp = h.postForm(t, "/r/"+h.room+"/join", url.Values{"wait": {tc.token}}, nil, lang)
			if posted := readBody(t, resp); resp.StatusCode != tc.status || !strings.Contains(posted, want) || resp.Header.Get("Set-Cookie") != "" {
				t.Errorf("%s, posted in %s: %d, want %d and %q", tc.name, lang, resp.StatusCode, tc.status, want)
			}
		}
	}
	resp, page := h.getPage(t, "/r/"+h.room+"/wait", "en")
	if resp.StatusCode != 400 || !strings.Contains(page, "This join is not valid.") {
		t.Errorf("the wait page without a token: %d", resp.StatusCode)
	}
	if n := h.places(t); n != 0 {
		t.Fatalf("refused tokens took %d places", n)
	}
	// Posted from another site, it is refused before anything is read.
	req, _ := http.NewRequest("POST", h.srv.URL+"/r/"+h.room+"/join", strings.NewReader(url.Values{"wait": {good}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" || h.places(t) != 0 {
		t.Fatalf("a cross-site join: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// The good one still joins: the refusals used nothing up.
	if resp := h.postForm(t, "/r/"+h.room+"/join", url.Values{"wait": {good}}, nil, "en"); resp.StatusCode != http.StatusSeeOther || h.places(t) != 1 {
		t.Fatalf("the due token: %d, %d places", resp.StatusCode, h.places(t))
	}
}

// TestWaitsAreSpacedPerNetwork: two quick no-JavaScript joins from one
// network wait apart (the second is due WaitSpacing later), and so the
// wait path lets a network in no faster than twice a second.
func TestWaitsAreSpacedPerNetwork(t *testing.T) {
	t.Parallel()
	h, keys := challengeHarness(t, room.ChallengeAuto)
	var due [3]time.Time
	for i := range due {
		resp := h.postForm(t, "/r/"+h.room+"/join", nil, nil, "en")
		wt, err := keys.VerifyWait(waitToken(t, readBody(t, resp)), h.room, testNet, time.Now())
		if !errors.Is(err, challenge.ErrEarly) {
			t.Fatalf("join %d: %v", i, err)
		}
		due[i] = wt.NotBefore
	}
	for i := 1; i < len(due); i++ {
		if gap := due[i].Sub(due[i-1]); gap < 500*time.Millisecond || gap > 600*time.Millisecond {
			t.Errorf("join %d is due %v after the one before, want 500 ms", i, gap)
		}
	}
}

// TestJoinFormWithAProof: the join form's altcha field joins at once;
// without a challenge, the join form joins at once too.
func TestJoinFormWithAProof(t *testing.T) {
	h, _ := challengeHarness(t, room.ChallengeAuto)
	payload := solvePayload(t, h.fetchChallenge(t))
	resp := h.postForm(t, "/r/"+h.room+"/join", url.Values{"altcha": {payload}}, nil, "en")
	if resp.StatusCode != http.StatusSeeOther || (reply{header: resp.Header}).cookie() == nil || h.places(t) != 1 {
		t.Fatalf("join with a solved challenge: %d, %d places", resp.StatusCode, h.places(t))
	}
	// Posted again without a cookie, it is refused: a replay never hands
	// out the visitor it made, nor a second place.
	resp = h.postForm(t, "/r/"+h.room+"/join", url.Values{"altcha": {payload}}, nil, "en")
	if resp.StatusCode != http.StatusPreconditionRequired || (reply{header: resp.Header}).cookie() != nil || h.places(t) != 1 {
		t.Errorf("its replay: %d, %d places", resp.StatusCode, h.places(t))
	}
	off := newHarness(t, nil)
	if resp := off.postForm(t, "/r/"+off.room+"/join", nil, nil, "en"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("join in a room without challenge: %d", resp.StatusCode)
	}
}
