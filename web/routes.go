package web

import (
	"net/http"
	"time"

	"waitingroom/web/console"
	"waitingroom/web/gatemode"
)

type route struct {
	pattern string
	handler http.Handler
}

// routes is the one list of everything the server answers.
func (s *Server) routes() []route {
	c := s.console
	return []route{
		{"POST /api/rooms/{room}/queue", s.apiEnter(s.enter)},
		{"GET /api/rooms/{room}/challenge", s.api(s.issueChallenge)},
		{"GET /api/rooms/{room}/queue/position", s.api(s.position)},
		{"POST /api/rooms/{room}/orders", s.api(s.placeOrderJSON)},
		{"GET /api/rooms/{room}/products", s.api(s.products)},
		{"DELETE /api/rooms/{room}/queue", s.api(s.leave)},
		{"GET /api/rooms/{room}/draw", s.api(s.drawInfo)},
		{"PUT /api/admin/rooms/{room}", s.apiMax(roomBodyMax, s.adminOnly(s.putRoom))},
		{"GET /api/admin/rooms/{room}", s.api(s.adminOnly(s.getRoom))},
		{"DELETE /api/admin/rooms/{room}", s.api(s.adminOnly(s.deleteRoom))},
		{"GET /api/admin/rooms/{room}/products", s.api(s.adminOnly(s.adminProducts))},
		{"POST /api/admin/rooms/{room}/products", s.api(s.adminOnly(s.createProduct))},
		{"PUT /api/admin/rooms/{room}/products/{id}", s.api(s.adminOnly(s.updateProduct))},
		{"DELETE /api/admin/rooms/{room}/products/{id}", s.api(s.adminOnly(s.deleteProduct))},
		{"POST /api/admin/media", s.adminOnly(s.uploadImage)},
		{"POST /api/admin/rooms/{room}/codes", s.apiCSV(console.CodesUploadMax, s.adminOnly(s.postCodes))},
		{"GET /api/admin/rooms/{room}/codes", s.api(s.adminOnly(s.getCodes))},
		{"GET /api/admin/rooms/{room}/codes.csv", s.api(s.adminOnly(s.exportCodes))},
		{"POST /api/admin/rooms/{room}/codes/revoke", s.apiMax(revokeBodyMax, s.adminOnly(s.revokeCode))},
		{"POST /api/admin/rooms/{room}/bypass", s.api(s.adminOnly(s.postBypassLink))},
		{"GET /api/admin/rooms/{room}/bypass", s.api(s.adminOnly(s.getBypassLinks))},
		{"DELETE /api/admin/rooms/{room}/bypass/{id}", s.api(s.adminOnly(s.revokeBypassLink))},
		{"GET /admin/rooms", http.HandlerFunc(c.RoomList)},
		{"GET /admin/rooms/new", http.HandlerFunc(c.NewRoom)},
		{"POST /admin/rooms/new", http.HandlerFunc(c.CreateRoom)},
		{"GET /admin/rooms/{room}/settings", http.HandlerFunc(c.RoomSettings)},
		{"POST /admin/rooms/{room}/settings", http.HandlerFunc(c.SaveRoom)},
		{"POST /admin/rooms/{room}/action", http.HandlerFunc(c.RoomAction)},
		{"POST /admin/rooms/{room}/delete", http.HandlerFunc(c.DeleteRoom)},
		{"GET /admin/rooms/{room}/products", http.HandlerFunc(c.Products)},
		{"POST /admin/rooms/{room}/products", http.HandlerFunc(c.AddProduct)},
		{"GET /admin/rooms/{room}/products/{id}", http.HandlerFunc(c.Product)},
		{"POST /admin/rooms/{room}/products/{id}", http.HandlerFunc(c.ChangeProduct)},
		{"GET /admin/rooms/{room}", http.HandlerFunc(c.Dashboard)},
		{"GET /admin/rooms/{room}/live", http.HandlerFunc(c.Live)},
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
		{"GET /r/{room}/identity", http.HandlerFunc(s.identityLink)},
		{"GET /r/{room}/bypass", http.HandlerFunc(s.bypassPage)},
		{"POST /r/{room}/bypass", http.HandlerFunc(s.useBypass)},
		{"POST /r/{room}/order", http.HandlerFunc(s.placeOrderForm)},
		{"GET /r/{room}/orders/{id}", http.HandlerFunc(s.confirmation)},
		{"GET /admin", http.HandlerFunc(c.Home)},
		{"GET /admin/{$}", http.HandlerFunc(c.Home)},
		{"GET /admin/signin", http.HandlerFunc(c.SigninPage)},
		{"POST /admin/signin", http.HandlerFunc(c.Signin)},
		{"POST /admin/signout", http.HandlerFunc(c.Signout)},
		{"GET /admin/orders", http.HandlerFunc(c.OrdersPage)},
		{"GET /admin/orders.csv", http.HandlerFunc(c.OrdersCSV)},
		{"POST /admin/orders/{id}/cancel", http.HandlerFunc(c.CancelOrder)},
		{"GET /admin/attribution", http.HandlerFunc(c.Attribution)},
		{"GET /admin/audit", http.HandlerFunc(c.AuditPage)},
		// brand
		{"GET /media/{file}", http.HandlerFunc(s.serveMedia)},
		{"GET /r/{room}/theme/{file}", http.HandlerFunc(s.serveTheme)},
		{"GET /admin/rooms/{room}/branding", http.HandlerFunc(c.Branding)},
		{"POST /admin/rooms/{room}/branding", http.HandlerFunc(c.SaveBranding)},

		// access codes
		{"GET /admin/rooms/{room}/codes", http.HandlerFunc(c.Codes)},
		{"POST /admin/rooms/{room}/codes", http.HandlerFunc(c.ChangeCodes)},
		{"GET /admin/rooms/{room}/codes.csv", http.HandlerFunc(c.CodesCSV)},
		{"GET /admin/rooms/{room}/links", http.HandlerFunc(c.Links)},
		{"POST /admin/rooms/{room}/links", http.HandlerFunc(c.ChangeLinks)},

		// share
		{"GET /s/{code}", http.HandlerFunc(s.followShare)},
		{"GET /admin/rooms/{room}/share", http.HandlerFunc(c.Share)},
		{"POST /admin/rooms/{room}/share", http.HandlerFunc(c.ChangeShare)},
		{"GET /admin/rooms/{room}/share/{code}/qr.png", http.HandlerFunc(c.ShareQRPNG)},
		{"GET /admin/rooms/{room}/share/{code}/qr.svg", http.HandlerFunc(c.ShareQRSVG)},
		{"GET /admin/rooms/{room}/share/{code}/delete", http.HandlerFunc(c.ShareDelete)},
		// widget
		{"GET /r/{room}/widget", http.HandlerFunc(s.widgetPage)},
		{"GET /r/{room}/widget/status", http.HandlerFunc(s.widgetStatus)},
		{"GET /r/{room}/widget/events", http.HandlerFunc(s.widgetEvents)},
		{"GET /static/embed.js", s.assets.servePlain("embed.js", 5*time.Minute)},
		{"GET /embed.js", s.assets.servePlain("embed.js", 5*time.Minute)},
		{"GET /admin/rooms/{room}/embed", http.HandlerFunc(c.Embed)},
		{"/admin/", http.HandlerFunc(c.NotFound)}, // any other console path, any method
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
		{"POST /admin/rooms/{room}/apikey", http.HandlerFunc(c.APIKey)},
	}
}
