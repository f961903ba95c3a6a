package order

import (
	"context"
	"errors"
	"time"

	"waitingroom/server/room"
)

// The admin side of a room's catalog. Every write goes straight to the
// database (never through a cache), and every write (a create, an update,
// a restock, a delete) then decides from the catalog whether the room is
// sold out (Stock.SoldOut) and sets or clears the room's sold-out flag in
// Redis, which the issuer, the streams and the pages follow.

// Stock is a room's catalog as the sold-out rule reads it.
type Stock struct {
	Products int64 // how many products the room has
	Units    int64 // their stock in all
}

// SoldOut reports whether a room with this catalog is sold out: it has
// products and none of them has stock left. A room with no product is not
// sold out: it sells nothing here, either because a gate's room sells in
// the shop behind it, or because its products are still to be added, and
// the flag would stop its line for a sale that never started. The
// database's restore of the flag (store.DB.Rooms) reads the same rule.
func (st Stock) SoldOut() bool { return st.Products > 0 && st.Units <= 0 }

// AdminProducts returns room's products as the database holds them now.
// It returns ErrUnavailable when the database does not answer.
func (s *Service) AdminProducts(ctx context.Context, roomName string) ([]Product, error) {
	ps, err := s.store.Products(ctx, roomName)
	if err != nil {
		s.log.Warn("order: admin products", "room", roomName, "err", err)
		return nil, ErrUnavailable
	}
	return ps, nil
}

// CreateProduct adds a product to room. It returns an InvalidProductError
// or ErrUnavailable.
func (s *Service) CreateProduct(ctx context.Context, roomName string, patch ProductPatch) (Product, error) {
	p, err := patch.newProduct()
	if err != nil {
		return Product{}, err
	}
	if p, err = s.store.createProduct(ctx, roomName, p); err != nil {
		s.log.Warn("order: create product", "room", roomName, "err", err)
		return Product{}, ErrUnavailable
	}
	s.ForgetProducts(roomName)
	s.settleSoldOut(ctx, roomName)
	return p, nil
}

// UpdateProduct changes some of a product's fields. Stock is set, not
// added. It returns ErrProductNotFound, an InvalidProductError or
// ErrUnavailable.
func (s *Service) UpdateProduct(ctx context.Context, roomName string, id int64, patch ProductPatch) (Product, error) {
	_, after, err := s.ChangeProduct(ctx, roomName, id, patch)
	return after, err
}

// ChangeProduct is UpdateProduct that also returns the product as it was
// just before the change (in the same transaction), for the audit log.
func (s *Service) ChangeProduct(ctx context.Context, roomName string, id int64, patch ProductPatch) (before, after Product, err error) {
	before, after, err = s.store.updateProduct(ctx, roomName, id, patch)
	var invalid *InvalidProductError
	switch {
	case err == nil:
	case errors.Is(err, ErrProductNotFound), errors.As(err, &invalid):
		return Product{}, Product{}, err
	default:
		s.log.Warn("order: update product", "room", roomName, "product", id, "err", err)
		return Product{}, Product{}, ErrUnavailable
	}
	s.ForgetProducts(roomName)
	s.settleSoldOut(ctx, roomName)
	return before, after, nil
}

// DeleteProduct removes a product that no order refers to. It returns
// ErrProductNotFound, ErrProductHasOrders or ErrUnavailable.
func (s *Service) DeleteProduct(ctx context.Context, roomName string, id int64) error {
	err := s.store.deleteProduct(ctx, roomName, id)
	if err == nil {
		s.ForgetProducts(roomName)
		s.settleSoldOut(ctx, roomName)
	}
	switch {
	case err == nil, errors.Is(err, ErrProductNotFound), errors.Is(err, ErrProductHasOrders):
		return err
	}
	s.log.Warn("order: delete product", "room", roomName, "product", id, "err", err)
	return ErrUnavailable
}

// SeedProduct puts p in room when the room has no product yet (the demo's
// product), and reports whether it did.
func (s *Service) SeedProduct(ctx context.Context, roomName string, p Product) (bool, error) {
	if err := p.Validate(); err != nil {
		return false, err
	}
	seeded, err := s.store.seedProduct(ctx, roomName, p)
	if seeded {
		s.ForgetProducts(roomName)
	}
	return seeded, err
}

// settleSoldOut decides from room's catalog whether it is sold out
// (Stock.SoldOut) and sets the room's flag so: the issuer stops or
// resumes admitting, and the waiting pages are told at the next tick. A
// room not (or no longer) in Redis has no flag. The write it follows is
// done whatever happens here; a failure is logged.
func (s *Service) settleSoldOut(ctx context.Context, roomName string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	st, err := s.store.stock(ctx, roomName)
	if err != nil {
		s.log.Warn("order: settle sold out", "room", roomName, "err", err)
		return
	}
	if err := s.gate.SetSoldOut(ctx, roomName, st.SoldOut()); err != nil && !errors.Is(err, room.ErrNotFound) {
		s.log.Warn("order: settle sold out", "room", roomName, "soldOut", st.SoldOut(), "err", err)
	}
}
