package redisconn

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/redis/go-redis/v9"
)

// Unreachable reports whether err says that Redis could not be reached or
// cannot serve yet: a refused or broken connection, a timeout, an empty
// pool, or a server that is still loading its data or has no master. Such
// an error passes once Redis is back. After a run of failed dials the
// client keeps answering the last dial error, without dialing, until its
// background probe (once a second) connects again: for up to a second
// after Redis is back, a command may still fail this way.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, redis.ErrPoolTimeout),
		redis.IsLoadingError(err), redis.IsMasterDownError(err),
		redis.IsClusterDownError(err), redis.IsTryAgainError(err):
		return true
	}
	return false
}
