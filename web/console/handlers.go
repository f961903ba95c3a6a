package console

import "net/http"

// The console's routes' handlers, which web's route list names. Each
// signed-in page goes through Page, each form through Change.

// Signout serves POST /admin/signout.
func (s *Console) Signout(w http.ResponseWriter, r *http.Request) { s.Change(s.signout)(w, r) }

// RoomList serves GET /admin/rooms.
func (s *Console) RoomList(w http.ResponseWriter, r *http.Request) {
	s.PageFor(readsBudget, s.consoleRoomList)(w, r)
}

// NewRoom serves GET /admin/rooms/new.
func (s *Console) NewRoom(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleNewRoom)(w, r) }

// CreateRoom serves POST /admin/rooms/new.
func (s *Console) CreateRoom(w http.ResponseWriter, r *http.Request) {
	s.ChangeUpTo(RoomFormMax, s.consoleCreateRoom, nil)(w, r)
}

// RoomSettings serves GET /admin/rooms/{room}/settings.
func (s *Console) RoomSettings(w http.ResponseWriter, r *http.Request) {
	s.Page(s.consoleRoomSettings)(w, r)
}

// SaveRoom serves POST /admin/rooms/{room}/settings.
func (s *Console) SaveRoom(w http.ResponseWriter, r *http.Request) {
	s.ChangeUpTo(RoomFormMax, s.consoleSaveRoom, nil)(w, r)
}

// RoomAction serves POST /admin/rooms/{room}/action.
func (s *Console) RoomAction(w http.ResponseWriter, r *http.Request) {
	s.Change(s.consoleRoomAction)(w, r)
}

// DeleteRoom serves POST /admin/rooms/{room}/delete.
func (s *Console) DeleteRoom(w http.ResponseWriter, r *http.Request) {
	s.Change(s.consoleDeleteRoom)(w, r)
}

// Products serves GET /admin/rooms/{room}/products.
func (s *Console) Products(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleProducts)(w, r) }

// AddProduct serves POST /admin/rooms/{room}/products.
func (s *Console) AddProduct(w http.ResponseWriter, r *http.Request) {
	s.ChangeUpTo(ProductBodyMax(), s.consoleAddProduct, s.productTooLarge)(w, r)
}

// Product serves GET /admin/rooms/{room}/products/{id}.
func (s *Console) Product(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleProduct)(w, r) }

// ChangeProduct serves POST /admin/rooms/{room}/products/{id}.
func (s *Console) ChangeProduct(w http.ResponseWriter, r *http.Request) {
	s.ChangeUpTo(ProductBodyMax(), s.consoleChangeProduct, s.productTooLarge)(w, r)
}

// Dashboard serves GET /admin/rooms/{room}.
func (s *Console) Dashboard(w http.ResponseWriter, r *http.Request) {
	s.PageFor(readsBudget, s.roomDashboard)(w, r)
}

// Live serves GET /admin/rooms/{room}/live.
func (s *Console) Live(w http.ResponseWriter, r *http.Request) {
	s.PageFor(dashStreamLife, s.roomLive)(w, r)
}

// Branding serves GET /admin/rooms/{room}/branding.
func (s *Console) Branding(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleBranding)(w, r) }

// SaveBranding serves POST /admin/rooms/{room}/branding.
func (s *Console) SaveBranding(w http.ResponseWriter, r *http.Request) {
	s.ChangeUpTo(BrandingBodyMax(), s.consoleSaveBranding, s.brandingTooLarge)(w, r)
}

// Codes serves GET /admin/rooms/{room}/codes.
func (s *Console) Codes(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleCodes)(w, r) }

// ChangeCodes serves POST /admin/rooms/{room}/codes.
func (s *Console) ChangeCodes(w http.ResponseWriter, r *http.Request) {
	s.ChangeUpTo(CodesUploadMax+64<<10, s.consoleChangeCodes, nil)(w, r)
}

// CodesCSV serves GET /admin/rooms/{room}/codes.csv.
func (s *Console) CodesCSV(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleCodesCSV)(w, r) }

// Links serves GET /admin/rooms/{room}/links.
func (s *Console) Links(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleLinks)(w, r) }

// ChangeLinks serves POST /admin/rooms/{room}/links.
func (s *Console) ChangeLinks(w http.ResponseWriter, r *http.Request) {
	s.ChangeUpTo(FormBodyMax, s.consoleChangeLinks, nil)(w, r)
}

// Share serves GET /admin/rooms/{room}/share.
func (s *Console) Share(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleShare)(w, r) }

// ChangeShare serves POST /admin/rooms/{room}/share.
func (s *Console) ChangeShare(w http.ResponseWriter, r *http.Request) {
	s.Change(s.consoleChangeShare)(w, r)
}

// ShareQRPNG serves GET /admin/rooms/{room}/share/{code}/qr.png.
func (s *Console) ShareQRPNG(w http.ResponseWriter, r *http.Request) {
	s.Page(s.consoleShareQR(false))(w, r)
}

// ShareQRSVG serves GET /admin/rooms/{room}/share/{code}/qr.svg.
func (s *Console) ShareQRSVG(w http.ResponseWriter, r *http.Request) {
	s.Page(s.consoleShareQR(true))(w, r)
}

// ShareDelete serves GET /admin/rooms/{room}/share/{code}/delete.
func (s *Console) ShareDelete(w http.ResponseWriter, r *http.Request) {
	s.Page(s.consoleShareDelete)(w, r)
}

// Embed serves GET /admin/rooms/{room}/embed.
func (s *Console) Embed(w http.ResponseWriter, r *http.Request) { s.Page(s.consoleEmbed)(w, r) }

// APIKey serves POST /admin/rooms/{room}/apikey.
func (s *Console) APIKey(w http.ResponseWriter, r *http.Request) { s.Change(s.consoleNewAPIKey)(w, r) }

// OrdersPage serves GET /admin/orders.
func (s *Console) OrdersPage(w http.ResponseWriter, r *http.Request) { s.Page(s.ordersPage)(w, r) }

// OrdersCSV serves GET /admin/orders.csv.
func (s *Console) OrdersCSV(w http.ResponseWriter, r *http.Request) {
	s.PageFor(exportTimeout, s.ordersCSV)(w, r)
}

// CancelOrder serves POST /admin/orders/{id}/cancel.
func (s *Console) CancelOrder(w http.ResponseWriter, r *http.Request) { s.Change(s.cancelOrder)(w, r) }

// Attribution serves GET /admin/attribution.
func (s *Console) Attribution(w http.ResponseWriter, r *http.Request) {
	s.Page(s.attributionPage)(w, r)
}

// AuditPage serves GET /admin/audit.
func (s *Console) AuditPage(w http.ResponseWriter, r *http.Request) { s.Page(s.auditPage)(w, r) }
