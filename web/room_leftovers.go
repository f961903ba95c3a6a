package web

import (
	"context"
	"fmt"
	"strings"

	"waitingroom/server/order"
)

// maxLeftoversShown bounds the leftover products a warning names.
const maxLeftoversShown = 50

// leftoverProducts returns the products already in the database under
// room name: for a room just created, those of a deleted room of the same
// name (deleting a room keeps its products and orders), which go back on
// sale with the new room. It returns none without a catalog.
func (s *Server) leftoverProducts(ctx context.Context, name string) ([]order.Product, error) {
	if s.catalog == nil {
		return nil, nil
	}
	return s.catalog.AdminProducts(ctx, name)
}

// leftoverWarnings are the JSON API's warnings when creating room name
// found products under it already.
func (s *Server) leftoverWarnings(ctx context.Context, name string) []string {
	ps, err := s.leftoverProducts(ctx, name)
	if err != nil {
		s.log.Warn("room created: listing its products failed", "room", name, "err", err)
		return []string{"Could not check whether products already exist under this room name; see GET /api/admin/rooms/" + name + "/products."}
	}
	if len(ps) == 0 {
		return nil
	}
	var names []string
	for _, p := range ps[:min(len(ps), maxLeftoversShown)] {
		names = append(names, fmt.Sprintf("%q (id %d, stock %d)", p.Name, p.ID, p.Stock))
	}
	more := ""
	if len(ps) > maxLeftoversShown {
		more = fmt.Sprintf(" and %d more", len(ps)-maxLeftoversShown)
	}
	return []string{fmt.Sprintf("%d product(s) of a deleted room of the same name are attached to this room and go back on sale when it opens: %s%s. "+
		"Set their stock to 0 or delete them (GET /api/admin/rooms/%s/products).", len(ps), strings.Join(names, ", "), more, name)}
}
