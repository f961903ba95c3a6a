package views

// LinkPreview is what a link to the room page shows in a messenger or a
// social network (Open Graph and the Twitter card). Its URLs are absolute;
// URL and Image are "" when the page has no trusted origin for them.
type LinkPreview struct {
	Title       string
	Description string
	// URL is the room page's canonical address, without a query string.
	URL string
	// Image is the preview picture; ImageWidth and ImageHeight are its
	// size when known (0 leaves them out).
	Image       string
	ImageWidth  int
	ImageHeight int
	ImageAlt    string
	SiteName    string
	// Locale is the Open Graph locale of the page's language (ko_KR, en_US).
	Locale string
}

// DefaultIcon is the site's favicon, for pages whose room has none.
const DefaultIcon = "/favicon.ico"

// OGLocale returns the Open Graph locale of lang.
func OGLocale(lang string) string {
	if lang == "ko" {
		return "ko_KR"
	}
	return "en_US"
}

// icon is the page's favicon: the room's, else the site's.
func (a Assets) icon() string {
	if a.Icon != "" {
		return a.Icon
	}
	return DefaultIcon
}
