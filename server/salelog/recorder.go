package salelog

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"waitingroom/server/audit"
)

// Recorder keeps the sale's events for the dashboard's timeline: the
// audit log (server/audit).
type Recorder interface {
	Record(ctx context.Context, e audit.Entry) error
}

// recordTimeout bounds one event's write.
const recordTimeout = 5 * time.Second

// recordQueue bounds the events waiting to be written: beyond it (the
// database is slow or down), an event is left out of the audit log, with
// a warning; the server's log still has it.
const recordQueue = 1024

// RecordTo makes every later Event also recorded in r, as action
// "sale.<event>" (sale.sold_out, sale.rate, …), in the order they
// happened. It must be called before the Log is used.
func (l *Log) RecordTo(r Recorder) {
	l.recorder = r
	l.pending = make(chan audit.Entry, recordQueue)
}

// Flush waits for the events being recorded.
func (l *Log) Flush() { l.recording.Wait() }

// Action names ev in the audit log.
func Action(ev Event) string {
	switch ev {
	case SoldOut:
		return "sale.sold_out"
	case RateChanged:
		return "sale.rate"
	case PrequeueOpened:
		return "sale.prequeue_opened"
	case AdaptiveOn:
		return "sale.adaptive_on"
	case AdaptiveOff:
		return "sale.adaptive_off"
	}
	return "sale." + string(ev)
}

// record writes ev to the recorder in the background: the order path and
// the admin's request do not wait for the database. The actor is the
// "by" attribute ("system" without one); "old" and "new" are the values
// before and after, and the other attributes, as a JSON object, are the
// new value of an event without "new".
func (l *Log) record(room string, ev Event, attrs []any) {
	if l.recorder == nil {
		return
	}
	e := audit.Entry{At: time.Now(), Actor: "system", Room: room, Action: Action(ev)}
	rest := map[string]any{}
	for i := 0; i+1 < len(attrs); i += 2 {
		key, ok := attrs[i].(string)
		if !ok {
			continue
		}
		switch v := attrs[i+1]; key {
		case "by":
			e.Actor = fmt.Sprint(v)
		case "old":
			e.Old = fmt.Sprint(v)
		case "new":
			e.New = fmt.Sprint(v)
		default:
			rest[key] = v
		}
	}
	if e.New == "" && len(rest) > 0 {
		if b, err := json.Marshal(rest); err == nil {
			e.New = string(b)
		}
	}
	l.recording.Add(1)
	select {
	case l.pending <- e:
	default:
		l.recording.Done()
		l.log.Warn("sale event not recorded in the audit log: too many waiting", "room", room, "event", string(ev))
		return
	}
	l.writerMu.Lock()
	if !l.writing {
		l.writing = true
		go l.write()
	}
	l.writerMu.Unlock()
}

// write is the one writer of the queued events, oldest first: events are
// recorded in the order they happened. It returns once the queue is
// empty; the next event starts another.
func (l *Log) write() {
	for {
		select {
		case e := <-l.pending:
			ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
			if err := l.recorder.Record(ctx, e); err != nil {
				l.log.Warn("sale event not recorded in the audit log", "room", e.Room, "action", e.Action, "err", err)
			}
			cancel()
			l.recording.Done()
		default:
			l.writerMu.Lock()
			if len(l.pending) == 0 {
				l.writing = false
				l.writerMu.Unlock()
				return
			}
			l.writerMu.Unlock()
		}
	}
}
