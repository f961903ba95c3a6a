package queue

import (
	"context"
	"fmt"
	"time"
)

// TouchSession reports the live session sessionID of roomName and, when
// renew and the room's sessions are idle ones, pushes its expiry to now +
// sessionSeconds. It is one script call, in a round trip of its own or,
// under load, shared with the checks that arrived with it (touch_batch.go).
// It returns ErrSessionGone
// for a session that ended, went idle or never was.
func (e *Engine) TouchSession(ctx context.Context, roomName, sessionID string, renew bool) (Session, error) {
	if !validID(sessionID) {
		return Session{}, ErrSessionGone
	}
	res, err := e.touches.do(&touchCall{ctx: ctx, room: roomName, id: sessionID, renew: renew})
	if err != nil {
		return Session{}, fmt.Errorf("queue: touch session in %s: %w", roomName, err)
	}
	s, ok := touched(roomName, sessionID, res)
	if !ok {
		return Session{}, ErrSessionGone
	}
	return s, nil
}

// touched reads touch_session.lua's reply res about session sessionID of
// roomName; ok is false for a session gone.
func touched(roomName, sessionID string, res []any) (s Session, ok bool) {
	if len(res) != 6 || asInt(res[0]) != 1 {
		return Session{}, false
	}
	return Session{ID: sessionID, Room: roomName, Subject: asString(res[5]), Started: time.UnixMilli(asInt(res[1])),
		Expires: time.UnixMilli(asInt(res[2])), IdleSeconds: int(asInt(res[3])), Mode: asString(res[4])}, true
}

// EndSession ends the session sessionID of roomName now and frees its
// slot; ending a gone session is not an error.
func (e *Engine) EndSession(ctx context.Context, roomName, sessionID string) error {
	if !validID(sessionID) {
		return nil
	}
	if err := e.run(ctx, e.s.endSession, roomName, sessionID).Err(); err != nil {
		return fmt.Errorf("queue: end session in %s: %w", roomName, err)
	}
	return nil
}

// ActiveSessions counts roomName's live sessions.
func (e *Engine) ActiveSessions(ctx context.Context, roomName string) (int, error) {
	n, err := e.run(ctx, e.s.activeSessions, roomName).Int()
	if err != nil {
		return 0, fmt.Errorf("queue: count sessions in %s: %w", roomName, err)
	}
	return n, nil
}
