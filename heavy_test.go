package main

import "testing"

// heavyTests bounds the root package's heavy tests that run at once: each
// keeps a Chromium rendering pages, or a drill's instances, nginx and load
// busy, in bursts: most of a heavy test's time is waiting (a page's
// countdown, a drill's outage), which the others' work overlaps. Two at
// a time (three, with the race detector and the other packages beside
// them, overloaded 2 cores: sign-ins and pages timed out), beside
// the whole-event test and two light ones. `make test` lets every
// test of the package start (-parallel 48); these bounds, not -parallel,
// decide how many run. The whole-event test takes no slot: it spends its
// minutes waiting on a buyer who is away.
var heavyTests = make(chan struct{}, 2)

// lightTests bounds the other tests that start a server (in this process
// or as a child) and run beside the heavy ones: two at a time.
var lightTests = make(chan struct{}, 2)

// heavy runs t beside the others, in a slot of heavyTests. It is a test's
// first call. The full drills (-drill.full, `make drill`) measure at full
// scale, each alone: there, heavy tests run one after the other.
func heavy(t *testing.T) {
	t.Helper()
	if *drillFull {
		return
	}
	inSlot(t, heavyTests)
}

// light runs t beside the others, in a slot of lightTests. It is a test's
// first call.
func light(t *testing.T) {
	t.Helper()
	inSlot(t, lightTests)
}

// inSlot marks t parallel and waits for a slot of slots, held until t and
// its cleanups (its browser, servers and processes) are done.
func inSlot(t *testing.T, slots chan struct{}) {
	t.Helper()
	t.Parallel()
	slots <- struct{}{}
	t.Cleanup(func() { <-slots })
}
