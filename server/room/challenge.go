package room

// The challenge modes: whether a join that creates a new place in the room
// (a ticket or a pre-queue entry) needs a proof of work.
const (
	// ChallengeOff asks no proof.
	ChallengeOff = "off"
	// ChallengeAuto asks a proof whose cost follows the join rate of the
	// client's network and of the room.
	ChallengeAuto = "auto"
	// ChallengeAlways is ChallengeAuto with a higher floor.
	ChallengeAlways = "always"
)

// CanonicalChallenge returns c, with "" (a room that follows the server's
// default) read as ChallengeOff: for callers that know no default.
func CanonicalChallenge(c string) string {
	if c == "" {
		return ChallengeOff
	}
	return c
}

// ValidChallenge reports whether c is one of the challenge modes.
func ValidChallenge(c string) bool {
	switch c {
	case ChallengeOff, ChallengeAuto, ChallengeAlways:
		return true
	}
	return false
}

func validateChallenge(c string) error {
	if !ValidChallenge(CanonicalChallenge(c)) {
		return fieldError("challenge", "challenge must be %q, %q or %q", ChallengeOff, ChallengeAuto, ChallengeAlways)
	}
	return nil
}
