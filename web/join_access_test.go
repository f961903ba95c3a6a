package web

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"waitingroom/server/access"
	"waitingroom/server/challenge"
	"waitingroom/server/identity"
	"waitingroom/server/identity/identitytest"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/server/visitor"
	"waitingroom/views"
	"waitingroom/web/request"
	"waitingroom/web/response"

	"github.com/jonboulle/clockwork"
)

// accessHarness is a harness whose room's access is limited by mut, with
// codes kept in a freshly migrated SQLite database.
func accessHarness(t *testing.T, mut func(*room.Settings)) (*harness, *access.Codes, *clockwork.FakeClock) {
	t.Helper()
	db := storetest.Migrated(t, store.SQLite)
	key, err := access.NewHasher([]byte("test-secret-key-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	codeClock := clockwork.NewFakeClockAt(time.Now())
	codes := access.New(db.DB, key, codeClock.Now)
	h := newHarness(t, func(o *Options) { o.Codes, o.AccessCodes, o.TrustedProxies = codes, codes, loopbackProxy })
	h.setRoom(t, mut)
	// A client network of the harness's own, with no refused codes: the
	// guesses are counted per network in the shared Redis, across tests
	// and runs.
	var b [2]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	h.forwardedFor = fmt.Sprintf("10.%d.%d.7", b[0], b[1])
	net := request.ClientNet(h.forwardedFor, 64)
	w := time.Now().UnixMilli() / queue.GuessWindow.Milliseconds()
	for _, k := range []int64{w, w + 1} {
		h.rdb.Del(context.Background(), h.eng.Namespace()+":guesses:"+strconv.FormatInt(k, 10)+":"+net)
	}
	return h, codes, codeClock
}

// codeRoom limits a room to code holders.
func codeRoom(s *room.Settings) { s.Access.Access = room.AccessCode }

// used returns the uses used of room's codes.
func used(t *testing.T, codes *access.Codes, name string) int64 {
	t.Helper()
	counts, err := codes.Counts(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c.Used
	}
	return n
}

func errorCode(t *testing.T, r reply) string {
	t.Helper()
	var e struct {
		Error  string `json:"error"`
		SignIn string `json:"signIn"`
	}
	r.json(t, &e)
	return e.Error
}

// TestEnterWithCode: a room for code holders refuses a join without a
// code, and each wrong code saying why; a right one makes a place and
// takes one use; the visitor comes back without it; a code redeemed for
// an enter that made no place is given back.
func TestEnterWithCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, codes, codeClock := accessHarness(t, codeRoom)
	soon := codeClock.Now().Add(time.Minute)
	gen, err := codes.Generate(ctx, h.room, 2, access.Spec{Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codes.Import(ctx, h.room, []string{"EXPIRED-CODE-1"}, access.Spec{Uses: 1, ExpiresAt: &soon}); err != nil {
		t.Fatal(err)
	}
	codeClock.Advance(time.Hour) // and so it expires
	if _, err := codes.Import(ctx, "another-room", []string{"OTHER-ROOM-CODE"}, access.Spec{Uses: 1}); err != nil {
		t.Fatal(err)
	}
	q := "/api/rooms/" + h.room + "/queue"
	body := func(code string) string { b, _ := json.Marshal(map[string]string{"code": code}); return string(b) }
	var holder *http.Cookie
	steps := []struct {
		name   string
		body   string
		cookie func() *http.Cookie
		status int
		code   string // the error's code, "" for a place
		used   int64
	}{
		{"no code", "", nil, 403, "code_required", 0},
		{"an empty body object", "{}", nil, 403, "code_required", 0},
		{"a code nobody made", body("ZZZZ-ZZZZ-ZZZZ"), nil, 403, "code_unknown", 0},
		{"another room's code", body("other-room-code"), nil, 403, "code_wrong_room", 0},
		{"an expired code", body("expired code 1"), nil, 403, "code_expired", 0},
		{"a right code", body(strings.ToLower(gen.Codes[0])), nil, 200, "", 1},
		{"the same code by another visitor: used up", body(gen.Codes[0]), nil, 409, "code_used_up", 1},
		{"the holder again, without it", "", func() *http.Cookie { return holder }, 200, "", 1},
		{"the holder again, with the other code: no use taken", body(gen.Codes[1]), func() *http.Cookie { return holder }, 200, "", 1},
		{"an unknown field", `{"code":"x","line":"vip"}`, nil, 400, "bad_json", 1},
		{"a code over the bound", body(strings.Repeat("A", 129)), nil, 400, "bad_json", 1},
	}
	for _, s := range steps {
		var c *http.Cookie
		if s.cookie != nil {
			c = s.cookie()
		}
		r := h.do(t, "POST", q, s.body, nil, c)
		if r.status != s.status {
			t.Fatalf("%s: %d %s, want %d", s.name, r.status, r.body, s.status)
		}
		if s.code != "" {
			if got := errorCode(t, r); got != s.code {
				t.Fatalf("%s: error %q, want %q", s.name, got, s.code)
			}
			if s.status != 400 && r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s: Cache-Control %q, want no-store", s.name, r.header.Get("Cache-Control"))
			}
		} else {
			var p queue.Position
			r.json(t, &p)
			if p.Status != queue.StatusWaiting {
				t.Fatalf("%s: %+v, want WAITING", s.name, p)
			}
			if holder == nil {
				holder = r.cookie()
			}
		}
		if got := used(t, codes, h.room); got != s.used {
			t.Fatalf("%s: %d uses used, want %d", s.name, got, s.used)
		}
	}

	// A right code for an enter that makes no place (the room is closed)
	// is given back.
	h.setRoom(t, func(s *room.Settings) { s.Mode = room.ModeClosed })
	if r := h.do(t, "POST", q, body(gen.Codes[1]), nil, nil); r.status != 409 || errorCode(t, r) != "sale_ended" {
		t.Fatalf("a code in a closed room: %d %s, want 409 sale_ended", r.status, r.body)
	}
	if got := used(t, codes, h.room); got != 1 {
		t.Fatalf("after a closed room's refusal: %d uses used, want the code given back (1)", got)
	}
}

// TestCodeKeptForAPlace: a join whose code was redeemed gives the code's
// use back only when its visitor is left without a place. A join that
// raced another of the same visitor's, which made the place first, keeps
// the code the place stands on; a join refused for its proof keeps it for
// the proved join; a closed room, or a failure after which the visitor
// has no place, gives it back.
func TestCodeKeptForAPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, codes, _ := accessHarness(t, codeRoom)
	failed := errors.New("the enter's reply was lost")
	cases := []struct {
		name string
		// second is the enter with the code; it may place the visitor
		// first, as a concurrent join of theirs would.
		second func(t *testing.T, visitor string) (queue.Position, error)
		used   int64
	}{
		{"the place made with it", func(t *testing.T, v string) (queue.Position, error) {
			return h.eng.EnterWith(ctx, h.room, v, "", queue.Campaign{}, queue.Proof{}, queue.Credentials{Code: true})
		}, 1},
		{"a concurrent join made the place", func(t *testing.T, v string) (queue.Position, error) {
			if _, err := h.eng.EnterWith(ctx, h.room, v, "", queue.Campaign{}, queue.Proof{}, queue.Credentials{Code: true}); err != nil {
				t.Fatal(err)
			}
			return h.eng.EnterWith(ctx, h.room, v, "", queue.Campaign{}, queue.Proof{}, queue.Credentials{Code: true})
		}, 1},
		{"a failure after the place was made", func(t *testing.T, v string) (queue.Position, error) {
			if _, err := h.eng.EnterWith(ctx, h.room, v, "", queue.Campaign{}, queue.Proof{}, queue.Credentials{Code: true}); err != nil {
				t.Fatal(err)
			}
			return queue.Position{}, failed
		}, 1},
		{"a proof to solve", func(t *testing.T, v string) (queue.Position, error) {
			return queue.Position{}, queue.ErrChallengeRequired
		}, 1},
		{"a failure that made no place", func(t *testing.T, v string) (queue.Position, error) {
			return queue.Position{}, failed
		}, 0},
		{"an enter given up on: its script may still place", func(t *testing.T, v string) (queue.Position, error) {
			return queue.Position{}, fmt.Errorf("queue: enter: %w", context.DeadlineExceeded)
		}, 1},
		{"the room closed", func(t *testing.T, v string) (queue.Position, error) {
			return queue.Position{}, queue.ErrSaleEnded
		}, 0},
		{"no place, no error", func(t *testing.T, v string) (queue.Position, error) {
			return queue.Position{Status: queue.StatusNotEntered}, nil
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, err := codes.Generate(ctx, h.room, 1, access.Spec{Uses: 1})
			if err != nil {
				t.Fatal(err)
			}
			before := used(t, codes, h.room)
			v, err := visitor.NewID()
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			r := httptest.NewRequest("POST", "/api/rooms/"+h.room+"/queue", nil)
			_, _, redeemed, _ := h.web.admitWith(ctx, r, h.room, code.Codes[0], queue.Credentials{},
				func(cred queue.Credentials) (queue.Position, string, error) {
					if calls++; calls == 1 {
						p, err := h.eng.EnterWith(ctx, h.room, v, "", queue.Campaign{}, queue.Proof{}, cred)
						return p, v, err
					}
					p, err := c.second(t, v)
					return p, v, err
				})
			if got := used(t, codes, h.room) - before; got != c.used || redeemed != (c.used == 1) {
				t.Fatalf("%d uses kept, redeemed %v; want %d", got, redeemed, c.used)
			}
		})
	}
}

// TestCodeGuessesThrottled: a network gets queue.GuessBudget refused
// codes; the next one is refused for the network, with Retry-After, even
// a right one.
func TestCodeGuessesThrottled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, codes, _ := accessHarness(t, codeRoom)
	gen, err := codes.Generate(ctx, h.room, 1, access.Spec{Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := "/api/rooms/" + h.room + "/queue"
	var hdr map[string]string // the harness's own network (accessHarness)
	for i := range queue.GuessBudget {
		if r := h.do(t, "POST", q, `{"code":"WRONG-`+string(rune('A'+i))+`"}`, hdr, nil); r.status != 403 || errorCode(t, r) != "code_unknown" {
			t.Fatalf("guess %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := h.do(t, "POST", q, `{"code":"`+gen.Codes[0]+`"}`, hdr, nil)
	if r.status != 429 || errorCode(t, r) != "code_throttled" || r.header.Get("Retry-After") == "" {
		t.Fatalf("a code past the budget: %d %v %s, want 429 code_throttled with Retry-After", r.status, r.header, r.body)
	}
	if got := used(t, codes, h.room); got != 0 {
		t.Fatalf("a throttled code took a use: %d", got)
	}
}

// TestCodeHeldThroughTheProof: in a room that asks a proof of work too,
// a join with a right code learns it must solve; the code is held for its
// visitor (the cookie set), whose proved join brings no code.
func TestCodeHeldThroughTheProof(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, codes, _ := accessHarness(t, func(s *room.Settings) { codeRoom(s); s.Challenge = room.ChallengeAlways })
	gen, err := codes.Generate(ctx, h.room, 1, access.Spec{Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := "/api/rooms/" + h.room + "/queue"
	first := h.do(t, "POST", q, `{"code":"`+gen.Codes[0]+`"}`, nil, nil)
	c := first.cookie()
	if first.status != 428 || c == nil || used(t, codes, h.room) != 1 {
		t.Fatalf("a right code, no proof: %d %s (cookie %v), want 428, the cookie and the code used", first.status, first.body, c)
	}
	// The challenge is the cookie's visitor's.
	cr := h.do(t, "GET", "/api/rooms/"+h.room+"/challenge", "", nil, c)
	var ch challenge.Challenge
	cr.json(t, &ch)
	payload := solvePayload(t, ch)
	r := h.do(t, "POST", q, "", map[string]string{altchaHeader: payload}, c)
	var p queue.Position
	r.json(t, &p)
	if r.status != 200 || p.Status != queue.StatusWaiting || used(t, codes, h.room) != 1 {
		t.Fatalf("the proved join without the code: %d %s, want WAITING on the held code", r.status, r.body)
	}
}

// TestJoinFormWithCode: the no-JavaScript form's code field joins; a
// wrong one is answered with a page in the buyer's language. The field is
// not a required one: a buyer who holds a code, or has a place, submits
// the form without it.
func TestJoinFormWithCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, codes, _ := accessHarness(t, codeRoom)
	_, page := h.getPage(t, "/r/"+h.room, "en")
	field := regexp.MustCompile(`<input id="wr-code"[^>]*>`).FindString(page)
	if field == "" || regexp.MustCompile(`\srequired[\s=>/]`).MatchString(field) {
		t.Fatalf("the code field %q: want one, not required", field)
	}
	gen, err := codes.Generate(ctx, h.room, 1, access.Spec{Uses: 1})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, code, lang string
		status           int
		says             string
	}{
		{"no code", "", "en", 403, "This line takes an access code"},
		{"a wrong code, in Korean", "NOPE-NOPE", "ko", 403, "유효하지 않은 입장 코드입니다"},
		{"the right code", gen.Codes[0], "en", 303, ""},
	}
	for _, c := range cases {
		resp := h.postForm(t, "/r/"+h.room+"/join", url.Values{"code": {c.code}}, nil, c.lang)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.says) {
			t.Fatalf("%s: %d %s, want %d saying %q", c.name, resp.StatusCode, b, c.status, c.says)
		}
		if c.status == 303 && !strings.HasSuffix(resp.Header.Get("Location"), "/r/"+h.room+"/status") {
			t.Fatalf("%s: to %q, want the status page", c.name, resp.Header.Get("Location"))
		}
	}
}

// identityRoom requires the shop's identity, signed by key.
func identityRoom(t *testing.T, key identitytest.Key, mode string) func(*room.Settings) {
	return func(s *room.Settings) {
		s.Identity, s.IdentityKeys, s.SignInURL = mode, key.PEM(t), "https://shop.example/signin"
	}
}

// identityCookie returns r's identity cookie of room, nil for none.
func identityCookie(r reply, name string) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == request.IdentityCookiePrefix+name {
			return c
		}
	}
	return nil
}

// TestEnterWithIdentity: a room that requires an identity refuses a join
// without one, linking the shop's sign-in; each refused token says why;
// a verified one makes the place of its buyer, whichever device brings
// it, and its cookie keeps the device that buyer's.
func TestEnterWithIdentity(t *testing.T) {
	t.Parallel()
	key := identitytest.NewKey(t, "ec", "k1")
	h, _, _ := accessHarness(t, identityRoom(t, key, room.IdentityRequired))
	now := time.Now()
	q := "/api/rooms/" + h.room + "/queue"
	tok := func(c identitytest.Claims) string { return `{"identity":"` + key.Sign(t, c) + `"}` }
	member := identitytest.For(h.room, "member-42", now, time.Hour)
	expired := identitytest.For(h.room, "member-42", now.Add(-2*time.Hour), time.Hour)
	other := identitytest.For("another-room", "member-42", now, time.Hour)
	forged := `{"identity":"` + identitytest.NewKey(t, "ec", "k1").Sign(t, member) + `"}`
	cases := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"none", "", 403, "identity_required"},
		{"expired", tok(expired), 401, "identity_expired"},
		{"another room's", tok(other), 403, "identity_wrong_room"},
		{"another key's", forged, 401, "identity_invalid"},
		{"not a token", `{"identity":"hello"}`, 401, "identity_invalid"},
	}
	for _, c := range cases {
		r := h.do(t, "POST", q, c.body, nil, nil)
		var e response.SignInRefusal
		r.json(t, &e)
		if r.status != c.status || e.Code != c.code || e.SignIn != "https://shop.example/signin" {
			t.Fatalf("%s: %d %s, want %d %s linking the sign-in", c.name, r.status, r.body, c.status, c.code)
		}
	}
	first := h.do(t, "POST", q, tok(member), nil, nil)
	var p queue.Position
	first.json(t, &p)
	idc := identityCookie(first, h.room)
	if first.status != 200 || p.Status != queue.StatusWaiting || idc == nil || !idc.HttpOnly {
		t.Fatalf("a verified identity: %d %s (cookie %v)", first.status, first.body, idc)
	}
	// Another device with the same identity gets the same place.
	second := h.do(t, "POST", q, tok(member), nil, nil)
	var p2 queue.Position
	second.json(t, &p2)
	if p2.Ticket != p.Ticket {
		t.Fatalf("a second device: ticket %d, want %d", p2.Ticket, p.Ticket)
	}
	// The cookie alone is the identity's visitor.
	pos := h.do(t, "GET", q+"/position", "", nil, idc)
	var p3 queue.Position
	pos.json(t, &p3)
	if p3.Status != queue.StatusWaiting || p3.Ticket != p.Ticket {
		t.Fatalf("the position by the identity cookie: %+v, want ticket %d", p3, p.Ticket)
	}
	// A room that takes no identities says so.
	h.setRoom(t, func(s *room.Settings) { s.Identity, s.IdentityKeys, s.SignInURL = room.IdentityOff, "", "" })
	if r := h.do(t, "POST", q, tok(member), nil, nil); r.status != 400 || errorCode(t, r) != "identity_not_taken" {
		t.Fatalf("an identity in a room that takes none: %d %s", r.status, r.body)
	}
}

