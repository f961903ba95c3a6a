package web

import (
	"errors"
	"net/http"
	"net/netip"
	"time"

	"waitingroom/server/queue"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// scheduleError is the answer to an enter the schedule refuses: the API's
// error shape plus the schedule, so that a page can count down.
type scheduleError struct {
	response.Error
	PrequeueAt *int64 `json:"prequeueAt"`
	OpensAt    *int64 `json:"opensAt"`
	ClosesAt   *int64 `json:"closesAt"`
	ServerTime int64  `json:"serverTime"`
}

// writeScheduleError answers an enter refused by the schedule and reports
// whether err was one: 409 not_open before the pre-queue (or the opening),
// 409 sale_ended after the closing.
func writeScheduleError(w http.ResponseWriter, p queue.Position, err error) bool {
	e := scheduleError{PrequeueAt: p.PrequeueAt, OpensAt: p.OpensAt, ClosesAt: p.ClosesAt, ServerTime: p.ServerTime}
	switch {
	case errors.Is(err, queue.ErrNotOpen):
		at := p.OpensAt
		if p.PrequeueAt != nil {
			at = p.PrequeueAt
		}
		e.Error = response.Error{Code: "not_open", Message: "This sale is not open yet."}
		if at != nil {
			e.Message = "This sale is not open yet. You can join from " + time.UnixMilli(*at).UTC().Format(time.RFC3339) + "."
		}
	case errors.Is(err, queue.ErrSaleEnded):
		e.Error = response.Error{Code: "sale_ended", Message: "This sale has ended."}
	default:
		return false
	}
	response.WriteJSON(w, http.StatusConflict, e)
	return true
}

// prequeueNet returns the client network that the pre-queue's figures
// count: the /24 of an IPv4 address, the /64 of an IPv6 one, "" for a
// host that is no address.
func prequeueNet(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	a = a.WithZone("").Unmap()
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return ""
	}
	return p.String()
}

// enterNet returns the client network of r for the pre-queue's figures.
func (s *Server) enterNet(r *http.Request) string {
	return prequeueNet(request.ClientIP(r, s.trusted))
}

// drawInfo answers GET /api/rooms/{room}/draw: the commitment to the
// draw's seed, and once drawn the seed and the pre-queue tickets in drawn
// order. It is the same for everyone, so it may be cached briefly.
func (s *Server) drawInfo(w http.ResponseWriter, r *http.Request) {
	info, err := s.q.DrawInfo(r.Context(), r.PathValue("room"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=2")
	response.WriteJSON(w, http.StatusOK, info)
}
