package web

import (
	"context"

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
	created, err := s.catalog.CreateProduct(ctx, name, p)
	if err != nil {
		return order.Product{}, err
	}
	s.log.Info("product created", "room", name, "by", actor, "product", created.ID, "price", created.Price, "currency", created.Currency, "stock", created.Stock)
	return created, nil
}

// changeProduct applies p to product id of room name as actor: fields
// left out keep their value; stock is set, not added.
func (s *Server) changeProduct(ctx context.Context, actor, name string, id int64, p order.ProductPatch) (order.Product, error) {
	before, after, err := s.catalog.ChangeProduct(ctx, name, id, p)
	if err != nil {
		return order.Product{}, err
	}
	s.log.Info("product updated", "room", name, "by", actor, "product", id, "price", after.Price, "currency", after.Currency, "stock", after.Stock, "restocked", after.Stock > before.Stock)
	return after, nil
}

// removeProduct deletes product id of room name as actor. A product with
// orders stays (order.ErrProductHasOrders).
func (s *Server) removeProduct(ctx context.Context, actor, name string, id int64) error {
	if err := s.catalog.DeleteProduct(ctx, name, id); err != nil {
		return err
	}
	s.log.Info("product deleted", "room", name, "by", actor, "product", id)
	return nil
}
