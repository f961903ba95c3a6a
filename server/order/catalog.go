package order

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"waitingroom/server/plaintext"
)

// Limits on a product, so that one typo cannot corrupt a sale.
const (
	MaxProductName  = 200
	MaxPrice        = 1_000_000_000_000 // in the currency's smallest unit
	MaxStock        = 1_000_000_000
	DefaultCurrency = "KRW"
)

// ErrProductHasOrders refuses to delete a product that orders refer to:
// orders are records. Set its stock to 0 to stop selling it (409).
var ErrProductHasOrders = errors.New("the product has orders; set its stock to 0 instead")

// InvalidProductError names the product field that is invalid (400).
type InvalidProductError struct {
	Field  string
	Reason string
}

func (e *InvalidProductError) Error() string { return e.Field + " " + e.Reason }

// ProductPatch is the admin API's product body: on create, name and price
// are required (currency defaults to KRW, stock to 0); on update, fields
// left out keep their value.
type ProductPatch struct {
	Name     *string `json:"name"`
	Price    *int64  `json:"price"`
	Currency *string `json:"currency"`
	Stock    *int64  `json:"stock"`
	ImageURL *string `json:"imageURL"`
}

// Apply returns p with the patch's non-nil fields set. It does not
// validate.
func (pp ProductPatch) Apply(p Product) Product {
	if pp.Name != nil {
		p.Name = *pp.Name
	}
	if pp.Price != nil {
		p.Price = *pp.Price
	}
	if pp.Currency != nil {
		p.Currency = *pp.Currency
	}
	if pp.Stock != nil {
		p.Stock = *pp.Stock
	}
	if pp.ImageURL != nil {
		p.ImageURL = *pp.ImageURL
	}
	return p
}

// newProduct returns the product that the patch creates, or an
// InvalidProductError.
func (pp ProductPatch) newProduct() (Product, error) {
	switch {
	case pp.Name == nil:
		return Product{}, &InvalidProductError{"name", "is required"}
	case pp.Price == nil:
		return Product{}, &InvalidProductError{"price", "is required"}
	}
	p := pp.Apply(Product{Currency: DefaultCurrency})
	return p, p.Validate()
}

// Validate returns an InvalidProductError naming the first invalid field.
func (p Product) Validate() error {
	if err := validName(p.Name); err != nil {
		return err
	}
	switch {
	case p.Price < 0 || p.Price > MaxPrice:
		return &InvalidProductError{"price", fmt.Sprintf("must be between 0 and %d (in the currency's smallest unit)", int64(MaxPrice))}
	case !validCurrency(p.Currency):
		return &InvalidProductError{"currency", "must be an ISO 4217 code of three capital letters, such as KRW or EUR"}
	case strings.HasPrefix(p.Currency, "X"):
		// XXX (no currency), XTS (testing), XAU (gold), XDR (SDR)…: codes
		// without a minor unit a sale can charge in.
		return &InvalidProductError{"currency", "must be a currency buyers pay in: codes starting with X (XXX, XTS, XAU, XDR…) are not accepted"}
	case p.Stock < 0 || p.Stock > MaxStock:
		return &InvalidProductError{"stock", fmt.Sprintf("must be between 0 and %d", MaxStock)}
	case !validImageURL(p.ImageURL):
		return &InvalidProductError{"imageURL", fmt.Sprintf("must be empty, an absolute https URL or a path starting with /, of at most %d bytes", MaxImageURL)}
	}
	return nil
}

// MaxImageURL bounds a product's image URL, in bytes.
const MaxImageURL = 2048

// validImageURL reports whether u is empty, an absolute https URL with a
// host and no user info, or a path on this site ("/static/x.png", not the
// scheme-relative "//host/x"), of at most MaxImageURL bytes, without
// control characters, spaces or backslashes (which some browsers read as
// slashes).
func validImageURL(u string) bool {
	if u == "" {
		return true
	}
	if len(u) > MaxImageURL || !utf8.ValidString(u) || strings.ContainsFunc(u, func(r rune) bool {
		return unicode.IsControl(r) || unicode.IsSpace(r) || r == '\\'
	}) {
		return false
	}
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	if strings.HasPrefix(u, "/") {
		return !strings.HasPrefix(u, "//") && p.Scheme == "" && p.Host == ""
	}
	return p.Scheme == "https" && p.Host != "" && p.User == nil
}

func validName(s string) error {
	bad := &InvalidProductError{"name", fmt.Sprintf("must be 1 to %d characters of valid UTF-8, without control or bidi-override characters", MaxProductName)}
	if !plaintext.Valid(s) || strings.TrimSpace(s) == "" || utf8.RuneCountInString(s) > MaxProductName {
		return bad
	}
	return nil
}

func validCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}