// TestJoinLines: in a room with lines, a join goes to the line its code
// or identity names, else to the first line they open, else to the line
// open to all; a refused code says why instead of joining that line; a
// visitor holding a code comes back to its line without it; the
// position says the line.
func TestJoinLines(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := identitytest.NewKey(t, "ec", "k1")
	h, codes, _ := accessHarness(t, func(s *room.Settings) {
		identityRoom(t, key, room.IdentityOptional)(s)
		s.Lines = []room.Line{{Name: "presale", Share: 0.6, Access: room.LineCode},
			{Name: "members", Share: 0.2, Access: room.LineIdentity}, {Name: "general", Share: 0.2, Access: room.LineOpen}}
	})
	gen := func(line string) string {
		g, err := codes.Generate(ctx, h.room, 1, access.Spec{Uses: 1, Line: line})
		if err != nil {
			t.Fatal(err)
		}
		return g.Codes[0]
	}
	presale, anyLine, general := gen("presale"), gen(""), gen("general")
	now := time.Now()
	withLine := identitytest.For(h.room, "fan-2", now, time.Hour)
	withLine.Line = "general"
	q := "/api/rooms/" + h.room + "/queue"
	code := func(c string) string { return `{"code":"` + c + `"}` }
	ident := func(c identitytest.Claims) string { return `{"identity":"` + key.Sign(t, c) + `"}` }
	var holder *http.Cookie
	steps := []struct {
		name   string
		body   string
		cookie func() *http.Cookie
		status int
		line   string // the line joined, or the error's code
		used   int64
	}{
		{"no code: the line open to all", "", nil, 200, "general", 0},
		{"a presale code", code(presale), nil, 200, "presale", 1},
		{"the holder again, without it", "", func() *http.Cookie { return holder }, 200, "presale", 1},
		{"a code of no line: the first code line", code(anyLine), nil, 200, "presale", 2},
		{"a code of the general line", code(general), nil, 200, "general", 3},
		{"a code used up: refused, not the open line", code(presale), nil, 409, "code_used_up", 3},
		{"an identity: the identity line", ident(identitytest.For(h.room, "fan-1", now, time.Hour)), nil, 200, "members", 3},
		{"an identity naming the open line", ident(withLine), nil, 200, "general", 3},
	}
	for _, st := range steps {
		var c *http.Cookie
		if st.cookie != nil {
			c = st.cookie()
		}
		r := h.do(t, "POST", q, st.body, nil, c)
		if r.status != st.status {
			t.Fatalf("%s: %d %s, want %d", st.name, r.status, r.body, st.status)
		}
		if st.status != 200 {
			if got := errorCode(t, r); got != st.line {
				t.Fatalf("%s: error %q, want %q", st.name, got, st.line)
			}
		} else {
			var p struct {
				Status queue.Status `json:"status"`
				Line   string       `json:"line"`
				Rank   int64        `json:"rank"`
			}
			r.json(t, &p)
			if p.Status != queue.StatusWaiting || p.Line != st.line {
				t.Fatalf("%s: %s, want WAITING in %q", st.name, r.body, st.line)
			}
			if holder == nil && st.line == "presale" {
				holder = r.cookie()
			}
		}
		if got := used(t, codes, h.room); got != st.used {
			t.Fatalf("%s: %d uses used, want %d", st.name, got, st.used)
		}
	}
	pos := h.do(t, "GET", q+"/position", "", nil, holder)
	if !strings.Contains(pos.body, `"line":"presale"`) {
		t.Fatalf("the holder's position: %s, want its line", pos.body)
	}
}

