package share

import "time"

// SetClock makes l read the time from now.
func SetClock(l *Links, now func() time.Time) { l.now = now }
