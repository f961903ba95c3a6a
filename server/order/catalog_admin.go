package order

import (
	"context"
	"errors"
	"time"

	"waitingroom/server/room"
)

// The admin side of a room's catalog. Every write goes straight to the
// database (never through a cache); a stock change also moves the room's
// sold-out flag in Redis: raising a product's stock reopens a sold-out
// room, and taking the last of it marks the room sold out.

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
	if p.Stock > 0 {
		s.reopen(ctx, roomName)
	}
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
	switch {
	case after.Stock > before.Stock:
		s.reopen(ctx, roomName)
	case after.Stock < before.Stock:
		s.checkSoldOut(ctx, roomName)
	}
	return before, after, nil
}

// DeleteProduct removes a product that no order refers to. It returns
// ErrProductNotFound, ErrProductHasOrders or ErrUnavailable.
func (s *Service) DeleteProduct(ctx context.Context, roomName string, id int64) error {
	err := s.store.deleteProduct(ctx, roomName, id)
	if err == nil {
		s.ForgetProducts(roomName)
		s.checkSoldOut(ctx, roomName) // it may have been the last in stock
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

// reopen clears the room's sold-out flag after its stock went up, so that
// the issuer admits again. A room not (or no longer) in Redis has no flag.
func (s *Service) reopen(ctx context.Context, roomName string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.gate.SetSoldOut(ctx, roomName, false); err != nil && !errors.Is(err, room.ErrNotFound) {
		s.log.Warn("order: reopen after restock", "room", roomName, "err", err)
	}
}
