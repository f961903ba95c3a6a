package request

// LastEventID reads the Last-Event-ID header that EventSource sends on
// reconnect: the room's tick number of the last event the client saw. It
// accepts 1 to 18 ASCII digits and returns 0 for anything else, which is
// treated as "no id".
func LastEventID(s string) int64 {
	if len(s) == 0 || len(s) > 18 {
		return 0
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
