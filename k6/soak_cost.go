package k6

import (
	"fmt"
	"strings"
	"time"
)

// The server metrics the push's cost is read from: the SSE events the
// hub wrote (position, ready and each connect's snapshot), the admission
// ticks the issuer ran, and the process's CPU (Go's process collector;
// the r3labs reference exports it too).
const (
	metricEvents = "waitingroom_sse_events_total"
	metricTicks  = "waitingroom_issuer_tick_duration_seconds_count"
	metricCPU    = "process_cpu_seconds_total"
)

// serverCosts sets the hold's ticks, writes per tick and CPU from the mid
// and after scrapes (start and end of the hold).
//
// The ticks are the admission ticks the servers' issuers ran in the hold,
// summed over the servers: instances tick without a leader, each one
// every TICK, and each tick advances the room's tick id and is pushed by
// every instance's hub to its own streams, so with S servers a room ticks
// S times a TICK. (With one room on the servers, as the soak scripts set
// up, these are the tick ids the room advanced.) A server that does not
// count its ticks (the r3labs reference) ticks once a TickSeconds (1 s
// when unset): the hold's seconds over it. The tick ids the clients saw
// are not used: a many-process run's children hold over windows a little
// wider than the one the counters are read over.
func (r *Report) serverCosts(mid, after map[string]float64) {
	r.EventsWritten, r.WritesPerTick, r.CPUSeconds, r.CPUPercent, r.HoldTicks = 0, 0, 0, 0, 0
	_, r.EventsKnown = after[metricEvents]
	_, r.CPUKnown = after[metricCPU]
	_, r.HoldTicksCounted = after[metricTicks]
	if r.HoldSeconds <= 0 {
		return
	}
	r.HoldTicks = r.HoldSeconds / r.tickSeconds()
	if r.HoldTicksCounted {
		r.HoldTicks = after[metricTicks] - mid[metricTicks]
	}
	if r.EventsKnown && r.HoldTicks > 0 {
		r.EventsWritten = after[metricEvents] - mid[metricEvents]
		r.WritesPerTick = r.EventsWritten / r.HoldTicks
	}
	if r.CPUKnown {
		r.CPUSeconds = after[metricCPU] - mid[metricCPU]
		r.CPUPercent = 100 * r.CPUSeconds / r.HoldSeconds
	}
}

// tickSeconds is TickSeconds, or 1.
func (r Report) tickSeconds() float64 {
	if r.TickSeconds > 0 {
		return r.TickSeconds
	}
	return 1
}

// perVisitorCost sets the server CPU seconds per waiting visitor per
// second: the hold's CPU over its seconds and the soak's own streams.
func (r *Report) perVisitorCost() {
	r.CPUPerVisitor = 0
	if r.CPUKnown && r.HoldSeconds > 0 && r.Connected > 0 {
		r.CPUPerVisitor = r.CPUSeconds / r.HoldSeconds / float64(r.Connected)
	}
}

// receivedPerTick is the client side's view of the writes per tick: the
// events with a tick id timed during the hold over the distinct tick ids
// among them.
func (r Report) receivedPerTick() float64 {
	if len(r.Lat) == 0 {
		return 0
	}
	n := 0
	for _, ls := range r.Lat {
		n += len(ls)
	}
	return float64(n) / float64(len(r.Lat))
}

// costLines formats the writes per tick, the CPU, and each server's share.
func (r Report) costLines(b *strings.Builder) {
	ticks := fmt.Sprintf("%.1f s over a %v tick", r.HoldSeconds, time.Duration(r.tickSeconds()*float64(time.Second)))
	if r.HoldTicksCounted {
		ticks = fmt.Sprintf("the servers' issuers in %.1f s, %.2f a second", r.HoldSeconds, r.HoldTicks/max(r.HoldSeconds, 1e-9))
	}
	if r.streams() { // polling writes no events
		if r.EventsKnown {
			fmt.Fprintf(b, "server writes per tick: %.1f SSE events (%.0f written over %.0f ticks: %s)", r.WritesPerTick,
				r.EventsWritten, r.HoldTicks, ticks)
		} else {
			fmt.Fprintf(b, "server writes per tick: not exported (no %s)", metricEvents)
		}
		fmt.Fprintf(b, "; received per tick id seen: %.1f\n", r.receivedPerTick())
	}
	if r.CPUKnown {
		fmt.Fprintf(b, "server CPU: %.2f s over %.1f s = %.1f%% of one core; %.2f µs of CPU per waiting visitor per second (%d streams)\n",
			r.CPUSeconds, r.HoldSeconds, r.CPUPercent, r.CPUPerVisitor*1e6, r.Connected)
	}
	for i, s := range r.Servers {
		fmt.Fprintf(b, "server %d %s: RSS %+.1f MiB, %.0f streams, %.1f Redis commands/s, %.1f writes per tick, CPU %.1f%% of one core\n",
			i, s.URL, s.RSSDelta/(1<<20), s.Streams, s.CommandsPerSec, s.WritesPerTick, s.CPUPercent)
	}
}
