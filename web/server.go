// Package web is the HTTP adapter: routes, the visitor cookie, JSON errors
// and metrics over the queue engine.
package web

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/visitor"
)

// Queue is the line as the HTTP handlers use it.
type Queue interface {
	Enter(ctx context.Context, room, visitor string) (queue.Position, error)
	Position(ctx context.Context, room, visitor string) (queue.Position, error)
	Leave(ctx context.Context, room, visitor string) (bool, error)
}

// Rooms is the room store as the admin API uses it.
type Rooms interface {
	Room(ctx context.Context, name string) (room.Settings, error)
	SaveRoom(ctx context.Context, name string, s room.Settings) error
	Stats(ctx context.Context, name string) (queue.Stats, error)
}

// Options are a Server's dependencies.
type Options struct {
	Queue Queue
	Rooms Rooms
	// Health reports whether the server's dependencies answer.
	Health func(ctx context.Context) error
	// Signer signs the wr_vid cookie.
	Signer *visitor.Signer
	// AdminToken guards the admin API; empty disables it.
	AdminToken string
	// Static holds the embedded assets (static/ at its root).
	Static  fs.FS
	Metrics *Metrics
	Log     *slog.Logger
}

// Server serves the HTTP contract of BRIEF §4.
type Server struct {
	q       Queue
	rooms   Rooms
	health  func(ctx context.Context) error
	signer  *visitor.Signer
	admin   []byte // SHA-256 of the admin token, nil when disabled
	static  fs.FS
	metrics *Metrics
	log     *slog.Logger
}

// New returns a Server. Every field of o is required but AdminToken.
func New(o Options) *Server {
	s := &Server{q: o.Queue, rooms: o.Rooms, health: o.Health, signer: o.Signer,
		metrics: o.Metrics, log: o.Log, static: o.Static}
	if o.AdminToken != "" {
		s.admin = digest(o.AdminToken)
	}
	return s
}

// requestTimeout bounds the Redis work of one API request.
const requestTimeout = 5 * time.Second

// Handler returns the server's routes wrapped in its middleware.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.Handle(rt.pattern, rt.handler)
	}
	return s.recoverPanics(jsonFallbacks(mux))
}
