package admin

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/order"
	"waitingroom/server/room"
)

// RoomReader reads a room's settings.
type RoomReader interface {
	Room(ctx context.Context, name string) (room.Settings, error)
}

// ProductDeps are what the writes of products need. Rooms, Catalog and
// Log are required.
type ProductDeps struct {
	Rooms   RoomReader
	Catalog Catalog
	// CheckImage refuses a product's image address, with an
	// *order.InvalidProductError; nil takes every address the catalog
	// takes.
	CheckImage func(ctx context.Context, u string) error
	// Audit records who changed what; nil records nothing.
	Audit AuditLog
	// AuditTimeout bounds one write to the audit log (default
	// DefaultAuditTimeout).
	AuditTimeout time.Duration
	Log          *slog.Logger
}

// Products writes a room's products, for the JSON admin API and the
// console alike: the catalog's write (which reopens a room whose stock
// went up), the log and the audit log.
type Products struct {
	d     ProductDeps
	audit auditor
}

// NewProducts returns the writes of products over d.
func NewProducts(d ProductDeps) *Products {
	return &Products{d: d, audit: auditor{log: d.Audit, timeout: d.AuditTimeout, slog: d.Log}}
}

// checkImage applies ProductDeps.CheckImage to u.
func (ps *Products) checkImage(ctx context.Context, u string) error {
	if ps.d.CheckImage == nil {
		return nil
	}
	return ps.d.CheckImage(ctx, u)
}

// Add creates a product in room name as actor. A product for no room
// would sell nothing: it returns room.ErrNotFound for an unknown room, or
// the catalog's errors.
func (ps *Products) Add(ctx context.Context, actor, name string, p order.ProductPatch) (order.Product, error) {
	if _, err := ps.d.Rooms.Room(ctx, name); err != nil {
		return order.Product{}, err
	}
	if p.ImageURL != nil {
		if err := ps.checkImage(ctx, *p.ImageURL); err != nil {
			return order.Product{}, err
		}
	}
	created, err := ps.d.Catalog.CreateProduct(ctx, name, p)
	if err != nil {
		return order.Product{}, err
	}
	ps.d.Log.Info("product created", "room", name, "by", actor, "product", created.ID, "price", created.Price, "currency", created.Currency, "stock", created.Stock)
	ps.audit.record(ctx, audit.Entry{Actor: actor, Room: name, Action: "product.create", Target: productTarget(created.ID), New: CompactJSON(created)})
	return created, nil
}

// Change applies p to product id of room name as actor: fields left out
// keep their value; stock is set, not added.
func (ps *Products) Change(ctx context.Context, actor, name string, id int64, p order.ProductPatch) (order.Product, error) {
	if p.ImageURL != nil {
		if err := ps.checkImage(ctx, *p.ImageURL); err != nil && !ps.imageIs(ctx, name, id, *p.ImageURL) {
			return order.Product{}, err
		}
	}
	before, after, err := ps.d.Catalog.ChangeProduct(ctx, name, id, p)
	if err != nil {
		return order.Product{}, err
	}
	ps.d.Log.Info("product updated", "room", name, "by", actor, "product", id, "price", after.Price, "currency", after.Currency, "stock", after.Stock, "restocked", after.Stock > before.Stock)
	if cs := audit.Changes(before, after); len(cs) > 0 {
		cs = withCurrency(cs, before, after)
		old, nw := changeObjects(cs)
		ps.audit.record(ctx, audit.Entry{Actor: actor, Room: name, Action: "product.update", Target: productTarget(id), Old: old, New: nw})
	}
	return after, nil
}

// imageIs reports whether product id of room name has the image u
// already: a product saved before its image was checked stays editable.
func (ps *Products) imageIs(ctx context.Context, name string, id int64, u string) bool {
	p, ok := ps.product(ctx, name, id)
	return ok && p.ImageURL == u
}

// product reads product id of room name, and reports whether it could.
func (ps *Products) product(ctx context.Context, name string, id int64) (order.Product, bool) {
	all, err := ps.d.Catalog.AdminProducts(ctx, name)
	if err != nil {
		return order.Product{}, false
	}
	for _, p := range all {
		if p.ID == id {
			return p, true
		}
	}
	return order.Product{}, false
}

// Remove deletes product id of room name as actor. A product with orders
// stays (order.ErrProductHasOrders).
func (ps *Products) Remove(ctx context.Context, actor, name string, id int64) error {
	old, found := ps.product(ctx, name, id) // the product as it was, for the audit log
	if err := ps.d.Catalog.DeleteProduct(ctx, name, id); err != nil {
		return err
	}
	ps.d.Log.Info("product deleted", "room", name, "by", actor, "product", id)
	entry := audit.Entry{Actor: actor, Room: name, Action: "product.delete", Target: productTarget(id)}
	if found {
		entry.Old = CompactJSON(old)
	}
	ps.audit.record(ctx, entry)
	return nil
}

// withCurrency adds the product's currency, on both sides, to changes of
// its price that leave the currency as it was: a price is in the
// currency's minor unit, and the audit page writes it in that currency
// ("$19.99", not 1999). The page lists no change of the equal currency.
func withCurrency(cs []audit.Change, before, after order.Product) []audit.Change {
	price := false
	for _, c := range cs {
		if c.Field == "currency" {
			return cs
		}
		price = price || c.Field == "price"
	}
	if !price {
		return cs
	}
	o, _ := json.Marshal(before.Currency)
	n, _ := json.Marshal(after.Currency)
	return append(cs, audit.Change{Field: "currency", Old: string(o), New: string(n)})
}

// productTarget names a product in the audit log.
func productTarget(id int64) string { return "product " + strconv.FormatInt(id, 10) }
