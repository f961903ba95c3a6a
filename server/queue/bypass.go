package queue

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// The refusals of a bypass.
var (
	// ErrRoomFull refuses a bypass while every slot of the room's
	// maxActive is held: a bypass never holds one past it.
	ErrRoomFull = errors.New("every slot of the room is held")
	// ErrLinkUnknown, ErrLinkExpired and ErrLinkUsedUp refuse a test
	// link: none such (or revoked), past its end, or all its uses taken.
	ErrLinkUnknown = errors.New("no such test link")
	ErrLinkExpired = errors.New("the test link has expired")
	ErrLinkUsedUp  = errors.New("the test link is used up")
)

// Bypassed is what a bypass did: Admitted is false when the visitor held
// a live pass already (nothing was taken); PassExpires is the pass's end.
type Bypassed struct {
	Admitted    bool
	PassExpires time.Time
}

// Bypass lets visitor into room at once, outside the line, with a pass of
// token: held in a slot as every pass is, and never taken from the line,
// the rate's credit or the admitted count (Stats counts it apart, as
// Bypassed). With link ("" for none: a staff network) it takes one of
// that test link's uses, atomically with the pass. A visitor who holds a
// live pass keeps it and takes nothing. A visitor who waits in the line
// (or the pre-queue, or passed over while away) leaves it in the same
// call, counted as a leave, so that nobody holds a place and a pass at
// once. A room whose sale has ended lets nobody new in (a live pass is
// kept); one before its sale, in its pre-queue or paused does. It returns room.ErrNotFound,
// ErrSaleEnded, ErrRoomFull, or a link's refusal.
func (e *Engine) Bypass(ctx context.Context, roomName, visitor, token, link string) (Bypassed, error) {
	res, err := e.run(ctx, e.s.bypass, roomName, visitor, token, link).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		return Bypassed{}, fmt.Errorf("queue: bypass %s: %w", roomName, err)
	}
	out := Bypassed{Admitted: res[0] == 1, PassExpires: time.UnixMilli(res[1])}
	switch res[0] {
	case 1, 2:
		return out, nil
	case -1:
		err = room.ErrNotFound
	case -2:
		err = ErrRoomFull
	case -3:
		err = ErrLinkUnknown
	case -4:
		err = ErrLinkExpired
	case -5:
		err = ErrLinkUsedUp
	case -6:
		err = ErrSaleEnded
	default:
		err = fmt.Errorf("unexpected reply %v", res)
	}
	return Bypassed{}, fmt.Errorf("queue: bypass %s: %w", roomName, err)
}

// BypassLink is a room's test link: its id, its uses and how many were
// taken, and its end (zero for none).
type BypassLink struct {
	ID        string     `json:"id"`
	Uses      int        `json:"uses"`
	Used      int        `json:"used"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

// MaxBypassLinks bounds a room's test links, and MaxBypassUses one link's
// uses.
const (
	MaxBypassLinks = 100
	MaxBypassUses  = 1000
)

// ErrTooManyLinks refuses a test link past MaxBypassLinks.
var ErrTooManyLinks = errors.New("the room has as many test links as it may")

// AddBypassLink records room's test link id with uses, until expires (nil
// for none), in one step with the count of the room's links: it returns
// ErrTooManyLinks past MaxBypassLinks, and room.ErrNotFound for a room
// that does not exist (or was deleted meanwhile). The caller makes id
// unguessable and signs the link.
func (e *Engine) AddBypassLink(ctx context.Context, roomName, id string, uses int, expires *time.Time) error {
	var until int64
	if expires != nil {
		until = expires.UnixMilli()
	}
	res, err := e.run(ctx, e.s.addBypassLink, roomName, id, uses, until, MaxBypassLinks).Int64()
	switch {
	case err != nil:
	case res == -1:
		err = room.ErrNotFound
	case res == -2:
		err = ErrTooManyLinks
	case res != 1:
		err = fmt.Errorf("unexpected reply %d", res)
	}
	if err != nil {
		return fmt.Errorf("queue: add a test link to %s: %w", roomName, err)
	}
	return nil
}

// BypassLinks returns room's test links, by id.
func (e *Engine) BypassLinks(ctx context.Context, roomName string) ([]BypassLink, error) {
	m, err := e.rdb.HGetAll(ctx, roomKeys(e.ns, roomName).key("bypass")).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("queue: test links of %s: %w", roomName, err)
	}
	out := make([]BypassLink, 0, len(m))
	for id, v := range m {
		f := strings.Fields(v)
		if len(f) != 3 {
			continue
		}
		l := BypassLink{ID: id}
		l.Uses, _ = strconv.Atoi(f[0])
		l.Used, _ = strconv.Atoi(f[1])
		if ms, _ := strconv.ParseInt(f[2], 10, 64); ms > 0 {
			t := time.UnixMilli(ms).UTC()
			l.ExpiresAt = &t
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// RevokeBypassLink ends room's test link id; it reports whether there
// was one.
func (e *Engine) RevokeBypassLink(ctx context.Context, roomName, id string) (bool, error) {
	n, err := e.rdb.HDel(ctx, roomKeys(e.ns, roomName).key("bypass"), id).Result()
	if err != nil {
		return false, fmt.Errorf("queue: revoke a test link of %s: %w", roomName, err)
	}
	return n == 1, nil
}