// TestOneIdentityManyDevices: one identity joining from 50 devices at
// once holds one place, and every device is told it.
func TestOneIdentityManyDevices(t *testing.T) {
	t.Parallel()
	key := identitytest.NewKey(t, "ec", "")
	h, _, _ := accessHarness(t, identityRoom(t, key, room.IdentityOptional))
	body := `{"identity":"` + key.Sign(t, identitytest.For(h.room, "fan-7", time.Now(), time.Hour)) + `"}`
	const devices = 50
	tickets := make([]int64, devices)
	var wg sync.WaitGroup
	for i := range devices {
		wg.Go(func() {
			r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", body, nil, nil)
			var p queue.Position
			if err := json.Unmarshal([]byte(r.body), &p); err != nil || r.status != 200 || p.Status != queue.StatusWaiting {
				t.Errorf("device %d: %d %s", i, r.status, r.body)
				return
			}
			tickets[i] = p.Ticket
		})
	}
	wg.Wait()
	for i, tk := range tickets {
		if tk != tickets[0] {
			t.Fatalf("device %d has ticket %d, device 0 %d: want one place", i, tk, tickets[0])
		}
	}
	st, err := h.eng.Stats(context.Background(), h.room)
	if err != nil || st.Waiting != 1 {
		t.Fatalf("the room's line: %+v %v, want 1 waiting", st, err)
	}
}

