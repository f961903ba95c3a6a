// Package admin holds the audited writes of rooms and products that the
// JSON admin API and the console share: each write is validated, saved,
// recorded in the database, told to the sale log and written to the audit
// log, the same way whichever door it came through.
package admin

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/salelog"
)

// Store is the room store as the writes of rooms use it.
type Store interface {
	Room(ctx context.Context, name string) (room.Settings, error)
	SaveRoom(ctx context.Context, name string, s room.Settings) error
	// SaveRoomKeepingRate is SaveRoom that leaves the rate as it is (the
	// adaptive controller's).
	SaveRoomKeepingRate(ctx context.Context, name string, s room.Settings) error
	// APIKeyHash is room name's API key hash as it is now.
	APIKeyHash(ctx context.Context, name string) (string, error)
	// CreateRoom saves s only when room name does not exist, and reports
	// whether it did.
	CreateRoom(ctx context.Context, name string, s room.Settings) (bool, error)
	Stats(ctx context.Context, name string) (queue.Stats, error)
	SetSoldOut(ctx context.Context, name string, soldOut bool) error
	DeleteRoom(ctx context.Context, name string) (queue.Deletion, error)
}

// Records is the database's record of the rooms. A failed write is
// retried in the background; the live settings stand either way.
type Records interface {
	Record(ctx context.Context, name string, s room.Settings) error
	Forget(ctx context.Context, name string) error
}

// AuditLog records who changed what.
type AuditLog interface {
	Record(ctx context.Context, e audit.Entry) error
}

// SaleLog is told when a room opens, pauses, resumes, sells out, reopens
// or is deleted.
type SaleLog interface {
	Event(room string, ev salelog.Event, attrs ...any)
}

// Catalog is the product admin.
type Catalog interface {
	AdminProducts(ctx context.Context, room string) ([]order.Product, error)
	CreateProduct(ctx context.Context, room string, p order.ProductPatch) (order.Product, error)
	// ChangeProduct returns the product before and after the change.
	ChangeProduct(ctx context.Context, room string, id int64, p order.ProductPatch) (before, after order.Product, err error)
	DeleteProduct(ctx context.Context, room string, id int64) error
}

// The audit log's names of room changes.
const (
	ActionCreate = "room.create"
	ActionUpdate = "room.update"
	ActionDelete = "room.delete"
	ActionPause  = "room.pause"
	ActionResume = "room.resume"
	ActionDrain  = "room.drain"
	ActionClose  = "room.close"
	ActionReopen = "room.reopen"
	ActionAPIKey = "room.apikey"
)

// ErrExists refuses to create a room that is already there.
var ErrExists = errors.New("room already exists")

// InvalidError is settings that the room's rules refused; its text is the
// rule's, which names the field (a *room.FieldError says which).
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// DefaultAuditTimeout bounds one write to the audit log when
// Deps.AuditTimeout is 0.
const DefaultAuditTimeout = 5 * time.Second

// auditor writes entries to an audit log, if any, within its own time
// budget: a write whose request was cancelled is still audited.
type auditor struct {
	log     AuditLog
	timeout time.Duration
	slog    *slog.Logger
}

func (a auditor) record(ctx context.Context, e audit.Entry) {
	if a.log == nil {
		return
	}
	timeout := a.timeout
	if timeout <= 0 {
		timeout = DefaultAuditTimeout
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := a.log.Record(ctx, e); err != nil {
		a.slog.Error("admin: audit", "action", e.Action, "room", e.Room, "err", err)
	}
}

// noSaleLog drops the events.
type noSaleLog struct{}

func (noSaleLog) Event(string, salelog.Event, ...any) {}
