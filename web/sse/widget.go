package sse

import (
	"bytes"
	"strconv"
	"time"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// DefaultMaxWidgets bounds the widget streams of one process when
// Options.MaxWidgets is zero (as config.DefaultWidgetMaxStreams). It
// leaves most of the 20,000 open files of one process to buyers' streams.
const DefaultMaxWidgets = 4000

// widgetPeekEvery is how often a room's fan-out looks for widget viewers
// that left.
const widgetPeekEvery = 2 * time.Second

// View is what an embedded widget shows: the room's phase and line,
// the same for every viewer. Times are unix ms, 0 when unset.
type View struct {
	Phase                         string
	Waiting                       int64
	ETA                           *int64 // a newcomer's wait; nil while paused or unknown
	Paused, SoldOut               bool
	PrequeueAt, OpensAt, ClosesAt int64
	ServerTime                    int64 // this server's clock when the view was made
	Tick                          int64
	TickMicros                    int64
	Epoch                         int64 // the room state's epoch that Tick belongs to
}

// widgetShown is what a widget shows of a view: a frame is sent only when
// it changes.
type widgetShown struct {
	phase                         string
	waiting, eta                  int64 // eta -1: none
	paused, soldOut               bool
	prequeueAt, opensAt, closesAt int64
}

func (v View) shown() widgetShown {
	eta := int64(-1)
	if v.ETA != nil {
		eta = *v.ETA
	}
	return widgetShown{phase: v.Phase, waiting: v.Waiting, eta: eta, paused: v.Paused, soldOut: v.SoldOut,
		prequeueAt: v.PrequeueAt, opensAt: v.OpensAt, closesAt: v.ClosesAt}
}

// widgetOf returns the view of the room's state st at now: a newcomer's
// wait counts everyone in line.
func widgetOf(st *push.State, now time.Time) View {
	v := View{Phase: st.Phase, Waiting: st.Waiting,
		Paused: st.Paused, SoldOut: st.SoldOut, PrequeueAt: st.PrequeueAt, OpensAt: st.OpensAt, ClosesAt: st.ClosesAt,
		ServerTime: now.UnixMilli(), Tick: st.Tick, TickMicros: st.TimeMicros, Epoch: st.Epoch}
	if st.Waiting > 0 { // nobody waiting: no wait to tell
		v.ETA = queue.ETA(st.Waiting, st.Rate, st.Slots, st.Paused)
	}
	return v
}

// AppendJSON appends v as the widget's JSON (the polling answer and the
// data of the stream's "room" events). Every field is a number, a boolean
// or a queue.Phase constant: nothing to escape.
func (v View) AppendJSON(b []byte) []byte {
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
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, v.TickMicros, 10)
	return AppendServerTime(b, v.ServerTime)
}

// AppendServerTime closes a widget JSON object (StatusHead's) with the
// server clock ms.
func AppendServerTime(b []byte, ms int64) []byte {
	b = append(b, `,"serverTime":`...)
	b = strconv.AppendInt(b, ms, 10)
	return append(b, '}')
}

// StatusHead is v's widget JSON without its serverTime, to be closed by
// AppendServerTime per response.
func (v View) StatusHead() []byte {
	b := v.AppendJSON(nil)
	return b[:bytes.LastIndex(b, []byte(`,"serverTime":`))]
}

