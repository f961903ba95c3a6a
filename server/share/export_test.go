package share

import "time"

// SetClock makes l read the time from now.
func SetClock(l *Links, now func() time.Time) { l.now = now }

// SetStoreClock makes st read the time from now.
func SetStoreClock(st *Store, now func() time.Time) { st.now = now }
