package web

import (
	"strconv"
	"time"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// DefaultMaxWidgets bounds the widget streams of one process when
// HubOptions.MaxWidgets is zero. It leaves room for buyers' streams under
// the 20,000 open files of one process.
const DefaultMaxWidgets = 12000

// widgetView is what an embedded widget shows: the room's phase and line,
// the same for every viewer. Times are unix ms, 0 when unset.
type widgetView struct {
	Phase                         string
	Waiting                       int64
	ETA                           *int64 // a newcomer's wait; nil while paused or unknown
	Paused, SoldOut               bool
	PrequeueAt, OpensAt, ClosesAt int64
	ServerTime                    int64 // this server's clock when the view was made
	Tick                          int64
	TickMicros                    int64
}

// widgetOf returns the view of the room's state st at now: a newcomer's
// wait counts everyone in line.
func widgetOf(st *push.State, now time.Time) widgetView {
	return widgetView{Phase: st.Phase, Waiting: st.Waiting, ETA: queue.ETA(st.Waiting, st.Rate, st.Slots, st.Paused),
		Paused: st.Paused, SoldOut: st.SoldOut, PrequeueAt: st.PrequeueAt, OpensAt: st.OpensAt, ClosesAt: st.ClosesAt,
		ServerTime: now.UnixMilli(), Tick: st.Tick, TickMicros: st.TimeMicros}
}

// appendWidgetJSON writes v as the widget's JSON (the polling answer and
// the data of the stream's "room" events). Every field is a number, a
// boolean or a queue.Phase constant: nothing to escape.
func appendWidgetJSON(b []byte, v widgetView) []byte {
	b = append(b, `{"phase":"`...)
	b = append(b, v.Phase...)
	b = append(b, `","waiting":`...)
	b = strconv.AppendInt(b, v.Waiting, 10)
	b = append(b, `,"eta":`...)
	if v.ETA == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *v.ETA, 10)
	}
	b = append(b, `,"paused":`...)
	b = strconv.AppendBool(b, v.Paused)
	b = append(b, `,"soldOut":`...)
	b = strconv.AppendBool(b, v.SoldOut)
	for _, f := range []struct {
		name string
		ms   int64
	}{{`,"prequeueAt":`, v.PrequeueAt}, {`,"opensAt":`, v.OpensAt}, {`,"closesAt":`, v.ClosesAt}} {
		b = append(b, f.name...)
		if f.ms <= 0 {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, f.ms, 10)
		}
	}
	b = append(b, `,"serverTime":`...)
	b = strconv.AppendInt(b, v.ServerTime, 10)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, v.TickMicros, 10)
	return append(b, '}')
}

// appendWidgetEvent appends v as one SSE "room" event, with the tick as
// its id.
func appendWidgetEvent(b []byte, v widgetView) []byte {
	if v.Tick > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, v.Tick, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: room\ndata: "...)
	b = appendWidgetJSON(b, v)
	return append(b, '\n', '\n')
}

// acquireWidget counts a widget stream against the process's cap.
func (h *Hub) acquireWidget() bool {
	if h.widgets.Add(1) > int64(h.opt.MaxWidgets) {
		h.widgets.Add(-1)
		return false
	}
	return true
}

func (h *Hub) releaseWidget() { h.widgets.Add(-1) }

// widgetIPKey is the per-IP count of a client network's widget streams:
// capped like its buyers' streams (HubOptions.MaxPerIP) but apart from
// them, so that viewers of a landing page behind one address never take
// the stream of a buyer behind it.
func widgetIPKey(ip string) string { return "widget\x00" + ip }

// Widgets returns the number of widget streams open on this hub.
func (h *Hub) Widgets() int64 { return h.widgets.Load() }

// roomView returns the room's newest state as a widget shows it. ok is
// false before the room's first tick reached this process (no phase yet).
func (h *Hub) roomView(r *hubRoom, now time.Time) (v widgetView, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return widgetOf(&r.state, now), r.state.Phase != ""
}

// attachWidget registers a handshaken widget stream with its room. It
// holds no visitor, no ticket and nothing per viewer but the connection:
// every tick sends it the one frame built for all the room's widgets.
func (h *Hub) attachWidget(r *hubRoom, c *sseConn, tick int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	c.room, c.widget, c.lastTick = r, true, tick
	r.mu.Lock()
	c.epoch = r.state.Epoch
	c.index = len(r.conns)
	r.conns = append(r.conns, c)
	behind := r.state.Tick > tick
	if behind {
		h.scheduleLocked(r)
	}
	r.mu.Unlock()
	h.conns.Add(1)
	h.metrics.SSEConnections.Inc()
	return true
}

// widgetGoneFrame is the last event of a deleted room's widget stream.
var widgetGoneFrame = chunk([]byte("event: gone\ndata: {}\n\n"))

// RoomGone tells the widgets of room name that it no longer exists (it was
// deleted) and closes their streams. Buyers' streams are left as they are.
func (h *Hub) RoomGone(name string) {
	h.mu.Lock()
	r := h.rooms[name]
	h.mu.Unlock()
	if r != nil {
		h.widgetsGone(r)
	}
}

func (h *Hub) widgetsGone(r *hubRoom) {
	for _, c := range r.snapshotConns() {
		if !c.widget {
			continue
		}
		if err := c.writeFramed(widgetGoneFrame); err != nil {
			h.drop(c, err)
			continue
		}
		h.drop(c, nil)
	}
}
