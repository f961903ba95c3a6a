package views

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/text/currency"
)

// FormatPrice writes amount, in the smallest unit of the ISO 4217 currency
// code, as a buyer of lang reads it: "129,000원" in Korean and "₩129,000"
// in English for KRW; "$12.50", "€4.50" or "CHF 12.50" for others, with
// the currency's own number of decimals. An unknown code is written before
// the amount with two decimals; an empty one is KRW, the default of the
// products table.
func FormatPrice(amount int64, code, lang string) string {
	if code == "" {
		code = "KRW"
	}
	scale, symbol := 2, code
	if u, err := currency.ParseISO(code); err == nil {
		scale, _ = currency.Standard.Rounding(u)
		symbol = fmtSymbol(u)
	}
	num := groupDigits(amount, scale)
	switch {
	case lang == "ko" && code == "KRW":
		return num + "원"
	case symbol == code || isLetters(symbol):
		return symbol + "\u00a0" + num // "CHF 12.50"
	default:
		return symbol + num
	}
}

// fmtSymbol returns the narrow symbol of u ("₩", "$", "€"), or its code.
func fmtSymbol(u currency.Unit) string { return fmt.Sprint(currency.NarrowSymbol(u)) }

func isLetters(s string) bool {
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return s != ""
}

// groupDigits writes amount with scale decimals and thousands separators:
// groupDigits(1250, 2) is "12.50".
func groupDigits(amount int64, scale int) string {
	if amount < 0 { // prices are never negative (a CHECK in the schema)
		return "-" + groupDigits(-max(amount, -math.MaxInt64), scale)
	}
	s := strconv.FormatInt(amount, 10)
	frac := ""
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s, frac = s[:len(s)-scale], "."+s[len(s)-scale:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String() + frac
}
