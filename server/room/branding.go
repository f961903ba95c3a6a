package room

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"waitingroom/server/plaintext"
)

// Branding is how a room looks, previews and embeds: set by marketing in
// the console, stored with the room's other settings.
type Branding struct {
	// Logo, OGImage and Favicon are uploaded images (MediaPath), or "".
	Logo    string `json:"logo"`
	OGImage string `json:"ogImage"`
	Favicon string `json:"favicon"`
	// AccentColor is the buttons' and links' colour in the light scheme,
	// "#rrggbb"; AccentColorDark the same in the dark scheme. "" keeps the
	// built-in colour of that scheme. Each is refused when text on it or
	// in it falls under WCAG AA contrast (see CheckAccent).
	AccentColor     string `json:"accentColor"`
	AccentColorDark string `json:"accentColorDark"`
	// Description is shown under the title and in link previews.
	Description string `json:"description"`
	// DefaultLanguage ("ko" or "en"; "" is "en") is the language of a
	// request that names none, as crawlers' requests do.
	DefaultLanguage string `json:"defaultLanguage"`
	// ShopName names the shop on the page and in previews (og:site_name).
	ShopName string `json:"shopName"`
	// EmbedOrigins are the origins ("https://shop.example") whose pages
	// may frame the room's widget; none may frame the room page itself.
	EmbedOrigins []string `json:"embedOrigins"`
	// EmbedTarget is where the widget's button opens the room: "_blank"
	// (a new tab, the default when "") or "_top" (the same tab).
	EmbedTarget string `json:"embedTarget"`
	// Listed shows the room on the page at GET /.
	Listed bool `json:"listed"`
}

// Limits on branding.
const (
	MaxDescriptionLen = 500
	MaxShopNameLen    = 100
	MaxEmbedOrigins   = 20
	MaxOriginLen      = 255
)

// The embed targets.
const (
	EmbedNewTab  = "_blank"
	EmbedSameTab = "_top"
)

// The languages a room can default to.
const (
	LangKorean  = "ko"
	LangEnglish = "en"
)

// mediaPath is the form of an uploaded image's URL path: the SHA-256 of
// its bytes, in hex, then its type's extension. The path names the bytes,
// so it can be cached forever.
var mediaPath = regexp.MustCompile(`^/media/[0-9a-f]{64}\.(png|jpg|gif|webp|ico)$`)

// ValidMediaPath reports whether p is the path of an uploaded image.
func ValidMediaPath(p string) bool { return mediaPath.MatchString(p) }

// MediaPath returns the URL path of an image whose SHA-256 is sumHex and
// whose extension (without the dot) is ext.
func MediaPath(sumHex, ext string) string { return "/media/" + sumHex + "." + ext }

// Validate returns an error that names the first invalid field.
func (b Branding) Validate() error {
	for _, f := range b.checks() {
		if err := f.check(); err != nil {
			return fieldError(f.field, "%s: %w", f.field, err)
		}
	}
	return nil
}

// FieldErrors returns the error of every invalid field, by the field's
// JSON name, so that a form can say them all at once; nil when none.
func (b Branding) FieldErrors() map[string]error {
	var out map[string]error
	for _, f := range b.checks() {
		if err := f.check(); err != nil {
			if out == nil {
				out = map[string]error{}
			}
			out[f.field] = err
		}
	}
	return out
}

// fieldCheck is the check of one branding field.
type fieldCheck struct {
	field string
	check func() error
}

