package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"waitingroom/server/audit"
	"waitingroom/server/order"
	"waitingroom/server/room"
)

// oneRoom is a RoomReader that has room "r" alone.
type oneRoom struct{}

func (oneRoom) Room(_ context.Context, name string) (room.Settings, error) {
	if name != "r" {
		return room.Settings{}, room.ErrNotFound
	}
	return room.Defaults(name), nil
}

// catalogOf is a Catalog of one room's products in memory.
type catalogOf struct{ products []order.Product }

func (c *catalogOf) AdminProducts(context.Context, string) ([]order.Product, error) {
	return c.products, nil
}

func (c *catalogOf) CreateProduct(_ context.Context, _ string, p order.ProductPatch) (order.Product, error) {
	made := order.Product{ID: int64(len(c.products) + 1)}
	made = p.Apply(made)
	c.products = append(c.products, made)
	return made, nil
}

func (c *catalogOf) ChangeProduct(_ context.Context, _ string, id int64, p order.ProductPatch) (before, after order.Product, err error) {
	for i, q := range c.products {
		if q.ID == id {
			c.products[i] = p.Apply(q)
			return q, c.products[i], nil
		}
	}
	return order.Product{}, order.Product{}, order.ErrProductNotFound
}

func (c *catalogOf) DeleteProduct(_ context.Context, _ string, id int64) error {
	for i, q := range c.products {
		if q.ID == id {
			c.products = append(c.products[:i], c.products[i+1:]...)
			return nil
		}
	}
	return order.ErrProductNotFound
}

var errBadImage = &order.InvalidProductError{Field: "imageURL", Reason: "no such image"}

func TestProducts(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// do writes through ps to c, and returns the error of its last
		// write.
		do         func(ps *Products, c *catalogOf) error
		wantErr    error
		wantAudits []string
	}{
		{"add", func(ps *Products, c *catalogOf) error {
			_, err := ps.Add(ctx, "op", "r", order.ProductPatch{Name: ptr("Sneakers")})
			return err
		}, nil, []string{"product.create"}},
		{"add to no room", func(ps *Products, c *catalogOf) error {
			_, err := ps.Add(ctx, "op", "none", order.ProductPatch{Name: ptr("Sneakers")})
			return err
		}, room.ErrNotFound, nil},
		{"add a refused image", func(ps *Products, c *catalogOf) error {
			_, err := ps.Add(ctx, "op", "r", order.ProductPatch{ImageURL: ptr("/bad.png")})
			return err
		}, errBadImage, nil},
		{"change", func(ps *Products, c *catalogOf) error {
			ps.Add(ctx, "op", "r", order.ProductPatch{Name: ptr("a")})
			_, err := ps.Change(ctx, "op", "r", 1, order.ProductPatch{Name: ptr("b")})
			return err
		}, nil, []string{"product.create", "product.update"}},
		{"change nothing", func(ps *Products, c *catalogOf) error {
			ps.Add(ctx, "op", "r", order.ProductPatch{Name: ptr("a")})
			_, err := ps.Change(ctx, "op", "r", 1, order.ProductPatch{Name: ptr("a")})
			return err
		}, nil, []string{"product.create"}},
		{"keep a refused image it has", func(ps *Products, c *catalogOf) error {
			c.products = []order.Product{{ID: 1, ImageURL: "/bad.png"}}
			_, err := ps.Change(ctx, "op", "r", 1, order.ProductPatch{ImageURL: ptr("/bad.png"), Name: ptr("b")})
			return err
		}, nil, []string{"product.update"}},
		{"remove", func(ps *Products, c *catalogOf) error {
			ps.Add(ctx, "op", "r", order.ProductPatch{Name: ptr("a")})
			return ps.Remove(ctx, "op", "r", 1)
		}, nil, []string{"product.create", "product.delete"}},
		{"remove none", func(ps *Products, c *catalogOf) error {
			return ps.Remove(ctx, "op", "r", 9)
		}, order.ErrProductNotFound, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, c := &auditEntries{}, &catalogOf{}
			ps := NewProducts(ProductDeps{Rooms: oneRoom{}, Catalog: c, Audit: a,
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
				CheckImage: func(_ context.Context, u string) error {
					if u == "/bad.png" {
						return errBadImage
					}
					return nil
				}})
			if err := tc.do(ps, c); !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if got := a.actions(); !equal(got, tc.wantAudits) {
				t.Fatalf("audit %v, want %v", got, tc.wantAudits)
			}
		})
	}
}

func TestWithCurrency(t *testing.T) {
	krw := order.Product{Price: 1000, Currency: "KRW"}
	for _, tc := range []struct {
		name          string
		before, after order.Product
		want          []string
	}{
		{"price", krw, order.Product{Price: 2000, Currency: "KRW"}, []string{"price", "currency"}},
		{"price and currency", krw, order.Product{Price: 2000, Currency: "USD"}, []string{"currency", "price"}},
		{"name", krw, order.Product{Name: "x", Price: 1000, Currency: "KRW"}, []string{"name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := withCurrency(audit.Changes(tc.before, tc.after), tc.before, tc.after)
			var got []string
			for _, c := range cs {
				got = append(got, c.Field)
			}
			if !equal(got, tc.want) {
				t.Fatalf("fields %v, want %v", got, tc.want)
			}
		})
	}
}
