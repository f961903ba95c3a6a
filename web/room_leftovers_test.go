package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"waitingroom/server/order"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestRecreatedRoomWarnsOfItsProducts: deleting a room keeps its
// products, so a room created again under its name sells them again. The
// console's new room's settings page and the JSON API's create say so,
// naming them; a room created under a fresh name says nothing.
func TestRecreatedRoomWarnsOfItsProducts(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	adminAuth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	// old makes a room with a product, then deletes the room.
	old := func(name, product string, stock int64) {
		t.Helper()
		if r := rc.do(t, "PUT", "/api/admin/rooms/"+name, `{"title":"Old"}`, adminAuth, nil); r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		if _, err := rc.web.catalog.CreateProduct(ctx, name, order.ProductPatch{Name: ptrTo(product), Price: ptrTo(int64(1000)), Stock: ptrTo(stock)}); err != nil {
			t.Fatal(err)
		}
		if r := rc.do(t, "DELETE", "/api/admin/rooms/"+name, "", adminAuth, nil); r.status != 200 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
	}
	tests := []struct {
		name, how string // how: "console" or "api"
		product   string // "" for a fresh name
	}{
		{"console, recreated", "console", "Old <Sneakers>"},
		{"console, fresh name", "console", ""},
		{"API, recreated", "api", "Old Cap"},
		{"API, fresh name", "api", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := servicetest.RoomName(t, rc.rdb)
			if tc.product != "" {
				old(name, tc.product, 7)
			}
			if tc.how == "api" {
				r := rc.do(t, "PUT", "/api/admin/rooms/"+name, `{"title":"New"}`, adminAuth, nil)
				var v struct {
					Warnings []string `json:"warnings"`
				}
				if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != 201 {
					t.Fatalf("create: %d %s", r.status, r.body)
				}
				if tc.product == "" {
					if len(v.Warnings) != 0 || strings.Contains(r.body, "warnings") {
						t.Fatalf("warnings for a fresh name: %s", r.body)
					}
					return
				}
				if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], `"`+tc.product+`"`) || !strings.Contains(v.Warnings[0], "stock 7") {
					t.Fatalf("warnings %q, want the product and its stock", v.Warnings)
				}
				// Saving the room again warns no more.
				if r := rc.do(t, "PUT", "/api/admin/rooms/"+name, `{"title":"New 2"}`, adminAuth, nil); r.status != 200 || strings.Contains(r.body, "warnings") {
					t.Fatalf("update: %d %s", r.status, r.body)
				}
				return
			}
			resp, body := rc.post(t, "/admin/rooms/new", roomFormOf(name, room.Defaults(name)), nil)
			if resp.StatusCode != 303 {
				t.Fatalf("create: %d %.300s", resp.StatusCode, body)
			}
			status, page := rc.get(t, resp.Header.Get("Location"), "en")
			if status != 200 || !strings.Contains(page, "Room created.") {
				t.Fatalf("settings: %d %s", status, page)
			}
			warned := strings.Contains(page, "a deleted room of the same name")
			if tc.product == "" {
				if warned {
					t.Fatalf("warning for a fresh name: %s", page)
				}
				return
			}
			esc := strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(tc.product)
			for _, s := range []string{"1 product(s) of a deleted room", esc + " (stock 7)", `href="/admin/rooms/` + name + `/products">Go to the products`} {
				if !warned || !strings.Contains(page, s) {
					t.Fatalf("settings page lacks %q: %s", s, page)
				}
			}
			if _, ko := rc.get(t, resp.Header.Get("Location"), "ko"); !strings.Contains(ko, "같은 이름으로 지웠던 대기실의 상품 1개") {
				t.Fatalf("Korean page lacks the warning: %s", ko)
			}
		})
	}
}
