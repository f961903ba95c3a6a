package web

import (
	"context"
	"encoding/json"
	"strconv"

	"waitingroom/server/audit"
	"waitingroom/server/order"
)

// The one path of every write of a room's products, for the JSON admin API
// and the console alike: the catalog's write (which reopens a room whose
// stock went up), the log and the audit log.

// addProduct creates a product in room name as actor. A product for no
// room would sell nothing: it returns room.ErrNotFound for an unknown
// room, or the catalog's errors.
func (s *Server) addProduct(ctx context.Context, actor, name string, p order.ProductPatch) (order.Product, error) {
	if _, err := s.rooms.Room(ctx, name); err != nil {
		return order.Product{}, err
	}
	if p.ImageURL != nil {
		if err := s.checkProductImage(ctx, *p.ImageURL); err != nil {
			return order.Product{}, err
		}
	}
	created, err := s.catalog.CreateProduct(ctx, name, p)
	if err != nil {
		return order.Product{}, err
	}
	s.log.Info("product created", "room", name, "by", actor, "product", created.ID, "price", created.Price, "currency", created.Currency, "stock", created.Stock)
	s.audit(ctx, audit.Entry{Actor: actor, Room: name, Action: "product.create", Target: productTarget(created.ID), New: compactJSON(created)})
	return created, nil
}

// changeProduct applies p to product id of room name as actor: fields
// left out keep their value; stock is set, not added.
func (s *Server) changeProduct(ctx context.Context, actor, name string, id int64, p order.ProductPatch) (order.Product, error) {
	if p.ImageURL != nil {
		if err := s.checkProductImage(ctx, *p.ImageURL); err != nil && !s.productImageIs(ctx, name, id, *p.ImageURL) {
			return order.Product{}, err
		}
	}
	before, after, err := s.catalog.ChangeProduct(ctx, name, id, p)
	if err != nil {
		return order.Product{}, err
	}
	s.log.Info("product updated", "room", name, "by", actor, "product", id, "price", after.Price, "currency", after.Currency, "stock", after.Stock, "restocked", after.Stock > before.Stock)
	if cs := audit.Changes(before, after); len(cs) > 0 {
		cs = withCurrency(cs, before, after)
		old, nw := changeObjects(cs)
		s.audit(ctx, audit.Entry{Actor: actor, Room: name, Action: "product.update", Target: productTarget(id), Old: old, New: nw})
	}
	return after, nil
}

// productImageIs reports whether product id of room name has the image
// u already: a product saved before its image was checked stays editable.
func (s *Server) productImageIs(ctx context.Context, name string, id int64, u string) bool {
	ps, err := s.catalog.AdminProducts(ctx, name)
	if err != nil {
		return false
	}
	for _, p := range ps {
		if p.ID == id {
			return p.ImageURL == u
		}
	}
	return false
}

// removeProduct deletes product id of room name as actor. A product with
// orders stays (order.ErrProductHasOrders).
func (s *Server) removeProduct(ctx context.Context, actor, name string, id int64) error {
	// The product as it was, for the audit log.
	var old order.Product
	if ps, err := s.catalog.AdminProducts(ctx, name); err == nil {
		for _, p := range ps {
			if p.ID == id {
				old = p
			}
		}
	}
	if err := s.catalog.DeleteProduct(ctx, name, id); err != nil {
		return err
	}
	s.log.Info("product deleted", "room", name, "by", actor, "product", id)
	entry := audit.Entry{Actor: actor, Room: name, Action: "product.delete", Target: productTarget(id)}
	if old.ID == id {
		entry.Old = compactJSON(old)
	}
	s.audit(ctx, entry)
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
