package main

import "testing"

// heavy marks t, a browser test, parallel: the browser tests run side by
// side after the package's sequential tests (the drills and the tests of
// the binary's commands), at most -parallel at a time (`make test`: 4),
// beside the whole-event test. Most of a browser test's time is waiting
// (a page's countdown, the server's tick), which the others overlap.
// Drills stay sequential: their outages and loads would starve the pages'
// waits on 2 cores (a run with drills and browsers side by side, three at
// a time, timed out sign-ins and pages). The full drills (-drill.full,
// `make drill`) run each browser test alone too.
func heavy(t *testing.T) {
	t.Helper()
	if *drillFull {
		return
	}
	t.Parallel()
}
