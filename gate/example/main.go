// Command example is a tiny shop whose checkout sits behind a waitingroom
// room, through package gate.
//
//	WR_ROOM_URL=https://queue.shop.example WR_ROOM=sale WR_API_KEY=… \
//	SHOP_ORIGIN=https://shop.example LISTEN_ADDR=127.0.0.1:8090 go run ./gate/example
//
// Set the room's target URL to SHOP_ORIGIN + "/checkout". Buyers let in by
// the room land on /checkout; "Place order" ends their session, which gives
// their slot back to the room.
//
// The gate reports the checkout's answer times to the room once a second:
// with the room's adaptive admission on, the room admits buyers as fast as
// the checkout answers them well. WR_NO_REPORT=1 turns the reports off.
package main

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"waitingroom/gate"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("shop stopped", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	addr := os.Getenv("LISTEN_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8090"
	}
	g, err := gate.New(gate.Options{
		RoomURL:  os.Getenv("WR_ROOM_URL"),
		Room:     os.Getenv("WR_ROOM"),
		APIKey:   os.Getenv("WR_API_KEY"),
		Audience: os.Getenv("SHOP_ORIGIN"),
		Logger:   log,
		NoReport: os.Getenv("WR_NO_REPORT") == "1",
	})
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle(gate.EnterPath, g.EnterHandler())
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, "Shop", "Our sale starts soon.", "/checkout", "Go to checkout")
	})
	mux.Handle("/checkout", g.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		_ = checkoutPage.Execute(w, nil)
	})))
	mux.Handle("POST /done", g.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The order would be placed here; then the slot goes back to the room.
		if err := g.End(w, r); err != nil {
			log.Warn("end session", "err", err)
		}
		render(w, "Thank you", "Your order is placed.", "/", "Back to the shop")
	})))

	srv := &http.Server{
		Addr: addr, Handler: mux,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 15 * time.Second, IdleTimeout: 60 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("shop listening", "addr", addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("example: listen: %w", err)
	}
	return nil
}

var checkoutPage = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en"><meta charset="utf-8"><title>Checkout</title>
<h1>Checkout</h1><p>It is your turn.</p>
<form method="post" action="/done"><button>Place order</button></form>
`))

var simplePage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><meta charset="utf-8"><title>{{.Title}}</title>
<h1>{{.Title}}</h1><p>{{.Body}}</p><p><a href="{{.Href}}">{{.Link}}</a></p>
`))

func render(w http.ResponseWriter, title, body, href, link string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = simplePage.Execute(w, struct{ Title, Body, Href, Link string }{title, body, href, link})
}
