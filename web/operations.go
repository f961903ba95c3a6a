package web

import (
	"context"

	"waitingroom/server/order"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/server/salelog"
)

// Catalog is a room's product list as the admin API edits it.
type Catalog interface {
	AdminProducts(ctx context.Context, room string) ([]order.Product, error)
	CreateProduct(ctx context.Context, room string, p order.ProductPatch) (order.Product, error)
	// ChangeProduct returns the product before and after the change.
	ChangeProduct(ctx context.Context, room string, id int64, p order.ProductPatch) (before, after order.Product, err error)
	DeleteProduct(ctx context.Context, room string, id int64) error
}

// RoomRecords is the database's record of the rooms, written on every
// admin write so that an emptied Redis can be refilled. A failed write is
// retried in the background; the live settings stand either way.
type RoomRecords interface {
	Record(ctx context.Context, name string, s room.Settings) error
	Forget(ctx context.Context, name string) error
}

// Readiness checks the server's dependencies for /readyz.
type Readiness interface {
	Check(ctx context.Context) roomsync.Report
}

// SaleLog is told when a room opens, pauses, resumes, sells out, reopens
// or is deleted.
type SaleLog interface {
	Event(room string, ev salelog.Event, attrs ...any)
}

// noSaleLog drops the events.
type noSaleLog struct{}

func (noSaleLog) Event(string, salelog.Event, ...any) {}

// operations sets the operators' dependencies from o, with their
// fallbacks.
func (s *Server) operations(o Options) {
	s.catalog, s.codes, s.records, s.ready, s.sale = o.Catalog, o.Codes, o.Records, o.Ready, o.Sale
	s.recorded = o.RecordedRooms
	s.auditLog, s.placed = o.Audit, o.PlacedOrders
	if s.sale == nil {
		s.sale = noSaleLog{}
	}
}
