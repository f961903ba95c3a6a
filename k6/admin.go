package k6

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// PutRoom updates a room's settings through the admin API of the server
// at base: the fields of body, the others kept.
func PutRoom(ctx context.Context, base, room, token string, body map[string]any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	resp, err := adminCall(ctx, http.MethodPut, base, room, "", token, b, "PUT room "+room)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// DeleteRoom removes a room, its line and its keys through the admin API
// of the server at base.
func DeleteRoom(ctx context.Context, base, room, token string) error {
	resp, err := adminCall(ctx, http.MethodDelete, base, room, "", token, nil, "DELETE room "+room)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// NewAPIKey makes a new API key for a gate-mode room through the admin
// API of the server at base (POST /api/admin/rooms/{room}/apikey) and
// returns it; the previous key stops working.
func NewAPIKey(ctx context.Context, base, room, token string) (string, error) {
	what := "new API key for " + room
	resp, err := adminCall(ctx, http.MethodPost, base, room, "/apikey", token, nil, what)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.APIKey == "" {
		return "", fmt.Errorf("admin: %s: no key in the answer (%v)", what, err)
	}
	return out.APIKey, nil
}

// NewCodes makes count access codes of room, each good for uses joins,
// for line ("" for none) through the admin API of the server at base
// (POST /api/admin/rooms/{room}/codes) and returns them.
func NewCodes(ctx context.Context, base, room, token string, count, uses int, line string) ([]string, error) {
	what := "new codes for " + room
	b, err := json.Marshal(map[string]any{"count": count, "uses": uses, "line": line})
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	resp, err := adminCall(ctx, http.MethodPost, base, room, "/codes", token, b, what)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Codes []string `json:"codes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Codes) != count {
		return nil, fmt.Errorf("admin: %s: %d codes in the answer, want %d (%v)", what, len(out.Codes), count, err)
	}
	return out.Codes, nil
}

// adminCall sends method to /api/admin/rooms/{room}{sub} of the server at
// base with the admin token (and body as JSON, when not nil). An answer
// of 300 or more is an error naming what; the caller closes a good
// answer's body.
func adminCall(ctx context.Context, method, base, room, sub, token string, body []byte, what string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+"/api/admin/rooms/"+url.PathEscape(room)+sub, rd)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("admin: %s: %s: %s", what, resp.Status, msg)
	}
	return resp, nil
}