// TestIdentityLink: the shop's link verifies the token, sets the room's
// identity cookie and sends the browser on to the room without it; a
// refused link says why in the buyer's language, linking the sign-in.
func TestIdentityLink(t *testing.T) {
	t.Parallel()
	key := identitytest.NewKey(t, "ec", "")
	h, _, _ := accessHarness(t, identityRoom(t, key, room.IdentityRequired))
	now := time.Now()
	get := func(token, lang string) *http.Response {
		req, _ := http.NewRequest("GET", h.srv.URL+"/r/"+h.room+"/identity?utm_source=mail&token="+url.QueryEscape(token), nil)
		req.Header.Set("Accept-Language", lang)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := get(key.Sign(t, identitytest.For(h.room, "m-1", now, time.Hour)), "en")
	var idc *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == request.IdentityCookiePrefix+h.room {
			idc = c
		}
	}
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 303 || idc == nil || loc != "/r/"+h.room+"?utm_source=mail" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("a good link: %d to %q, cookie %v", resp.StatusCode, loc, idc)
	}
	// The join with the cookie alone is the identity's.
	r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, idc)
	if r.status != 200 {
		t.Fatalf("a join with the identity cookie: %d %s", r.status, r.body)
	}
	cases := []struct {
		name, token, lang string
		status            int
		says              string
	}{
		{"expired, in Korean", key.Sign(t, identitytest.For(h.room, "m-1", now.Add(-3*time.Hour), time.Hour)), "ko", 401, "로그인이 만료되었습니다"},
		{"no token", "", "en", 401, "could not be checked"},
	}
	for _, c := range cases {
		resp := get(c.token, c.lang)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.says) || !strings.Contains(string(b), `href="https://shop.example/signin"`) {
			t.Fatalf("%s: %d %s, want %d saying %q and linking the sign-in", c.name, resp.StatusCode, b, c.status, c.says)
		}
	}
}

