package console

import "time"

// The hooks below let the whole server's tests, in package web, drive the
// console's clock, its password check slots and its dashboard streams.
// Nothing else calls them; each must be called before the console serves.

// SetClock makes now the sign-in guard's clock, in place of the console's
// (Deps.Clock).
func (s *Console) SetClock(now func() time.Time) { s.signins.now = now }

// HashSlots returns the password check slots: all checks, and untrusted
// ones. A value sent takes a slot.
func (s *Console) HashSlots() (all, untrusted chan struct{}) { return s.hashing, s.untrustedHashing }

// SetHashSlots replaces the password check slots with n, of which
// untrusted for untrusted checks.
func (s *Console) SetHashSlots(n, untrusted int) {
	s.hashing, s.untrustedHashing = make(chan struct{}, n), make(chan struct{}, untrusted)
}

// DashboardStreams is how many dashboard streams are open.
func (s *Console) DashboardStreams() int64 { return s.dash.streams.Load() }

// SetDashboardTimes sets the bound of each stream write and how often a
// stream checks its session.
func (s *Console) SetDashboardTimes(write, sessionCheck time.Duration) {
	s.dash.writeTimeout, s.dash.sessionCheck = write, sessionCheck
}

// SetLive makes live the dashboard's per-second record.
func (s *Console) SetLive(live LiveStats) { s.dash.live = live }