// checks are the branding's field checks, in the form's order.
func (b Branding) checks() []fieldCheck {
	image := func(v string) func() error {
		return func() error {
			if v != "" && !ValidMediaPath(v) {
				return errors.New("must be empty or the path of an uploaded image (/media/…)")
			}
			return nil
		}
	}
	text := func(v string, max int) func() error {
		return func() error {
			if !plaintext.Valid(v) || utf8.RuneCountInString(v) > max {
				return fmt.Errorf("must be at most %d characters of valid UTF-8, without control or bidirectional formatting characters", max)
			}
			return nil
		}
	}
	return []fieldCheck{
		{"logo", image(b.Logo)},
		{"ogImage", image(b.OGImage)},
		{"favicon", image(b.Favicon)},
		{"description", text(b.Description, MaxDescriptionLen)},
		{"shopName", text(b.ShopName, MaxShopNameLen)},
		{"defaultLanguage", func() error {
			if b.DefaultLanguage != "" && b.DefaultLanguage != LangKorean && b.DefaultLanguage != LangEnglish {
				return fmt.Errorf("must be %q or %q", LangKorean, LangEnglish)
			}
			return nil
		}},
		{"embedTarget", func() error {
			if b.EmbedTarget != "" && b.EmbedTarget != EmbedNewTab && b.EmbedTarget != EmbedSameTab {
				return fmt.Errorf("must be %q (a new tab) or %q (the same tab)", EmbedNewTab, EmbedSameTab)
			}
			return nil
		}},
		{"embedOrigins", func() error {
			if len(b.EmbedOrigins) > MaxEmbedOrigins {
				return fmt.Errorf("may list at most %d origins", MaxEmbedOrigins)
			}
			for _, o := range b.EmbedOrigins {
				if !ValidOrigin(o) {
					return fmt.Errorf("%q is not an origin such as https://shop.example (a scheme, a host and an optional port from 1 to 65535, nothing else; an international name in its xn-- form)", cut(o, 80))
				}
			}
			return nil
		}},
		{"accentColor", func() error { return CheckAccent(b.AccentColor, Light) }},
		{"accentColorDark", func() error { return CheckAccent(b.AccentColorDark, Dark) }},
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// ValidOrigin reports whether o is an http(s) origin as a browser's CSP
// matches it: a scheme, a host (DNS labels of a-z, 0-9 and '-', an IPv4
// address, or a bracketed IPv6 address) and an optional port from 1 to
// 65535, in lower case, with no path, query or user. An internationalised
// name must be given in its ASCII form (xn--…), as CSP compares it.
func ValidOrigin(o string) bool {
	if o == "" || len(o) > MaxOriginLen || o != strings.ToLower(o) {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || u.Scheme+"://"+u.Host != o {
		return false
	}
	host, port := u.Hostname(), u.Port()
	if strings.HasSuffix(u.Host, ":") {
		return false // an empty port
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return false
		}
	}
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		return err == nil && a.Is6() && a.Zone() == ""
	}
	return validDNSName(host)
}

// validDNSName reports whether h is dot-separated labels of a-z, 0-9 and
// '-', each 1 to 63 long and neither starting nor ending with '-' (an IPv4
// address is such a name too).
func validDNSName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// BrandingPatch is a partial update of Branding: nil fields keep their
// value.
type BrandingPatch struct {
	Logo            *string   `json:"logo"`
	OGImage         *string   `json:"ogImage"`
	Favicon         *string   `json:"favicon"`
	AccentColor     *string   `json:"accentColor"`
	AccentColorDark *string   `json:"accentColorDark"`
	Description     *string   `json:"description"`
	DefaultLanguage *string   `json:"defaultLanguage"`
	ShopName        *string   `json:"shopName"`
	EmbedOrigins    *[]string `json:"embedOrigins"`
	EmbedTarget     *string   `json:"embedTarget"`
	Listed          *bool     `json:"listed"`
}

func (p BrandingPatch) apply(b Branding) Branding {
	set(&b.Logo, p.Logo)
	set(&b.OGImage, p.OGImage)
	set(&b.Favicon, p.Favicon)
	set(&b.AccentColor, p.AccentColor)
	set(&b.AccentColorDark, p.AccentColorDark)
	set(&b.Description, p.Description)
	set(&b.DefaultLanguage, p.DefaultLanguage)
	set(&b.ShopName, p.ShopName)
	set(&b.EmbedOrigins, p.EmbedOrigins)
	set(&b.EmbedTarget, p.EmbedTarget)
	set(&b.Listed, p.Listed)
	b.AccentColor = strings.ToLower(b.AccentColor)
	b.AccentColorDark = strings.ToLower(b.AccentColorDark)
	return b
}

// Scheme is a colour scheme of the pages: the colours that an accent
// colour must stand out against. They are static/app.css's.
type Scheme struct {
	Name string
	// Backgrounds are the page's and the card's background: accent text
	// (links) sits on both.
	Backgrounds []string
	// Labels are the colours a button's label may take on the accent; the
	// one with the higher contrast is used (OnAccent).
	Labels []string
	// Default is the scheme's built-in accent colour.
	Default string
}

// The two colour schemes of static/app.css.
var (
	Light = Scheme{Name: "light", Backgrounds: []string{"#f6f7f9", "#ffffff"}, Labels: []string{"#ffffff", "#0b1020"}, Default: "#2456e8"}
	Dark  = Scheme{Name: "dark", Backgrounds: []string{"#101216", "#1a1d23"}, Labels: []string{"#ffffff", "#0b1020"}, Default: "#7c9cff"}
)

// WCAG AA's contrast minimums: normal text, and large text (24 px, or
// 18.66 px bold). Button labels and links are normal text on the pages.
const (
	MinContrast      = 4.5
	MinContrastLarge = 3.0
)

var hexColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// ContrastError is a refused accent colour: which pair of colours falls
// under which minimum.
type ContrastError struct {
	Scheme, Foreground, Background string
	Ratio, Min                     float64
	// Suggestion is the nearest colour that passes in the scheme: the
	// refused one mixed with the least black or white ("" when none).
	Suggestion string
}

func (e *ContrastError) Error() string {
	msg := fmt.Sprintf("in the %s scheme, %s on %s has a contrast of %.2f:1, under WCAG AA's %.1f:1",
		e.Scheme, e.Foreground, e.Background, math.Floor(e.Ratio*100)/100, e.Min)
	if e.Suggestion != "" {
		msg += "; the nearest colour that passes is " + e.Suggestion
	}
	return msg
}

// CheckAccent returns nil when c is "" or a "#rrggbb" colour that keeps
// WCAG AA contrast in scheme s: links in c on each background, and the
// better of the scheme's labels on c as a button. Otherwise it returns an
// error, a *ContrastError for a contrast too low.
func CheckAccent(c string, s Scheme) error {
	if c == "" {
		return nil
	}
	if !hexColor.MatchString(c) {
		return errors.New("must be a colour such as #1a73e8")
	}
	if e := lowContrast(strings.ToLower(c), s); e != nil {
		e.Suggestion = nearestAccent(strings.ToLower(c), s)
		return e
	}
	return nil
}

// lowContrast returns the first pair of colours that falls under AA when
// c is the accent of s, or nil.
func lowContrast(c string, s Scheme) *ContrastError {
	for _, bg := range s.Backgrounds {
		if r := Contrast(c, bg); r < MinContrast {
			return &ContrastError{Scheme: s.Name, Foreground: c, Background: bg, Ratio: r, Min: MinContrast}
		}
	}
	label := OnAccent(c, s)
	if r := Contrast(label, c); r < MinContrast {
		return &ContrastError{Scheme: s.Name, Foreground: label, Background: c, Ratio: r, Min: MinContrast}
	}
	return nil
}

// nearestAccent returns c mixed with the least black or white (in steps
// of 1%) that passes in s, keeping its hue: what a brand colour becomes
// to stay readable. "" when no mix passes.
func nearestAccent(c string, s Scheme) string {
	for step := 1; step <= 100; step++ {
		for _, toward := range []string{"#000000", "#ffffff"} {
			m := mix(c, toward, float64(step)/100)
			if lowContrast(m, s) == nil {
				return m
			}
		}
	}
	return ""
}

// mix returns the colour t of the way from a to b, both "#rrggbb".
func mix(a, b string, t float64) string {
	out := []byte{'#'}
	for i := 0; i < 3; i++ {
		x, _ := strconv.ParseUint(a[1+2*i:3+2*i], 16, 8)
		y, _ := strconv.ParseUint(b[1+2*i:3+2*i], 16, 8)
		v := math.Round(float64(x) + (float64(y)-float64(x))*t)
		out = fmt.Appendf(out, "%02x", int(v))
	}
	return string(out)
}

// OnAccent returns the label colour of s with the higher contrast on c.
func OnAccent(c string, s Scheme) string {
	best, bestRatio := s.Labels[0], -1.0
	for _, l := range s.Labels {
		if r := Contrast(l, c); r > bestRatio {
			best, bestRatio = l, r
		}
	}
	return best
}

// Contrast returns the WCAG 2 contrast ratio of two "#rrggbb" colours,
// from 1 to 21. It returns 0 for a colour it cannot read.
func Contrast(a, b string) float64 {
	la, ok1 := luminance(a)
	lb, ok2 := luminance(b)
	if !ok1 || !ok2 {
		return 0
	}
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is WCAG 2's relative luminance of a "#rrggbb" colour.
func luminance(c string) (float64, bool) {
	if !hexColor.MatchString(c) {
		return 0, false
	}
	var ch [3]float64
	for i := range ch {
		v, err := strconv.ParseUint(c[1+2*i:3+2*i], 16, 8)
		if err != nil {
			return 0, false
		}
		x := float64(v) / 255
		if x <= 0.04045 {
			ch[i] = x / 12.92
		} else {
			ch[i] = math.Pow((x+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*ch[0] + 0.7152*ch[1] + 0.0722*ch[2], true
}
