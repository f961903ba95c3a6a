package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitingroom/server/challenge"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/web/response"

	altcha "github.com/altcha-org/altcha-lib-go"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// challengeHarness is a harness whose room asks a proof of work (mode),
// with challenge keys the test holds.
func challengeHarness(t *testing.T, mode string) (*harness, *challenge.Keys) {
	t.Helper()
	return challengeHarnessWith(t, mode, nil)
}

// clockedChallengeHarness is challengeHarness on the fake clock of
// newClockedHarness.
func clockedChallengeHarness(t *testing.T, mode string) (*harness, *challenge.Keys) {
	t.Helper()
	return challengeHarnessOn(t, newClockedHarness, mode, nil)
}

// challengeHarnessWith is challengeHarness with options of its own.
func challengeHarnessWith(t *testing.T, mode string, mut func(*Options)) (*harness, *challenge.Keys) {
	t.Helper()
	return challengeHarnessOn(t, newHarness, mode, mut)
}

// challengeHarnessOn is challengeHarnessWith on the harness that start
// returns.
func challengeHarnessOn(t *testing.T, start func(*testing.T, func(*Options)) *harness, mode string, mut func(*Options)) (*harness, *challenge.Keys) {
	t.Helper()
	keys, err := challenge.Derive([]byte("test-challenge-secret"), "test")
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, func(o *Options) {
		o.Challenges = keys
		if mut != nil {
			mut(o)
		}
	})
	set, err := h.eng.Room(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	set.Challenge = mode
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
	return h, keys
}

// solvePayload solves c and returns the X-Altcha header's value.
func solvePayload(t *testing.T, c challenge.Challenge) string {
	t.Helper()
	s, err := altcha.SolveChallenge(c.Challenge, c.Salt, altcha.Algorithm(c.Algorithm), int(c.MaxNumber), 0, nil)
	if err != nil || s == nil {
		t.Fatalf("solve %+v: %v", c, err)
	}
	b, _ := json.Marshal(altcha.Payload{Algorithm: c.Algorithm, Challenge: c.Challenge, Number: int64(s.Number), Salt: c.Salt, Signature: c.Signature})
	return base64.StdEncoding.EncodeToString(b)
}

// fetchChallenge gets room's challenge over HTTP.
func (h *harness) fetchChallenge(t *testing.T) challenge.Challenge {
	t.Helper()
	r := h.do(t, "GET", "/api/rooms/"+h.room+"/challenge", "", nil, nil)
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("challenge: %d %v %s", r.status, r.header, r.body)
	}
	var c challenge.Challenge
	r.json(t, &c)
	return c
}

func refusal(t *testing.T, r reply) response.ChallengeRefusal {
	t.Helper()
	var e response.ChallengeRefusal
	r.json(t, &e)
	if r.status != http.StatusPreconditionRequired || r.cookie() != nil || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("want 428 without cookies, got %d %v %s", r.status, r.header, r.body)
	}
	return e
}

func TestChallengeEndpoint(t *testing.T) {
	t.Parallel()
	h, _ := challengeHarness(t, room.ChallengeAuto)
	c := h.fetchChallenge(t)
	if c.Algorithm != "SHA-256" || c.MaxNumber != challenge.DefaultPolicy().M0 || c.Signature == "" ||
		!strings.Contains(c.Salt, "room="+h.room) || !strings.Contains(c.Salt, "expires=") {
		t.Fatalf("challenge %+v: want SHA-256 at M0 for this room, expiring", c)
	}
	if n := testutil.ToFloat64(h.web.metrics.ChallengesIssued); n != 1 {
		t.Errorf("issued counter %g, want 1", n)
	}

	off := newHarness(t, nil)
	r := off.do(t, "GET", "/api/rooms/"+off.room+"/challenge", "", nil, nil)
	if r.status != 404 || !strings.Contains(r.body, `"error":"challenge_off"`) {
		t.Errorf("room without challenge: %d %s", r.status, r.body)
	}
	r = off.do(t, "GET", "/api/rooms/no-such-room-here/challenge", "", nil, nil)
	if r.status != 404 || !strings.Contains(r.body, `"error":"room_not_found"`) {
		t.Errorf("unknown room: %d %s", r.status, r.body)
	}
	r = off.do(t, "GET", "/api/rooms/Bad_Name/challenge", "", nil, nil)
	if r.status != 400 {
		t.Errorf("bad room name: %d %s", r.status, r.body)
	}
}

