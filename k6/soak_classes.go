package k6

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The priority classes a soak sorts its timed events into (the
// front of the line and ready events go first in a tick's fan-out).
const (
	// ClassAll is every timed event, whatever its class.
	ClassAll = "all"
	// ClassReady is a ready event (the visitor's turn), timed by "t", the
	// server time of the tick that admitted the visitor.
	ClassReady = "ready"
	// ClassFront is a position event with "every" of 1 or less: a visitor
	// near the front, told every tick.
	ClassFront = "front"
	// ClassBack is a position event with "every" above 1: a visitor far
	// back, told every few ticks.
	ClassBack = "back"
)

// classify names the priority class of an event from its SSE event name
// and data, or "" for an event that counts in ClassAll only: any event
// when classed is false (a server whose events carry no class, such as
// the r3labs reference), and events other than ready and position (a
// widget's room, soldout).
//
// A position event without "every" counts as front: a waiting-room server
// that does not class its events tells every visitor every tick.
func classify(name, data []byte, classed bool) string {
	switch {
	case !classed:
		return ""
	case bytes.Equal(name, []byte(ClassReady)):
		return ClassReady
	case !bytes.Equal(name, []byte("position")):
		return ""
	case cadence(data) > 1:
		return ClassBack
	default:
		return ClassFront
	}
}

// cadence is an event's "every": the ticks until the visitor's next
// scheduled event; 1 when the event does not say (every tick).
func cadence(data []byte) int64 {
	return max(1, jsonInt(data, `"every":`))
}

// ClassDelay is the delay, tick's server time to receipt, of one priority
// class's events.
type ClassDelay struct {
	Class         string
	Events        int
	P50, P99, Max time.Duration
}

// classDelays computes the percentiles of each class from the raw samples
// (µs): the tick-keyed events of lat, and the classed ones of classes.
// ClassAll is lat's events and the ready events, which have no tick id.
func classDelays(lat map[int64][]int32, classes map[string][]int32) []ClassDelay {
	var out []ClassDelay
	for _, class := range []string{ClassAll, ClassReady, ClassFront, ClassBack} {
		var raw []int32
		if class == ClassAll {
			for _, ls := range lat {
				raw = append(raw, ls...)
			}
			raw = append(raw, classes[ClassReady]...)
		} else {
			raw = classes[class]
		}
		out = append(out, delayOf(class, raw))
	}
	return out
}

// delayOf is the percentiles of one class's raw samples (µs).
func delayOf(class string, raw []int32) ClassDelay {
	ds := make([]time.Duration, len(raw))
	for i, l := range raw {
		ds[i] = time.Duration(l) * time.Microsecond
	}
	slices.Sort(ds)
	d := ClassDelay{Class: class, Events: len(ds), P50: Percentile(ds, 50), P99: Percentile(ds, 99)}
	if len(ds) > 0 {
		d.Max = ds[len(ds)-1]
	}
	return d
}

// delayLines formats the delays by priority class, one line each.
func (r Report) delayLines(b *strings.Builder) {
	b.WriteString("delay by priority class, tick's server time -> receipt (ready: the admitting tick's):\n")
	for _, d := range r.Delays {
		if d.Events == 0 {
			fmt.Fprintf(b, "  %-5s none\n", d.Class)
			continue
		}
		fmt.Fprintf(b, "  %-5s p50 %v, p99 %v, max %v over %d events\n", d.Class,
			d.P50.Round(time.Microsecond), d.P99.Round(time.Microsecond), d.Max.Round(time.Microsecond), d.Events)
	}
}
