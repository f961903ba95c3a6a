package web

import (
	"net/http"
	"strconv"

	"waitingroom/server/order"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// The admin API of a room's products. A room's products may be written
// before the room itself exists, so that a sale is ready when it opens.

const productShape = `a JSON object such as {"name":"Sneakers","price":129000,"currency":"KRW","stock":100,"imageURL":"https://…"}`

// adminProducts serves GET /api/admin/rooms/{room}/products.
func (s *Server) adminProducts(w http.ResponseWriter, r *http.Request) {
	if !s.hasCatalog(w) {
		return
	}
	ps, err := s.catalog.AdminProducts(r.Context(), r.PathValue("room"))
	if err != nil {
		s.catalogFail(w, r, err)
		return
	}
	if ps == nil {
		ps = []order.Product{}
	}
	response.WriteJSON(w, http.StatusOK, ps)
}

// createProduct serves POST /api/admin/rooms/{room}/products.
func (s *Server) createProduct(w http.ResponseWriter, r *http.Request) {
	var p order.ProductPatch
	if !s.hasCatalog(w) || !request.DecodeStrict(w, r, &p, productShape) {
		return
	}
	name := r.PathValue("room")
	created, err := s.productWrites.Add(r.Context(), apiActor, name, p)
	if err != nil {
		s.catalogFail(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/admin/rooms/"+name+"/products/"+strconv.FormatInt(created.ID, 10))
	response.WriteJSON(w, http.StatusCreated, created)
}

// updateProduct serves PUT /api/admin/rooms/{room}/products/{id}: fields
// left out keep their value; stock is set, not added.
func (s *Server) updateProduct(w http.ResponseWriter, r *http.Request) {
	id, ok := productID(w, r)
	var p order.ProductPatch
	if !ok || !s.hasCatalog(w) || !request.DecodeStrict(w, r, &p, productShape) {
		return
	}
	name := r.PathValue("room")
	updated, err := s.productWrites.Change(r.Context(), apiActor, name, id, p)
	if err != nil {
		s.catalogFail(w, r, err)
		return
	}
	response.WriteJSON(w, http.StatusOK, updated)
}

// deleteProduct serves DELETE /api/admin/rooms/{room}/products/{id}. A
// product with orders stays (409): set its stock to 0 instead.
func (s *Server) deleteProduct(w http.ResponseWriter, r *http.Request) {
	id, ok := productID(w, r)
	if !ok || !s.hasCatalog(w) || !drainBody(w, r) {
		return
	}
	name := r.PathValue("room")
	if err := s.productWrites.Remove(r.Context(), apiActor, name, id); err != nil {
		s.catalogFail(w, r, err)
		return
	}
	response.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
}

func (s *Server) hasCatalog(w http.ResponseWriter) bool {
	if s.catalog == nil {
		response.WriteError(w, http.StatusServiceUnavailable, "unavailable", "The product admin is not configured on this server.")
		return false
	}
	return true
}

// productID reads the {id} path segment: a positive integer.
func productID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		response.WriteError(w, http.StatusNotFound, "product_not_found", "Product ids are positive integers.")
		return 0, false
	}
	return id, true
}

func (s *Server) catalogFail(w http.ResponseWriter, r *http.Request, err error) {
	s.respond().JSON(w, r, response.ScopeCatalog, err)
}
