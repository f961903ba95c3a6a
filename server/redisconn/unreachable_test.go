package redisconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// replyError is an error reply of the server, as go-redis returns one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

func TestUnreachable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.OpError{Op: "connect", Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"refused", refused, true},
		{"refused, wrapped", fmt.Errorf("queue: enter r: %w", refused), true},
		{"deadline", context.DeadlineExceeded, true},
		{"connection cut", io.EOF, true},
		{"cut mid-reply", io.ErrUnexpectedEOF, true},
		{"pool timeout", redis.ErrPoolTimeout, true},
		{"loading", replyError("LOADING Redis is loading the dataset in memory"), true},
		{"master down", replyError("MASTERDOWN Link with MASTER is down"), true},
		{"cluster down", replyError("CLUSTERDOWN The cluster is down"), true},
		{"client left", context.Canceled, false},
		{"client left, wrapped", fmt.Errorf("queue: enter r: %w", context.Canceled), false},
		{"script error", replyError("ERR wrong number of arguments"), false},
		{"no such room", room.ErrNotFound, false},
		{"nil reply", redis.Nil, false},
		{"other", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unreachable(tt.err); got != tt.want {
				t.Fatalf("Unreachable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