// TestChallengeDifficultyRises: a network that asks many challenges pays
// more for each.
func TestChallengeDifficultyRises(t *testing.T) {
	t.Parallel()
	h, _ := challengeHarness(t, room.ChallengeAuto)
	var last challenge.Challenge
	for range 300 { // 30/s over the 10 s window: 3× the free rate
		last = h.fetchChallenge(t)
	}
	if m0 := challenge.DefaultPolicy().M0; last.MaxNumber < 2*m0 {
		t.Fatalf("after 300 challenges from one network: maxNumber %d, want at least %d", last.MaxNumber, 2*m0)
	}
}

func TestEnterNeedsProof(t *testing.T) {
	t.Parallel()
	h, keys := challengeHarness(t, room.ChallengeAuto)
	q := "/api/rooms/" + h.room + "/queue"

	e := refusal(t, h.do(t, "POST", q, "", nil, nil))
	if e.Code != "challenge_required" || e.Challenge != "/api/rooms/"+h.room+"/challenge" || e.Message == "" {
		t.Fatalf("enter without a proof: %+v", e)
	}

	good := solvePayload(t, h.fetchChallenge(t))
	first := h.do(t, "POST", q, "", map[string]string{altchaHeader: good}, nil)
	if first.status != 200 || first.cookie() == nil {
		t.Fatalf("enter with a proof: %d %s", first.status, first.body)
	}
	var p queue.Position
	first.json(t, &p)
	// The visitor with a place comes back without a proof, or with a
	// stale one.
	for _, hdr := range []map[string]string{nil, {altchaHeader: good}, {altchaHeader: "garbage"}} {
		again := h.do(t, "POST", q, "", hdr, first.cookie())
		var p2 queue.Position
		again.json(t, &p2)
		if again.status != 200 || p2.Ticket != p.Ticket {
			t.Fatalf("re-enter with %v: %d %s, want ticket %d", hdr, again.status, again.body, p.Ticket)
		}
	}

	other, _ := challengeHarness(t, room.ChallengeAuto)
	expired, err := keys.Issue(h.room, "someone", 100, time.Now().Add(-challenge.TTL-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	// Without a cookie, a used solution is refused: replaying it never
	// hands out the visitor it made (nor their cookie).
	if e := refusal(t, h.do(t, "POST", q, "", map[string]string{altchaHeader: good}, nil)); e.Code != "challenge_used" {
		t.Fatalf("the solution again without a cookie: %+v, want challenge_used", e)
	}
	// Having left, the visitor cannot use it again.
	if r := h.do(t, "DELETE", q, "", nil, first.cookie()); r.status != 200 {
		t.Fatalf("leave: %d %s", r.status, r.body)
	}
	if e := refusal(t, h.do(t, "POST", q, "", map[string]string{altchaHeader: good}, first.cookie())); e.Code != "challenge_used" {
		t.Errorf("a replay after leaving: %+v, want challenge_used", e)
	}
	for _, tc := range []struct{ name, payload, code string }{
		{"garbage", "garbage", "challenge_invalid"},
		{"another room's", solvePayload(t, other.fetchChallenge(t)), "challenge_invalid"},
		{"an expired one", solvePayload(t, expired), "challenge_expired"},
	} {
		if e := refusal(t, h.do(t, "POST", q, "", map[string]string{altchaHeader: tc.payload}, nil)); e.Code != tc.code {
			t.Errorf("%s: %+v, want %s", tc.name, e, tc.code)
		}
	}
	m := h.web.metrics
	if got := testutil.ToFloat64(m.ChallengesSolved); got != 1 {
		t.Errorf("solved %g, want 1", got)
	}
	for reason, want := range map[string]float64{"asked": 1, "used": 2, "invalid": 1, "other_room": 1, "expired": 1} {
		if got := testutil.ToFloat64(m.ChallengesRefused.WithLabelValues(reason)); got != want {
			t.Errorf("refused{%s} %g, want %g", reason, got, want)
		}
	}
	if st, _ := h.eng.Stats(context.Background(), h.room); st.Issued != 1 {
		t.Errorf("%d tickets, want 1", st.Issued)
	}
}

// TestEventsNeedAPlace: the stream never makes a new place in a challenge
// room; it serves a visitor who entered by POST.
func TestEventsNeedAPlace(t *testing.T) {
	t.Parallel()
	h, _ := challengeHarness(t, room.ChallengeAlways)
	e := refusal(t, h.do(t, "GET", "/r/"+h.room+"/events", "", map[string]string{"Accept": "text/event-stream"}, nil))
	if e.Code != "challenge_required" {
		t.Fatalf("stream without a place: %+v", e)
	}
	in := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", map[string]string{altchaHeader: solvePayload(t, h.fetchChallenge(t))}, nil)
	if in.status != 200 {
		t.Fatalf("enter: %d %s", in.status, in.body)
	}
	req, _ := http.NewRequest("GET", h.srv.URL+"/r/"+h.room+"/events", nil)
	req.AddCookie(in.cookie())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream of a visitor with a place: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestJoinFormNeedsProof: the no-JavaScript form in a challenge room,
// without a proof, answers the wait page (wait.go) in the visitor's
// language; with a proof that is not one, a page that says so. Neither
// sets a cookie.
func TestJoinFormNeedsProof(t *testing.T) {
	t.Parallel()
	h, _ := challengeHarness(t, room.ChallengeAuto)
	for _, tc := range []struct {
		lang, altcha string
		status       int
		want         string
	}{
		{"ko", "", 200, "기다려 주세요"},
		{"en", "", 200, "Please wait"},
		{"ko", "bm90IGEgcHJvb2Y=", http.StatusPreconditionRequired, "참여를 확인하지 못했습니다"},
		{"en", "bm90IGEgcHJvb2Y=", http.StatusPreconditionRequired, "We could not check this join"},
	} {
		resp := h.postForm(t, "/r/"+h.room+"/join", url.Values{"altcha": {tc.altcha}}, nil, tc.lang)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || len(resp.Cookies()) != 0 || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s, altcha %q: %d %v, want %d saying %q", tc.lang, tc.altcha, resp.StatusCode, resp.Cookies(), tc.status, tc.want)
		}
	}
	// With a solution in its altcha field, the form joins.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"altcha": {solvePayload(t, h.fetchChallenge(t))}}
	resp, err := noFollow.PostForm(h.srv.URL+"/r/"+h.room+"/join", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		t.Fatalf("join with a solution: %d %v", resp.StatusCode, resp.Cookies())
	}
}

// TestAdminChallengeSetting: a room created without the field takes the
// server's default; the field is validated and kept.
func TestAdminChallengeSetting(t *testing.T) {
	t.Parallel()
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	for _, tc := range []struct{ def, want string }{{"", room.ChallengeOff}, {room.ChallengeAuto, room.ChallengeAuto}} {
		h := newHarness(t, func(o *Options) { o.ChallengeDefault = tc.def })
		name := servicetest.RoomName(t, h.rdb)
		path := "/api/admin/rooms/" + name
		if r := h.do(t, "PUT", path, `{"title":"t"}`, auth, nil); r.status != 200 && r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		if set, err := h.eng.Room(context.Background(), name); err != nil || set.Challenge != tc.want {
			t.Fatalf("default %q: created with %q %v, want %q", tc.def, set.Challenge, err, tc.want)
		}
		r := h.do(t, "PUT", path, `{"challenge":"sometimes"}`, auth, nil)
		if r.status != 400 || !strings.Contains(r.body, "challenge must be") {
			t.Errorf("an unknown challenge: %d %s", r.status, r.body)
		}
		if r := h.do(t, "PUT", path, `{"challenge":"always"}`, auth, nil); r.status != 200 {
			t.Fatalf("set always: %d %s", r.status, r.body)
		}
		if r := h.do(t, "GET", path, "", auth, nil); !strings.Contains(r.body, `"challenge":"always"`) {
			t.Errorf("GET does not show the setting: %s", r.body)
		}
	}
	var o Options
	newHarness(t, func(x *Options) { o = *x })
	o.ChallengeDefault = "sometimes"
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "challenge default") {
		t.Errorf("New with an unknown challenge default: %v", err)
	}
}

// TestBareEnterIsFree: the page's first, bare enter in a challenge room
// (answered 428) gives its per-address enter back, so only the enter with
// a proof counts; a crowd behind one address joins at the limit's rate.
func TestBareEnterIsFree(t *testing.T) {
	t.Parallel()
	h, keys := challengeHarnessWith(t, room.ChallengeAuto, func(o *Options) { o.EnterRatePerIP = 0.01; o.EnterBurstPerIP = 2 })
	q := "/api/rooms/" + h.room + "/queue"
	tests := []struct {
		name   string
		proved bool
		want   int
	}{
		{"bare", false, 428}, {"bare", false, 428}, {"bare", false, 428},
		{"proved", true, 200}, {"bare", false, 428}, {"proved", true, 200},
		{"proved, the burst spent", true, 429}, {"bare, the burst spent", false, 429},
	}
	for i, tc := range tests {
		hdr := map[string]string{}
		if tc.proved { // issued here: the challenges' own bucket is as small
			c, err := keys.Issue(h.room, "visitor-"+strconv.Itoa(i), 100, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			hdr[altchaHeader] = solvePayload(t, c)
		}
		if r := h.do(t, "POST", q, "", hdr, nil); r.status != tc.want {
			t.Fatalf("enter %d (%s): %d %s, want %d", i, tc.name, r.status, r.body, tc.want)
		}
	}
}

// challengeAt fetches h's room's challenge with hdr and cookie, and
// returns the reply and, on 200, the challenge.
func challengeAt(t *testing.T, h *harness, hdr map[string]string, cookie *http.Cookie) (reply, challenge.Challenge) {
	t.Helper()
	r := h.do(t, "GET", "/api/rooms/"+h.room+"/challenge", "", hdr, cookie)
	var c challenge.Challenge
	if r.status == 200 {
		r.json(t, &c)
	}
	return r, c
}

// schedule sets h's room's pre-queue and opening times.
func schedule(t *testing.T, h *harness, prequeueAt, opensAt *time.Time) {
	t.Helper()
	set, err := h.eng.Room(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	set.PrequeueAt, set.OpensAt = prequeueAt, opensAt
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
}

func inMs(d time.Duration) *time.Time { t := time.Now().Add(d).Truncate(time.Millisecond); return &t }

// TestChallengeAtTheOpening: proofs cannot be banked for the opening. A
// room that takes no joins yet gives no challenge (409 not_open, as an
// enter), and a proof fetched in the pre-queue is refused once the room
// opens; one fetched after the opening joins.
func TestChallengeAtTheOpening(t *testing.T) {
	t.Parallel()
	q := func(h *harness) string { return "/api/rooms/" + h.room + "/queue" }
	// The opening is a minute ahead on the harnesses' clocks, which move
	// only when the test moves them. No pre-queue: nothing before the
	// opening.
	plain, _ := clockedChallengeHarness(t, room.ChallengeAuto)
	opensAt := plain.clock.Now().Add(time.Minute).Truncate(time.Millisecond)
	opens := &opensAt
	schedule(t, plain, nil, opens)
	r, _ := challengeAt(t, plain, nil, nil)
	if r.status != http.StatusConflict || !strings.Contains(r.body, `"error":"not_open"`) || !strings.Contains(r.body, `"opensAt":`) {
		t.Fatalf("challenge before the opening: %d %s, want 409 not_open with the schedule", r.status, r.body)
	}
	if n := testutil.ToFloat64(plain.web.metrics.ChallengesIssued); n != 0 {
		t.Fatalf("%g challenges issued before the opening", n)
	}

	// A pre-queue: its proofs join the pre-queue, not the opened line.
	pre, _ := clockedChallengeHarness(t, room.ChallengeAuto)
	schedule(t, pre, inMs(-time.Minute), opens)
	r, banked := challengeAt(t, pre, nil, nil)
	if r.status != 200 {
		t.Fatalf("challenge in the pre-queue: %d %s", r.status, r.body)
	}
	bankedPayload := solvePayload(t, banked)

	for _, h := range []*harness{pre, plain} {
		h.clock.Advance(opens.Sub(h.clock.Now())) // the room opens
	}
	if e := refusal(t, pre.do(t, "POST", q(pre), "", map[string]string{altchaHeader: bankedPayload}, nil)); e.Code != "challenge_expired" {
		t.Fatalf("a pre-queue proof spent after the opening: %+v, want challenge_expired", e)
	}
	for _, h := range []*harness{pre, plain} {
		r, c := challengeAt(t, h, nil, nil)
		if r.status != 200 {
			t.Fatalf("challenge after the opening: %d %s", r.status, r.body)
		}
		if in := h.do(t, "POST", q(h), "", map[string]string{altchaHeader: solvePayload(t, c)}, nil); in.status != 200 || in.cookie() == nil {
			t.Fatalf("a proof fetched after the opening: %d %s", in.status, in.body)
		}
		if n := h.places(t); n != 1 {
			t.Fatalf("%d places, want 1", n)
		}
	}
}

// TestChallengeBoundToVisitor: a solution creates or serves the visitor
// its challenge was issued for. Without a cookie, the enter makes that
// visitor (and sets its cookie); with another visitor's cookie, it is
// refused, so a solution cannot be handed to another identity.
func TestChallengeBoundToVisitor(t *testing.T) {
	t.Parallel()
	h, _ := challengeHarness(t, room.ChallengeAuto)
	q := "/api/rooms/" + h.room + "/queue"
	_, c := challengeAt(t, h, nil, nil)
	r := h.do(t, "POST", q, "", map[string]string{altchaHeader: solvePayload(t, c)}, nil)
	a := r.cookie()
	if r.status != 200 || a == nil {
		t.Fatalf("a new visitor's proved enter: %d %s", r.status, r.body)
	}
	if id, ok := h.web.signer.Verify(a.Value); !ok || !strings.Contains(c.Salt, "v="+id+"&") {
		t.Fatalf("the cookie's visitor %q is not the challenge's (salt %s)", id, c.Salt)
	}
	// Visitor A's challenge, fetched with A's cookie, is A's.
	_, forA := challengeAt(t, h, nil, a)
	handed := solvePayload(t, forA)
	// Visitor B: entered, and left, so B needs a proof again.
	_, c = challengeAt(t, h, nil, nil)
	b := h.do(t, "POST", q, "", map[string]string{altchaHeader: solvePayload(t, c)}, nil).cookie()
	if b == nil {
		t.Fatal("visitor B did not enter")
	}
	if r := h.do(t, "DELETE", q, "", nil, b); r.status != 200 {
		t.Fatalf("B leaves: %d %s", r.status, r.body)
	}
	if e := refusal(t, h.do(t, "POST", q, "", map[string]string{altchaHeader: handed}, b)); e.Code != "challenge_invalid" {
		t.Fatalf("A's solution sent by B: %+v, want challenge_invalid", e)
	}
	if n := h.places(t); n != 2 {
		t.Fatalf("%d places, want A's and B's first", n)
	}
	// B's own challenge, fetched with B's cookie, joins B.
	_, forB := challengeAt(t, h, nil, b)
	if r := h.do(t, "POST", q, "", map[string]string{altchaHeader: solvePayload(t, forB)}, b); r.status != 200 || h.places(t) != 3 {
		t.Fatalf("B's own solution: %d %s, %d places", r.status, r.body, h.places(t))
	}
}

// TestChallengeFetchLimits: the challenge's GET takes from a per-address
// bucket (429), is refused across sites (403), and the room's factor
// counts proved joins, not fetched challenges: a host that fetches many
// without solving raises no other network's price.
func TestChallengeFetchLimits(t *testing.T) {
	t.Parallel()
	h, _ := challengeHarnessWith(t, room.ChallengeAuto, func(o *Options) { o.EnterRatePerIP = 0.01; o.EnterBurstPerIP = 2 })
	if r, _ := challengeAt(t, h, map[string]string{"Sec-Fetch-Site": "cross-site"}, nil); r.status != http.StatusForbidden ||
		!strings.Contains(r.body, `"error":"cross_site"`) {
		t.Errorf("a cross-site fetch: %d %s, want 403", r.status, r.body)
	}
	for i, want := range []int{200, 200, 429} {
		r, _ := challengeAt(t, h, map[string]string{"Sec-Fetch-Site": "same-origin"}, nil)
		if r.status != want || (want == 429 && (!strings.Contains(r.body, `"error":"rate_limited"`) || r.header.Get("Retry-After") == "")) {
			t.Fatalf("fetch %d: %d %s, want %d", i, r.status, r.body, want)
		}
	}

	// A policy whose room factor starts at 1 join a second.
	policy := challenge.Policy{M0: 100, Max: 100_000, AlwaysFloor: 100, NetRate: 1_000, K: 1, RoomRate: 1, RoomFactorMax: 4}
	g, _ := challengeHarnessWith(t, room.ChallengeAuto, func(o *Options) { o.TrustedProxies = loopbackProxy; o.ChallengePolicy = policy })
	from := func(ip string) map[string]string { return map[string]string{"X-Forwarded-For": ip} }
	for range 60 { // 6/s over the window, none solved
		if r, _ := challengeAt(t, g, from("203.0.113.5"), nil); r.status != 200 {
			t.Fatalf("fetch: %d %s", r.status, r.body)
		}
	}
	if _, c := challengeAt(t, g, from("198.51.100.7"), nil); c.MaxNumber != policy.M0 {
		t.Fatalf("after 60 unsolved challenges of another host: maxNumber %d, want %d", c.MaxNumber, policy.M0)
	}
	for range 30 { // 3 proved joins a second
		_, c := challengeAt(t, g, from("203.0.113.5"), nil)
		if r := g.do(t, "POST", "/api/rooms/"+g.room+"/queue", "", map[string]string{"X-Forwarded-For": "203.0.113.5", altchaHeader: solvePayload(t, c)}, nil); r.status != 200 {
			t.Fatalf("proved enter: %d %s", r.status, r.body)
		}
	}
	if _, c := challengeAt(t, g, from("198.51.100.7"), nil); c.MaxNumber < 2*policy.M0 {
		t.Fatalf("after 30 proved joins: maxNumber %d, want at least %d", c.MaxNumber, 2*policy.M0)
	}
}

// TestChallengeDefaultForOldRooms: a room saved before the setting
// existed follows the server's default, auto: it asks a proof, and the
// admin API shows the mode that applies.
func TestChallengeDefaultForOldRooms(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.ChallengeDefault = room.ChallengeAuto })
	h.eng.SetChallengeDefault(room.ChallengeAuto)
	set, err := h.eng.Room(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	set.Challenge = "" // as saved before the setting existed
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
	if e := refusal(t, h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)); e.Code != "challenge_required" {
		t.Fatalf("enter without a proof: %+v", e)
	}
	if r, c := challengeAt(t, h, nil, nil); r.status != 200 || c.MaxNumber == 0 {
		t.Fatalf("challenge: %d %s", r.status, r.body)
	}
	r := h.do(t, "GET", "/api/admin/rooms/"+h.room, "", map[string]string{"Authorization": "Bearer " + testAdminToken}, nil)
	if !strings.Contains(r.body, `"challenge":"auto"`) {
		t.Errorf("the admin API does not show the default that applies: %s", r.body)
	}
}
