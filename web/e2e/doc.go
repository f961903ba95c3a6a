// Package e2e holds the tests that drive the whole binary: the browser
// tests, the failure drills, and the serve, admin and migrate commands
// against real Redis, PostgreSQL, Chromium and nginx. It has no code
// outside its tests.
package e2e
