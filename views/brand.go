package views

// Brand is a room's visual branding on its buyer-facing pages: every
// string is the operator's and is escaped by templ.
type Brand struct {
	// Logo is the logo's path (/media/…), or "".
	Logo string
	// LogoAlt names the logo: the room's title, or "" (decorative) when
	// the shop's name is printed beside it.
	LogoAlt     string
	Description string
	ShopName    string
	// ShopURL, when set, is where the shop's name and logo link.
	ShopURL string
	// Theme is the room's stylesheet of accent colours, or "".
	Theme string
}
