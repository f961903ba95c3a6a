package admin

import (
	"time"

	"waitingroom/server/room"
	"waitingroom/server/salelog"
)

// OpenNow reports whether a room with settings r sells at now: not closed,
// not paused, past its opening and before its closing.
func OpenNow(r room.Settings, now time.Time) bool {
	return !r.Paused && room.PhaseAt(r, now) == room.PhaseOpen
}

// events tells the sale log what a write changed.
func (rs *Rooms) events(name, actor, action string, d Written) {
	sale := rs.d.Sale
	cur, next := d.Old, d.New
	switch {
	case d.Created:
		ev := salelog.Created // the issuers tell its schedule's opening
		if OpenNow(next, time.Now()) {
			ev = salelog.Opened
		}
		sale.Event(name, ev, "by", actor, "rate", next.Rate, "maxActive", next.MaxActive, "paused", next.Paused, "mode", next.Mode)
	case !cur.Paused && next.Paused:
		sale.Event(name, salelog.Paused, "by", actor)
	case cur.Paused && !next.Paused:
		sale.Event(name, salelog.Resumed, "by", actor)
	}
	if !d.Created && cur.Rate != next.Rate {
		sale.Event(name, salelog.RateChanged, "by", actor, "old", cur.Rate, "new", next.Rate)
	}
	switch a := next.Adapt; {
	case a.Adaptive && (d.Created || !cur.Adaptive):
		sale.Event(name, salelog.AdaptiveOn, "by", actor, "minRate", a.MinRate, "maxRate", a.MaxRate,
			"targetP95Ms", a.TargetP95Ms, "maxErrorRate", a.MaxErrorRate)
	case !d.Created && cur.Adaptive && !a.Adaptive:
		sale.Event(name, salelog.AdaptiveOff, "by", actor, "rate", next.Rate)
	}
	if !d.Created && cur.Mode != next.Mode && next.Mode == room.ModeClosed {
		sale.Event(name, salelog.Closed, "by", actor)
	}
	if action == ActionDrain && next.ClosesAt != nil {
		sale.Event(name, salelog.Draining, "by", actor, "closesAt", *next.ClosesAt)
	}
	reopened := !d.Created && cur.Mode == room.ModeClosed && next.Mode != room.ModeClosed
	switch {
	case d.SoldOut && !d.WasSoldOut:
		sale.Event(name, salelog.SoldOut, "by", actor)
	case d.WasSoldOut && !d.SoldOut, reopened, action == ActionReopen:
		sale.Event(name, salelog.Reopened, "by", actor)
	}
}
