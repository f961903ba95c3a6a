package gatemode

import (
	"context"
	"net/http"
	"strings"
)

// guardedKey marks, in a request's context, a protected request let
// through: its answer must not be kept by a shared cache in front of the
// proxy (a CDN), which would serve it to buyers without a session.
type guardedKey struct{}

func markGuarded(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), guardedKey{}, true))
}

func isGuarded(r *http.Request) bool {
	v, _ := r.Context().Value(guardedKey{}).(bool)
	return v
}

// privateAnswer makes a protected page's answer private: shared caches
// may not keep it ("public" and "s-maxage" dropped, "private" added); the
// buyer's own browser still may, as the origin said.
func privateAnswer(resp *http.Response) error {
	if resp.Request == nil || !isGuarded(resp.Request) {
		return nil
	}
	out := []string{"private"}
	for _, v := range resp.Header.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(d)
			name, _, _ := strings.Cut(strings.ToLower(d), "=")
			switch name {
			case "", "public", "private", "s-maxage":
			default:
				out = append(out, d)
			}
		}
	}
	resp.Header.Set("Cache-Control", strings.Join(out, ", "))
	return nil
}
