package web

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"

	"waitingroom/server/admin"
	"waitingroom/web/response"
)

// apiKeyPrefix marks a room API key, so that a leaked one is recognised.
const apiKeyPrefix = "wrk_"

// newAPIKey returns a new room API key (32 random bytes, base64url) and
// the hex SHA-256 that the room keeps of it.
func newAPIKey() (key, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	key = apiKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(key))
	return key, hex.EncodeToString(sum[:]), nil
}

// replaceAPIKey gives room name a new API key as actor, and returns it:
// the room keeps only its hash, so it is shown this once. The old key
// stops working at once. The hash is written alone (SetAPIKeyHash), so a
// settings save racing it cannot bring the old key back; the change is
// recorded in the database and audited.
func (s *Server) replaceAPIKey(ctx context.Context, actor, name string) (string, error) {
	key, hash, err := newAPIKey()
	if err != nil {
		return "", err
	}
	old, err := s.rooms.Room(ctx, name)
	if err != nil {
		return "", err
	}
	if err := s.rooms.SetAPIKeyHash(ctx, name, hash); err != nil {
		return "", err
	}
	cur, err := s.rooms.Room(ctx, name)
	if err != nil {
		cur = old // the record takes the hash from Redis all the same
	}
	s.roomWrites.Record(ctx, name, cur)
	s.log.Info("room API key replaced", "room", name, "by", actor)
	next := old
	next.Gate.APIKeyHash = hash
	s.roomWrites.Audit(ctx, actor, name, admin.ActionAPIKey, admin.Written{Old: old, New: next})
	return key, nil
}

// postAPIKey serves POST /api/admin/rooms/{room}/apikey: 201
// {"apiKey":"wrk_…"}.
func (s *Server) postAPIKey(w http.ResponseWriter, r *http.Request) {
	if !drainBody(w, r) {
		return
	}
	key, err := s.replaceAPIKey(r.Context(), apiActor, r.PathValue("room"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	response.WriteJSON(w, http.StatusCreated, map[string]string{"apiKey": key})
}