// TestReadJoinKeys: the enter's body brings a code and an identity, or
// nothing when it is empty or white space, announced or chunked; the
// largest keys fit the enter's cap, and anything else is refused.
func TestReadJoinKeys(t *testing.T) {
	t.Parallel()
	largest := `{"code":"` + strings.Repeat("A", maxCodeLen) + `","identity":"` + strings.Repeat("e", identity.MaxTokenLen) + `"}`
	for _, tt := range []struct {
		name    string
		body    string
		chunked bool
		ok      bool
		want    joinKeys
		status  int
	}{
		{"no body", "", false, true, joinKeys{}, 200},
		{"white space", " \r\n\t", false, true, joinKeys{}, 200},
		{"chunked white space", "\n", true, true, joinKeys{}, 200},
		{"chunked code", `{"code":" ab-cd "}`, true, true, joinKeys{Code: "ab-cd"}, 200},
		{"both", `{"code":"x","identity":"t.o.k"}`, false, true, joinKeys{Code: "x", Identity: "t.o.k"}, 200},
		{"the largest keys", largest, false, true, joinKeys{Code: strings.Repeat("A", maxCodeLen), Identity: strings.Repeat("e", identity.MaxTokenLen)}, 200},
		{"a longer code", `{"code":"` + strings.Repeat("A", maxCodeLen+1) + `"}`, false, false, joinKeys{}, 400},
		{"an unknown field", `{"coupon":"x"}`, false, false, joinKeys{}, 400},
		{"two objects", `{} {}`, false, false, joinKeys{}, 400},
		{"over the cap", strings.Repeat(" ", enterBodyMax+1), true, false, joinKeys{}, 413},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/rooms/drop/queue", strings.NewReader(tt.body))
			if tt.chunked {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			r.Body = http.MaxBytesReader(w, r.Body, enterBodyMax)
			k, ok := readJoinKeys(w, r)
			if ok != tt.ok || w.Code != tt.status || ok && k != tt.want {
				t.Fatalf("keys %+v %v, status %d %s; want %+v %v, %d", k, ok, w.Code, w.Body, tt.want, tt.ok, tt.status)
			}
		})
	}
}

