package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"waitingroom/server/challenge"
	"waitingroom/server/room"
)

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
	q := func(h *harness) string { return "/api/rooms/" + h.room + "/queue" }
	// No pre-queue: nothing before the opening.
	plain, _ := challengeHarness(t, room.ChallengeAuto)
	opens := inMs(time.Second)
	schedule(t, plain, nil, opens)
	r, _ := challengeAt(t, plain, nil, nil)
	if r.status != http.StatusConflict || !strings.Contains(r.body, `"error":"not_open"`) || !strings.Contains(r.body, `"opensAt":`) {
		t.Fatalf("challenge before the opening: %d %s, want 409 not_open with the schedule", r.status, r.body)
	}
	if n := testutil.ToFloat64(plain.web.metrics.ChallengesIssued); n != 0 {
		t.Fatalf("%g challenges issued before the opening", n)
	}

	// A pre-queue: its proofs join the pre-queue, not the opened line.
	pre, _ := challengeHarness(t, room.ChallengeAuto)
	schedule(t, pre, inMs(-time.Minute), opens)
	r, banked := challengeAt(t, pre, nil, nil)
	if r.status != 200 {
		t.Fatalf("challenge in the pre-queue: %d %s", r.status, r.body)
	}
	bankedPayload := solvePayload(t, banked)

	time.Sleep(time.Until(*opens) + 50*time.Millisecond)
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
