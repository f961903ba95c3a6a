package order

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"time"

	"golang.org/x/text/currency"
)

// CSVHeader is the first row of ExportOrders.
var CSVHeader = []string{"order_id", "created_at", "room", "status", "product_id", "product", "quantity",
	"unit_price", "currency", "amount", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
	"gclid", "fbclid", "ttclid"}

// csvPage is how many orders ExportOrders reads per query.
const csvPage = MaxListLimit

// ExportOrders writes every order f selects (f.Limit and f.AfterID are
// ignored) to w as CSV, newest first, with a header row: read and written
// a page at a time, so an export of any size holds neither a connection
// nor its rows for long. Prices and amounts are decimals in the
// currency's major unit ("129000" KRW, "12.50" USD); times are RFC 3339
// in UTC. A text cell that a spreadsheet would run as a formula is
// prefixed with '. It returns an *InvalidFilterError, ErrUnavailable (the
// database failed before anything was written), or the error that
// stopped the writing midway.
func (s *Service) ExportOrders(ctx context.Context, f OrderFilter, w io.Writer) error {
	f.AfterID, f.Limit = 0, csvPage
	if err := f.Validate(); err != nil {
		return err
	}
	rows, err := s.store.listOrders(ctx, f)
	if err != nil {
		s.log.Warn("order: export orders", "room", f.Room, "err", err)
		return ErrUnavailable
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("order: export: %w", err)
	}
	for {
		for _, o := range rows {
			if err := cw.Write(csvRecord(o)); err != nil {
				return fmt.Errorf("order: export: %w", err)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("order: export: %w", err)
		}
		if len(rows) < csvPage {
			return nil
		}
		f.AfterID = rows[len(rows)-1].ID
		if rows, err = s.store.listOrders(ctx, f); err != nil {
			s.log.Warn("order: export orders", "room", f.Room, "err", err)
			return fmt.Errorf("order: export: %w", err)
		}
	}
}

// csvRecord is o's CSV row, in CSVHeader order.
func csvRecord(o OrderRow) []string {
	unit, amount := "", ""
	if o.UnitPrice >= 0 {
		unit, amount = Decimal(o.UnitPrice, o.Currency), Decimal(o.Amount(), o.Currency)
	}
	rec := []string{o.PublicID, o.CreatedAt.UTC().Format(time.RFC3339), o.Room, o.Status,
		strconv.FormatInt(o.ProductID, 10), o.ProductName, strconv.FormatInt(o.Quantity, 10),
		unit, o.Currency, amount, o.Source, o.Medium, o.Campaign, o.Term, o.Content,
		o.Gclid, o.Fbclid, o.Ttclid}
	for i, v := range rec {
		rec[i] = CSVCell(v)
	}
	return rec
}

// CSVCell returns v safe to open in a spreadsheet: a cell starting with
// =, +, -, @, a tab or a carriage return would run as a formula, so it
// gets a leading '.
func CSVCell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + v
	}
	return v
}

// Decimal writes amount, in the smallest unit of the ISO 4217 currency
// code, as a plain decimal in the major unit, with the currency's own
// number of decimals: Decimal(1250, "USD") is "12.50", Decimal(129000,
// "KRW") is "129000". An unknown code has two decimals.
func Decimal(amount int64, code string) string {
	scale := 2
	if u, err := currency.ParseISO(code); err == nil {
		scale, _ = currency.Standard.Rounding(u)
	}
	neg := amount < 0
	if neg {
		amount = -amount
	}
	s := strconv.FormatInt(amount, 10)
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
