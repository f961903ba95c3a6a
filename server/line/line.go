// Package line holds the rule for the name of a room's line, which the
// access codes that admit to a line and the shops' identities that name
// one share.
package line

// MaxNameLen bounds a line's name.
const MaxNameLen = 32

// ValidName reports whether name may name a line: up to MaxNameLen
// letters, digits, '-' and '_'. The empty name is the line of a room
// that has one.
func ValidName(name string) bool {
	if len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
