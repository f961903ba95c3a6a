package gatemode

import (
	"context"
	"net/http"
	"time"
)

// ShopSignal is told how the shop answered requests, for the adaptive
// controller's health signal (adapt.Recorder, which counts only the
// adaptive rooms and batches its Redis writes): n answers of room that
// took took each, reason "placed" for an answer (status < 500) and
// "unavailable" for a 5xx, a timeout or a connection error. It must never
// block.
type ShopSignal interface {
	ObserveOrders(roomName, reason string, took time.Duration, n int64)
}

// Reasons a shop answer is counted under (those of the order path's
// signal, so that its p95 and error budget apply unchanged).
const (
	ShopAnswered    = "placed"
	ShopUnavailable = "unavailable"
)

// shopReason is the signal's reason for an answer of status.
func shopReason(status int) string {
	if status >= http.StatusInternalServerError {
		return ShopUnavailable
	}
	return ShopAnswered
}

// observedKey carries, in a protected request's context, the room whose
// live session let it through: the origin's answer to it is that room's
// signal.
type observedKey struct{}

func markObserved(r *http.Request, roomName string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), observedKey{}, roomName))
}

func observedRoom(r *http.Request) string {
	v, _ := r.Context().Value(observedKey{}).(string)
	return v
}

// observedTransport times the origin's answers to the requests marked by
// markObserved, from the request's start to the response's headers (a
// long body or stream is the buyer's download, not the shop's work).
type observedTransport struct {
	next   http.RoundTripper
	signal ShopSignal
}

func (t observedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	name := observedRoom(req)
	if name == "" {
		return t.next.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	took := time.Since(start)
	switch {
	case err == nil:
		t.signal.ObserveOrders(name, shopReason(resp.StatusCode), took, 1)
	case req.Context().Err() == nil: // a timeout or a connection error, not a buyer who left
		t.signal.ObserveOrders(name, ShopUnavailable, took, 1)
	}
	return resp, err
}
