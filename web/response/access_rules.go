package response

import (
	"errors"
	"net/http"
	"time"

	"waitingroom/server/access"
	"waitingroom/server/identity"
	"waitingroom/server/queue"
	"waitingroom/views"
)

// SignIn is a join refused for its identity, or for having none, in a
// room whose shop signs its buyers in at URL: the answer links there.
type SignIn struct {
	URL string
	Err error
}

func (e *SignIn) Error() string { return e.Err.Error() }
func (e *SignIn) Unwrap() error { return e.Err }

// ErrIdentityNotTaken refuses an identity sent to a room that takes none.
var ErrIdentityNotTaken = errors.New("identity: the room takes no identities")

// SignInRefusal is the body of a join refused for its identity: the
// Error, and the shop's sign-in page ("" when the room names none).
type SignInRefusal struct {
	Error
	SignIn string `json:"signIn,omitempty"`
}

func signInBody(e Error, err error, _ Detail) any {
	r := SignInRefusal{Error: e}
	if si, ok := as[*SignIn](err); ok {
		r.SignIn = si.URL
	}
	return r
}

// guessWait is the Retry-After of a network whose refused codes are spent.
func guessWait(err error) (time.Duration, bool) {
	if e, ok := as[*queue.GuessError](err); ok {
		return e.RetryAfter, true
	}
	return 0, false
}

func accessText(f func(views.AccessText) string) func(views.Messages, error) string {
	return func(t views.Messages, _ error) string { return f(views.AccessTextFor(t.Lang)) }
}

func accessRefused(t views.Messages) string { return views.AccessTextFor(t.Lang).Refused }

// identityInvalid matches the refusals of a token that say nothing the
// buyer can act on but signing in again.
func identityInvalid(err error) bool {
	for _, e := range []error{identity.ErrMalformed, identity.ErrSignature, identity.ErrNoSubject, identity.ErrNoExpiry} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// accessRules are the table's rows of a join into a room whose access is
// limited: its access code, and the shop's identity. Their pages offer no
// retry of the post: the room's page asks again.
func accessRules() []Rule {
	return []Rule{
		{Name: "access code required", Match: is(queue.ErrCodeRequired), Example: queue.ErrCodeRequired,
			Status: http.StatusForbidden, Code: "code_required", Message: "Joining this room takes an access code: send it as \"code\" in the JSON body.",
			NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.CodeRequired })},
		{Name: "access code unknown", Match: is(access.ErrUnknown), Example: access.ErrUnknown,
			Status: http.StatusForbidden, Code: "code_unknown", Message: "This access code is not valid.",
			NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.CodeUnknown })},
		{Name: "access code of another room", Match: is(access.ErrWrongRoom), Example: access.ErrWrongRoom,
			Status: http.StatusForbidden, Code: "code_wrong_room", Message: "This access code is for another room.",
			NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.CodeWrongRoom })},
		{Name: "access code used up", Match: is(access.ErrUsedUp), Example: access.ErrUsedUp,
			Status: http.StatusConflict, Code: "code_used_up", Message: "This access code has been used as many times as it allows.",
			NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.CodeUsedUp })},
		{Name: "access code expired", Match: is(access.ErrExpired), Example: access.ErrExpired,
			Status: http.StatusForbidden, Code: "code_expired", Message: "This access code has expired.",
			NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.CodeExpired })},
		{Name: "access codes throttled", Match: asIs[*queue.GuessError], Example: &queue.GuessError{RetryAfter: time.Minute},
			Status: http.StatusTooManyRequests, Code: "code_throttled", Message: "Too many access codes that are not valid came from this network; retry after the pause.",
			NoStore: true, Wait: guessWait, Heading: func(t views.Messages) string { return t.TitleTooMany },
			Text: func(t views.Messages, err error) string {
				d, _ := guessWait(err)
				return views.Fill(views.AccessTextFor(t.Lang).CodeThrottled, "t", t.Duration(int64(RetrySeconds(d))))
			}},

		{Name: "identity required", Match: is(queue.ErrIdentityRequired), Example: &SignIn{URL: "https://shop.example/signin", Err: queue.ErrIdentityRequired},
			Status: http.StatusForbidden, Code: "identity_required", Message: "Joining this room takes the shop's signed identity: sign in at the shop (signIn), and come back with it.",
			Body: signInBody, NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.IdentityRequired })},
		{Name: "identity expired", Match: is(identity.ErrExpired), Example: identity.ErrExpired,
			Status: http.StatusUnauthorized, Code: "identity_expired", Message: "The identity has expired: sign in at the shop again.",
			Body: signInBody, NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.IdentityExpired })},
		{Name: "identity not yet valid", Match: is(identity.ErrNotYetValid), Example: identity.ErrNotYetValid,
			Status: http.StatusUnauthorized, Code: "identity_not_yet_valid", Message: "The identity is not valid yet (nbf or iat ahead of the room's clock by more than a minute).",
			Body: signInBody, NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.IdentityNotYet })},
		{Name: "identity of another room", Match: is(identity.ErrWrongRoom), Example: identity.ErrWrongRoom,
			Status: http.StatusForbidden, Code: "identity_wrong_room", Message: "The identity is for another room (its aud is not {room}).",
			Body: signInBody, NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.IdentityWrongRoom })},
		{Name: "identity invalid", Match: identityInvalid, Example: identity.ErrSignature,
			Status: http.StatusUnauthorized, Code: "identity_invalid", Message: "The identity is not a token signed by the shop's keys with a sub and an exp.",
			Body: signInBody, NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.IdentityInvalid })},
		{Name: "room full for a bypass", Match: is(queue.ErrRoomFull), Example: queue.ErrRoomFull,
			Status: http.StatusServiceUnavailable, Code: "room_full", Message: "Every slot of the room's maxActive is held: a bypass takes none past it. Retry in a moment.",
			NoStore: true, Wait: func(error) (time.Duration, bool) { return 5 * time.Second, true },
			Heading: func(t views.Messages) string { return t.TitleTooMany }, Retry: RetryRequest,
			Text: func(t views.Messages, _ error) string { return views.BypassTextFor(t.Lang).Full }},
		{Name: "test link not valid", Match: func(err error) bool {
			return errors.Is(err, queue.ErrLinkUnknown) || errors.Is(err, queue.ErrLinkExpired) || errors.Is(err, queue.ErrLinkUsedUp)
		}, Example: queue.ErrLinkUsedUp,
			Status: http.StatusForbidden, Code: "link_invalid", Message: "This test link is not valid: revoked, expired or used up.",
			NoStore: true, Heading: accessRefused, Text: func(t views.Messages, _ error) string { return views.BypassTextFor(t.Lang).LinkGone }},

		{Name: "identity not taken", Match: is(ErrIdentityNotTaken), Example: ErrIdentityNotTaken,
			Status: http.StatusBadRequest, Code: "identity_not_taken", Message: "This room takes no identities: join without one.",
			NoStore: true, Heading: accessRefused, Text: accessText(func(t views.AccessText) string { return t.IdentityOff })},
	}
}