// TestJoinAccessForm: the join form asks for what chooses a line: a code
// field where a line takes codes, the sign-in where one takes members,
// offered beside a line open to all and required without one.
func TestJoinAccessForm(t *testing.T) {
	code := room.Line{Name: "presale", Share: 0.5, Access: room.LineCode}
	member := room.Line{Name: "members", Share: 0.5, Access: room.LineIdentity}
	open := room.Line{Name: "general", Share: 0.5, Access: room.LineOpen}
	const signIn = "https://shop.example/signin"
	cases := []struct {
		name string
		set  room.Settings
		want views.JoinAccess
	}{
		{"an open room", room.Settings{}, views.JoinAccess{}},
		{"a code room", room.Settings{Access: room.Access{Access: room.AccessCode}}, views.JoinAccess{Code: true}},
		{"a members room", room.Settings{Access: room.Access{Identity: room.IdentityRequired, SignInURL: signIn}}, views.JoinAccess{SignIn: signIn}},
		{"a code line beside an open one", room.Settings{Lines: []room.Line{code, open}}, views.JoinAccess{Code: true, Lines: true}},
		{"a members line beside an open one", room.Settings{Access: room.Access{Identity: room.IdentityOptional, SignInURL: signIn}, Lines: []room.Line{member, open}},
			views.JoinAccess{SignIn: signIn, Lines: true}},
		{"a code line and a members line", room.Settings{Access: room.Access{Identity: room.IdentityOptional, SignInURL: signIn}, Lines: []room.Line{code, member}},
			views.JoinAccess{Code: true, SignIn: signIn}},
		{"open lines only", room.Settings{Lines: []room.Line{open, {Name: "b", Share: 0.5}}}, views.JoinAccess{Lines: true}},
	}
	for _, c := range cases {
		if got := joinAccess(c.set); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
