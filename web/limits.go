package web

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ipLimiter is a token bucket per client IP, for enters. Buckets idle for a
// minute are forgotten, so the map stays as small as the live crowd.
type ipLimiter struct {
	perSecond rate.Limit
	burst     int

	mu      sync.Mutex
	buckets map[string]*ipBucket
	swept   time.Time
}

type ipBucket struct {
	lim  *rate.Limiter
	used time.Time
}

func newIPLimiter(perSecond float64, burst int) *ipLimiter {
	return &ipLimiter{perSecond: rate.Limit(perSecond), burst: burst, buckets: map[string]*ipBucket{}, swept: time.Now()}
}

// allow takes one token from ip's bucket; false means the caller should
// answer 429.
func (l *ipLimiter) allow(ip string) bool {
	return l.bucket(ip).AllowN(time.Now(), 1)
}

// peek reports whether ip's bucket holds a token without taking it; spend
// takes one later, once the request turned out to make something.
func (l *ipLimiter) peek(ip string) (ok bool, spend func()) {
	lim := l.bucket(ip)
	return lim.TokensAt(time.Now()) >= 1, func() { lim.AllowN(time.Now(), 1) }
}

// bucket returns ip's bucket, forgetting buckets idle for a minute.
func (l *ipLimiter) bucket(ip string) *rate.Limiter {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for k, b := range l.buckets {
			if now.Sub(b.used) > time.Minute {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b := l.buckets[ip]
	if b == nil {
		b = &ipBucket{lim: rate.NewLimiter(l.perSecond, l.burst)}
		l.buckets[ip] = b
	}
	b.used = now
	return b.lim
}
