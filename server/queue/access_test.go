package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"waitingroom/server/identity/identitytest"
	"waitingroom/server/room"
)

// TestEnterWithCredentials: a room whose access takes a code, or that
// requires an identity, gives a new place only to an enter that brings
// it, checked before the proof of work; a visitor with a place needs
// none; a closed room says it is closed first.
func TestEnterWithCredentials(t *testing.T) {
	ctx := context.Background()
	keys := identitytest.NewKey(t, "ec", "k1").PEM(t)
	codeRoom := func(s *room.Settings) { s.Access.Access = room.AccessCode }
	idRoom := func(s *room.Settings) {
		s.Identity, s.IdentityKeys, s.SignInURL = room.IdentityRequired, keys, "https://shop.example/signin"
	}
	both := func(s *room.Settings) { codeRoom(s); idRoom(s) }
	cases := []struct {
		name    string
		mut     func(*room.Settings)
		cred    Credentials
		minted  bool
		want    error
		created bool
	}{
		{"an open room takes anyone", nil, Credentials{}, false, nil, true},
		{"a code room, no code", codeRoom, Credentials{}, false, ErrCodeRequired, false},
		{"a code room, no code, a minted visitor", codeRoom, Credentials{}, true, ErrCodeRequired, false},
		{"a code room, a code", codeRoom, Credentials{Code: true}, false, nil, true},
		{"a code room, an identity is no code", codeRoom, Credentials{Identity: true}, false, ErrCodeRequired, false},
		{"an identity room, none", idRoom, Credentials{}, false, ErrIdentityRequired, false},
		{"an identity room, none, a minted visitor", idRoom, Credentials{}, true, ErrIdentityRequired, false},
		{"an identity room, a code is no identity", idRoom, Credentials{Code: true}, false, ErrIdentityRequired, false},
		{"an identity room, an identity", idRoom, Credentials{Identity: true}, false, nil, true},
		{"both, a code only", both, Credentials{Code: true}, false, ErrIdentityRequired, false},
		{"both, both", both, Credentials{Code: true, Identity: true}, false, nil, true},
		{"both, neither: the identity is asked first", both, Credentials{}, false, ErrIdentityRequired, false},
		{"both, an identity only", both, Credentials{Identity: true}, false, ErrCodeRequired, false},
		{"a code room with a challenge: the code first", func(s *room.Settings) { codeRoom(s); s.Challenge = room.ChallengeAlways },
			Credentials{}, false, ErrCodeRequired, false},
		{"a closed code room says it is closed", func(s *room.Settings) { codeRoom(s); s.Mode = room.ModeClosed },
			Credentials{}, false, ErrSaleEnded, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, name, _ := newRoom(t, settings(c.mut))
			v := visitors(t, 1)[0]
			var p Position
			var err error
			if c.minted && c.cred == (Credentials{}) {
				p, err = e.EnterNew(ctx, name, v, "", Campaign{})
			} else {
				p, err = e.EnterWith(ctx, name, v, "", Campaign{}, Proof{}, c.cred)
			}
			if !errors.Is(err, c.want) || p.Created != c.created {
				t.Fatalf("enter: %+v %v, want %v, created %v", p, err, c.want, c.created)
			}
			if c.want != nil {
				if p, err := e.Position(ctx, name, v); err != nil || p.Status != StatusNotEntered {
					t.Fatalf("after a refused enter: %+v %v, want NOT_ENTERED", p, err)
				}
				return
			}
			// Back with nothing: the place is theirs.
			again, err := e.EnterWith(ctx, name, v, "", Campaign{}, Proof{}, Credentials{})
			if err != nil || again.Ticket != p.Ticket || again.Created {
				t.Fatalf("re-enter without credentials: %+v %v, want ticket %d", again, err, p.Ticket)
			}
		})
	}
}

// TestEnterWithCredentialsInThePrequeue: the pre-queue takes a code as the
// line does.
func TestEnterWithCredentialsInThePrequeue(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) {
		s.Access.Access = room.AccessCode
		now := time.Now()
		pq, op := now.Add(-time.Minute), now.Add(time.Hour)
		s.PrequeueAt, s.OpensAt = &pq, &op
	}))
	v := visitors(t, 2)
	if _, err := e.EnterWith(ctx, name, v[0], "", Campaign{}, Proof{}, Credentials{}); !errors.Is(err, ErrCodeRequired) {
		t.Fatalf("pre-queue join without a code: %v, want ErrCodeRequired", err)
	}
	p, err := e.EnterWith(ctx, name, v[1], "", Campaign{}, Proof{}, Credentials{Code: true})
	if err != nil || p.Status != StatusPrequeued || !p.Created {
		t.Fatalf("pre-queue join with a code: %+v %v", p, err)
	}
}

// TestTakeGuess: a network has GuessBudget refused codes a window; right
// codes are forgiven; the next window starts afresh; networks are apart.
func TestTakeGuess(t *testing.T) {
	ctx := context.Background()
	e, _, _ := newRoom(t, settings(nil))
	clock := clockOf(t, e)
	// Start at the beginning of a window, so that the steps stay in it.
	w := GuessWindow.Milliseconds()
	clock.Advance(time.Duration(w-clock.Now().UnixMilli()%w) * time.Millisecond)
	net := "203.0.113.0/24-" + visitors(t, 1)[0]
	for i := range GuessBudget {
		g, err := e.TakeGuess(ctx, net)
		if err != nil {
			t.Fatalf("guess %d: %v", i+1, err)
		}
		if i == 0 {
			// A right code gives its guess back.
			if err := e.ForgiveGuess(ctx, g); err != nil {
				t.Fatal(err)
			}
			if _, err := e.TakeGuess(ctx, net); err != nil {
				t.Fatalf("the guess after a forgiven one: %v", err)
			}
		}
	}
	clock.Advance(10 * time.Minute)
	_, err := e.TakeGuess(ctx, net)
	var ge *GuessError
	if !errors.As(err, &ge) || ge.RetryAfter.Round(time.Second) != 50*time.Minute {
		t.Fatalf("a guess over the budget: %v, want a GuessError of 50m", err)
	}
	if _, err := e.TakeGuess(ctx, net+"-other"); err != nil {
		t.Fatalf("another network: %v", err)
	}
	clock.Advance(50 * time.Minute)
	if _, err := e.TakeGuess(ctx, net); err != nil {
		t.Fatalf("the next window: %v", err)
	}
}
