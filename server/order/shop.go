package order

import "errors"

// ErrAtShop refuses an order on the built-in order path of a room that
// sends its buyers to a shop (gate mode): its orders are taken there.
var ErrAtShop = errors.New("the room's orders are taken at its shop")
