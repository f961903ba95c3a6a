package issuer

import "time"

// A room that is quiet after a tick sleeps (see queue.Admission's
// Asleep): the loop leaves it until its wakeAt, until something wakes it
// (Wake, WakeAll), or for SleepCheck at most.

// SleepCheck bounds how long a loop leaves a sleeping room: it ticks it
// again at least this often, though nothing woke it, in case a wake was
// missed. A sleeping room answers that tick with one read.
const SleepCheck = 10 * time.Second

// Wake has the loop tick room again from its next tick: something woke it
// (see queue.Admission's Asleep). It never blocks.
func (l *Loop) Wake(room string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.asleep, room)
	if len(l.woken) >= maxWoken {
		clear(l.woken)
		l.wokenAll = l.clk.Now()
	}
	l.woken[room] = l.clk.Now()
}

// WakeAll has the loop tick every room again from its next tick: wakes may
// have been missed (the subscription that carries them was down).
func (l *Loop) WakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	clear(l.asleep)
	clear(l.woken)
	l.wokenAll = l.clk.Now()
}

// maxWoken bounds the wakes a loop remembers: past it, it forgets them
// all and counts every room woken then.
const maxWoken = 100000

// sleep has the loop leave room for wakeIn (none: 0), or SleepCheck if
// sooner, unless it heard room woken since the tick that found it asleep
// began (at start): that wake came after the tick's answer was made.
func (l *Loop) sleep(room string, start time.Time, wakeIn time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.woken[room]; ok && !w.Before(start) || !l.wokenAll.Before(start) {
		return
	}
	if wakeIn <= 0 || wakeIn > SleepCheck {
		wakeIn = SleepCheck
	}
	l.asleep[room] = l.clk.Now().Add(wakeIn)
}

// sleeping reports whether the loop leaves room at now.
func (l *Loop) sleeping(room string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.asleep[room]
	if ok && !now.Before(until) {
		delete(l.asleep, room)
		return false
	}
	return ok
}

// forgetUnlisted drops what the loop keeps of sleeping rooms that are no
// longer listed (deleted while asleep, never ticked again to find out).
func (l *Loop) forgetUnlisted(rooms []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.asleep) <= len(rooms) {
		return
	}
	listed := make(map[string]bool, len(rooms))
	for _, r := range rooms {
		listed[r] = true
	}
	for r := range l.asleep {
		if !listed[r] {
			delete(l.asleep, r)
		}
	}
}
