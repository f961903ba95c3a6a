package views

import (
	"strconv"
	"strings"
)

// Assets are the fingerprinted URLs of the page's stylesheet and script.
type Assets struct {
	CSS string
	JS  string
}

// Product is one product as the order form shows it.
type Product struct {
	ID    int64
	Name  string
	Price int64
}

// RoomPage is the data of the shared, cacheable waiting-room page. It holds
// nothing about the visitor, so its bytes are the same for everyone.
type RoomPage struct {
	Room     string
	Title    string
	T        Messages
	Assets   Assets
	Products []Product
}

// StatusPage is the per-visitor page for browsers without JavaScript.
type StatusPage struct {
	Room    string
	Title   string
	T       Messages
	Assets  Assets
	Status  string // WAITING, READY or NOT_ENTERED
	Rank    int64
	Waiting int64
	ETA     int64
	Refresh int
	Token   string
	SoldOut bool
	// Products fill the order form.
	Products []Product
}

// Retry is an order form to post again from an error page: the entry token
// and the choices, so that a retry that can succeed is one click.
type Retry struct {
	Token     string
	ProductID int64
	Quantity  int
	UTM       map[string]string
}

// ConfirmPage confirms a placed order.
type ConfirmPage struct {
	Room     string
	Title    string
	T        Messages
	Assets   Assets
	OrderID  string
	Product  string
	Quantity int
}

// ErrorPage is an HTML error answer.
type ErrorPage struct {
	Status  int
	Message string
	Room    string // when set, a link back to the room
	Retry   bool   // whether retrying can succeed (a GET of the page)
	// RetryOrder, when set, is an order to post again.
	RetryOrder *Retry
	T          Messages
	Assets     Assets
}

// FormatPrice writes a price in the smallest currency unit with thousands
// separators.
func FormatPrice(p int64) string {
	s := strconv.FormatInt(p, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
