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
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, strings.TrimRight(base, "/")+"/api/admin/rooms/"+url.PathEscape(room), bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("admin: PUT room %s: %s: %s", room, resp.Status, msg)
	}
	return nil
}

// DeleteRoom removes a room, its line and its keys through the admin API
// of the server at base.
func DeleteRoom(ctx context.Context, base, room, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, strings.TrimRight(base, "/")+"/api/admin/rooms/"+url.PathEscape(room), nil)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("admin: DELETE room %s: %s: %s", room, resp.Status, msg)
	}
	return nil
}

// NewAPIKey makes a new API key for a gate-mode room through the admin
// API of the server at base (POST /api/admin/rooms/{room}/apikey) and
// returns it; the previous key stops working.
func NewAPIKey(ctx context.Context, base, room, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+"/api/admin/rooms/"+url.PathEscape(room)+"/apikey", nil)
	if err != nil {
		return "", fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("admin: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return "", fmt.Errorf("admin: new API key for %s: %s: %s", room, resp.Status, msg)
	}
	var out struct {
		APIKey string `json:"apiKey"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.APIKey == "" {
		return "", fmt.Errorf("admin: new API key for %s: no key in the answer (%v)", room, err)
	}
	return out.APIKey, nil
}
