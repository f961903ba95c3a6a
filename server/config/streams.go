package config

import "syscall"

// Bounds of the derived SSE_MAX_STREAMS: the buyers' streams take
// streamsShare of the process's open-file limit, less the widgets' streams
// and streamsReserve files (listeners, Redis and database pools, logs,
// admin and order requests); never fewer than MinSSEMaxStreams.
const (
	streamsShare     = 0.8
	streamsReserve   = 512
	MinSSEMaxStreams = 100
)

// StreamsFor is SSE_MAX_STREAMS's default for a process that may open
// files files and keeps widgets of them for the widgets' streams.
func StreamsFor(files uint64, widgets int) int {
	n := int64(float64(min(files, 1<<31))*streamsShare) - int64(widgets) - streamsReserve
	return int(max(n, MinSSEMaxStreams))
}

// fileLimit is the process's soft limit of open files (Go raises it to
// the hard limit at start); 1024 when it cannot be read.
func fileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur == 0 {
		return 1024
	}
	return l.Cur
}
