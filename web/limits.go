package web

import (
	"net/http"
	"sync"
	"time"
	"waitingroom/web/request"

	"golang.org/x/time/rate"
)

// ipLimiter is a token bucket per client IP, for enters. Buckets idle for a
// minute are forgotten, so the map stays as small as the live crowd.
type ipLimiter struct {
	perSecond rate.Limit
	burst     int
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*ipBucket
	swept   time.Time
}

type ipBucket struct {
	lim  *rate.Limiter
	used time.Time
}

// newIPLimiter returns a limiter of perSecond with burst per client, on
// the clock now (nil is time.Now).
func newIPLimiter(perSecond float64, burst int, now func() time.Time) *ipLimiter {
	if now == nil {
		now = time.Now
	}
	return &ipLimiter{perSecond: rate.Limit(perSecond), burst: burst, now: now, buckets: map[string]*ipBucket{}, swept: now()}
}

// allow takes one token from ip's bucket; false means the caller should
// answer 429.
func (l *ipLimiter) allow(ip string) bool {
	return l.bucket(ip).AllowN(l.now(), 1)
}

// take is allow that can give the token back: giveBack, when ok,
// returns it to ip's bucket (for a request that turned out to make
// nothing). The token is taken at once, so concurrent requests never
// pass a bucket that holds fewer tokens than they are.
func (l *ipLimiter) take(ip string) (ok bool, giveBack func()) {
	lim := l.bucket(ip)
	if !lim.AllowN(l.now(), 1) {
		return false, nil
	}
	// A negative event count puts a token back; the bucket's next
	// refill caps it at the burst again.
	return true, func() { lim.AllowN(l.now(), -1) }
}

// bucket returns ip's bucket, forgetting buckets idle for a minute.
func (l *ipLimiter) bucket(ip string) *rate.Limiter {
	now := l.now()
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

// clientKey returns the client network of a request, which every per-client
// cap counts as one client.
func (s *Server) clientKey(r *http.Request) string {
	return request.ClientNet(request.ClientIP(r, s.trusted), s.v6Prefix)
}
