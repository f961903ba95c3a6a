package web

import (
	"net/http"
	"time"

	"waitingroom/web/gatemode"
)

type route struct {
	pattern string
	handler http.Handler
}

// routes is the one list of everything the server answers.
func (s *Server) routes() []route {
	return []route{
		{"POST /api/rooms/{room}/queue", s.apiEnter(s.enter)},
		{"GET /api/rooms/{room}/challenge", s.api(s.issueChallenge)},
		{"GET /api/rooms/{room}/queue/position", s.api(s.position)},
		{"POST /api/rooms/{room}/orders", s.api(s.placeOrderJSON)},
		{"GET /api/rooms/{room}/products", s.api(s.products)},
		{"DELETE /api/rooms/{room}/queue", s.api(s.leave)},
		{"GET /api/rooms/{room}/draw", s.api(s.drawInfo)},
		{"PUT /api/admin/rooms/{room}", s.api(s.adminOnly(s.putRoom))},
		{"GET /api/admin/rooms/{room}", s.api(s.adminOnly(s.getRoom))},
		{"DELETE /api/admin/rooms/{room}", s.api(s.adminOnly(s.deleteRoom))},
		{"GET /api/admin/rooms/{room}/products", s.api(s.adminOnly(s.adminProducts))},
		{"POST /api/admin/rooms/{room}/products", s.api(s.adminOnly(s.createProduct))},
		{"PUT /api/admin/rooms/{room}/products/{id}", s.api(s.adminOnly(s.updateProduct))},
		{"DELETE /api/admin/rooms/{room}/products/{id}", s.api(s.adminOnly(s.deleteProduct))},
		{"POST /api/admin/media", s.adminOnly(s.uploadImage)},
		{"GET /admin/rooms", s.console(s.consoleRoomList)},
		{"GET /admin/rooms/new", s.console(s.consoleNewRoom)},
		{"POST /admin/rooms/new", s.consoleChange(s.consoleCreateRoom)},
		{"GET /admin/rooms/{room}/settings", s.console(s.consoleRoomSettings)},
		{"POST /admin/rooms/{room}/settings", s.consoleChange(s.consoleSaveRoom)},
		{"POST /admin/rooms/{room}/action", s.consoleChange(s.consoleRoomAction)},
		{"POST /admin/rooms/{room}/delete", s.consoleChange(s.consoleDeleteRoom)},
		{"GET /admin/rooms/{room}/products", s.console(s.consoleProducts)},
		{"POST /admin/rooms/{room}/products", s.consoleChangeOr(productBodyMax, s.consoleAddProduct, s.productTooLarge)},
		{"GET /admin/rooms/{room}/products/{id}", s.console(s.consoleProduct)},
		{"POST /admin/rooms/{room}/products/{id}", s.consoleChangeOr(productBodyMax, s.consoleChangeProduct, s.productTooLarge)},
		{"GET /admin/rooms/{room}", s.console(s.roomDashboard)},
		{"GET /admin/rooms/{room}/live", s.console(s.roomLive)},
		{"GET /healthz", http.HandlerFunc(s.healthz)},
		{"GET /readyz", http.HandlerFunc(s.readyz)},
		{"GET /robots.txt", s.assets.servePlain("robots.txt", time.Hour)},
		{"GET /static/", http.HandlerFunc(s.assets.serveHashed)},
		{"GET /r/{room}", http.HandlerFunc(s.roomPage)},
		{"POST /r/{room}/join", http.HandlerFunc(s.join)},
		{"POST /r/{room}", http.HandlerFunc(s.join)}, // the room page's join form, with its query string
		{"GET /r/{room}/status", http.HandlerFunc(s.status)},
		{"GET /r/{room}/wait", http.HandlerFunc(s.waitStatus)},
		{"GET /r/{room}/events", http.HandlerFunc(s.events)},
		{"POST /r/{room}/order", http.HandlerFunc(s.placeOrderForm)},
		{"GET /r/{room}/orders/{id}", http.HandlerFunc(s.confirmation)},
		{"GET /admin", http.HandlerFunc(s.consoleHome)},
		{"GET /admin/{$}", http.HandlerFunc(s.consoleHome)},
		{"GET /admin/signin", http.HandlerFunc(s.signinPage)},
		{"POST /admin/signin", http.HandlerFunc(s.signin)},
		{"POST /admin/signout", s.consoleChange(s.signout)},
		{"GET /admin/orders", s.console(s.ordersPage)},
		{"GET /admin/orders.csv", s.console(s.ordersCSV)},
		{"POST /admin/orders/{id}/cancel", s.consoleChange(s.cancelOrder)},
		{"GET /admin/attribution", s.console(s.attributionPage)},
		{"GET /admin/audit", s.console(s.auditPage)},
		// brand
		{"GET /media/{file}", http.HandlerFunc(s.serveMedia)},
		{"GET /r/{room}/theme/{file}", http.HandlerFunc(s.serveTheme)},
		{"GET /admin/rooms/{room}/branding", s.console(s.consoleBranding)},
		{"POST /admin/rooms/{room}/branding", s.consoleChangeOr(brandingBodyMax, s.consoleSaveBranding, s.brandingTooLarge)},

		// share
		{"GET /s/{code}", http.HandlerFunc(s.followShare)},
		{"GET /admin/rooms/{room}/share", s.console(s.consoleShare)},
		{"POST /admin/rooms/{room}/share", s.consoleChange(s.consoleChangeShare)},
		{"GET /admin/rooms/{room}/share/{code}/qr.png", s.console(s.consoleShareQR(false))},
		{"GET /admin/rooms/{room}/share/{code}/qr.svg", s.console(s.consoleShareQR(true))},
		{"GET /admin/rooms/{room}/share/{code}/delete", s.console(s.consoleShareDelete)},
		// widget
		{"GET /r/{room}/widget", http.HandlerFunc(s.widgetPage)},
		{"GET /r/{room}/widget/status", http.HandlerFunc(s.widgetStatus)},
		{"GET /r/{room}/widget/events", http.HandlerFunc(s.widgetEvents)},
		{"GET /static/embed.js", s.assets.servePlain("embed.js", 5*time.Minute)},
		{"GET /embed.js", s.assets.servePlain("embed.js", 5*time.Minute)},
		{"GET /admin/rooms/{room}/embed", s.console(s.consoleEmbed)},
		{"/admin/", http.HandlerFunc(s.consoleNotFound)}, // any other console path, any method
		// preview
		{"GET /{$}", http.HandlerFunc(s.frontPage)},
		{"GET /favicon.ico", s.assets.servePlain("favicon.ico", 7*24*time.Hour)},
		{"GET /r/{room}/og/{file}", http.HandlerFunc(s.ogImage)},
		// gate
		{"GET /.well-known/jwks.json", http.HandlerFunc(s.gate.JWKS)},
		{"GET /api/rooms/{room}/gate", s.api(s.gate.Info)},
		{"POST /api/rooms/{room}/passes/redeem", s.apiMax(gatemode.BodyMax, s.gate.RoomKeyOnly(s.gate.Redeem))},
		{"POST /api/rooms/{room}/sessions/{id}/renew", s.apiMax(gatemode.BodyMax, s.gate.RoomKeyOnly(s.gate.RenewSession))},
		{"POST /api/rooms/{room}/sessions/{id}/end", s.apiMax(gatemode.BodyMax, s.gate.RoomKeyOnly(s.gate.EndSession))},
		{"POST /api/rooms/{room}/gate/report", s.apiMax(gatemode.BodyMax, s.gate.RoomKeyOnly(s.gate.Report))},
		{"POST /api/admin/rooms/{room}/apikey", s.api(s.adminOnly(s.postAPIKey))},
		{"POST /r/{room}/pass", http.HandlerFunc(s.handoff)},
		{"POST /_waitingroom/enter", http.HandlerFunc(s.gate.Enter)},
		{"GET /gate/check", http.HandlerFunc(s.gate.Check)},
		{"POST /admin/rooms/{room}/apikey", s.consoleChange(s.consoleNewAPIKey)},
	}
}