// appendWidgetEvent appends v as one SSE "room" event, with the tick as
// its id.
func appendWidgetEvent(b []byte, v View) []byte {
	if v.Tick > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, v.Tick, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: room\ndata: "...)
	b = v.AppendJSON(b)
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
// capped like its buyers' streams (Options.MaxPerIP) but apart from
// them, so that viewers of a landing page behind one address never take
// the stream of a buyer behind it.
func widgetIPKey(ip string) string { return "widget\x00" + ip }

// Widgets returns the number of widget streams open on this hub.
func (h *Hub) Widgets() int64 { return h.widgets.Load() }

// View returns the room's newest state as a widget shows it. ok is false
// before the room's first tick reached this process (no phase yet).
func (h *Hub) View(r *Room, now time.Time) (v View, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return widgetOf(&r.state, now), r.state.Phase != ""
}

// attachWidget registers a handshaken widget stream with its room; v is
// the view it was sent. It holds no visitor, no ticket and nothing per
// viewer but the connection and what it was last shown.
func (h *Hub) attachWidget(r *Room, c *conn, v View) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	c.room, c.widget, c.lastTick, c.lastShown = r, true, v.Tick, v.shown()
	h.indexIPLocked(c)
	r.mu.Lock()
	c.epoch = r.state.Epoch
	if c.epoch != v.Epoch {
		// The room started again between the view and now: its ticks
		// count anew, and the view is the old epoch's.
		c.lastTick = 0
	}
	c.index = len(r.widgets)
	r.widgets = append(r.widgets, c)
	if r.state.Tick > c.lastTick {
		h.scheduleLocked(r)
	}
	r.mu.Unlock()
	h.conns.Add(1)
	h.metrics.Connections.Inc()
	return true
}

// pushWidgets sends st to the room's widgets that have not been shown what
// it shows: one frame, built once, for all of them. A tick that changes
// nothing a widget shows writes nothing (the heartbeats keep the idle
// streams open).
func (h *Hub) pushWidgets(r *Room, st push.State, widgets []*conn) {
	// After an outage every widget is sent the state, changed or not.
	stale := r.widgetsStale.Swap(false)
	if len(widgets) == 0 {
		return
	}
	now := h.now()
	v := widgetOf(&st, now)
	shown := v.shown()
	var frame []byte
	for _, c := range widgets {
		if c.done.Load() {
			continue
		}
		if c.epoch != st.Epoch {
			c.epoch, c.lastTick = st.Epoch, 0 // the room started again: its ticks count anew
		}
		if !stale && (st.Tick <= c.lastTick || c.lastShown == shown) {
			c.lastTick = max(c.lastTick, st.Tick)
			continue
		}
		c.lastTick = max(c.lastTick, st.Tick)
		if frame == nil {
			frame = appendChunk(nil, func(b []byte) []byte { return appendWidgetEvent(b, v) })
		}
		c.lastShown = shown
		if err := c.writeFramed(frame); err != nil {
			h.drop(c, err)
		}
	}
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

func (h *Hub) widgetsGone(r *Room) {
	r.mu.Lock()
	widgets := append([]*conn(nil), r.widgets...)
	r.mu.Unlock()
	for _, c := range widgets {
		if err := c.writeFramed(widgetGoneFrame); err != nil {
			h.drop(c, err)
			continue
		}
		h.drop(c, nil)
	}
}

// resyncQuietWidgets resyncs a room that has widgets and sent no event for
// two heartbeats: a room deleted by another process sends none, and its
// resync finds it gone (see widgetsGone). One Redis read per quiet room per
// heartbeat.
func (h *Hub) resyncQuietWidgets(r *Room) {
	select {
	case <-r.loaded:
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.widgets) > 0 && h.now().Sub(r.lastEvent) > 2*h.opt.Heartbeat {
		r.lastEvent = h.now()
		h.resyncLocked(r)
	}
}

// peekWidgets looks at room r's widget streams for viewers that left,
// every widgetPeekEvery, so that they do not hold a file until the next
// heartbeat finds them: their streams get no write while nothing changes,
// and a room that sleeps has no ticks at all.
func (h *Hub) peekWidgets(r *Room, now time.Time) {
	r.mu.Lock()
	if len(r.widgets) == 0 || now.Before(r.widgetPeekAt) {
		r.mu.Unlock()
		return
	}
	r.widgetPeekAt = now.Add(widgetPeekEvery)
	widgets := append([]*conn(nil), r.widgets...)
	r.mu.Unlock()
	for _, c := range widgets {
		if !c.done.Load() && c.peerGone() {
			h.drop(c, nil)
		}
	}
}
