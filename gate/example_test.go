package gate_test

import (
	"fmt"
	"net/http"

	"waitingroom/gate"
)

// A shop guards its checkout with the room "sale". Buyers the room lets in
// are posted to gate.EnterPath with a pass, get a session cookie and land
// on /checkout; buyers without a session are sent to the room. Placing the
// order ends the session, so the room can let the next buyer in.
func Example() {
	g, err := gate.New(gate.Options{
		RoomURL:  "https://queue.shop.example",
		Room:     "sale",
		APIKey:   "the room's API key",
		Audience: "https://shop.example",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	checkout := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "your turn: place your order")
	})
	order := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// … place the order, then give the slot back:
		if err := g.End(w, r); err != nil {
			http.Error(w, "could not end the session", http.StatusBadGateway)
			return
		}
		fmt.Fprintln(w, "thank you")
	})

	mux := http.NewServeMux()
	mux.Handle(gate.EnterPath, g.EnterHandler())
	mux.Handle("GET /checkout", g.Protect(checkout))
	mux.Handle("POST /order", g.Protect(order))
	// http.ListenAndServe(":8080", mux) serves the shop.
	fmt.Println("checkout guarded by room", "sale")
	// Output: checkout guarded by room sale
}
